//! Transports: newline-delimited JSON over any byte stream ([`serve_stream`]), standard
//! input and output ([`serve_stdio`]), an in-memory pipe for tests and embedding
//! ([`serve_in_memory`]); Streamable HTTP is the `rsrc-http` crate's.
//!
//! Invariant: a transport only moves bytes; every protocol decision is the server's. A
//! reply holding a large text is written the same way by every transport: a piece at a
//! time as its output drains ([`STREAM_FROM`], [`PIECE`]).

mod lines;
mod stdio;
mod stream;

pub use lines::{Frame, LineReader, PREFIX_KEEP};
pub use stdio::{StdinStream, StdoutStream, serve_stdio, stdio_streams};
pub use stream::{StreamConfig, serve_stream};

use tokio::io::DuplexStream;

use crate::server::Server;

/// Replies holding a text of this size or more are written a piece at a time
/// ([`Streaming`](crate::server::Streaming)), over every transport (this crate's and
/// `rsrc-http`): the text is escaped into the output as it drains, never whole.
pub const STREAM_FROM: usize = 1024 * 1024;
/// How much output a streaming reply adds at a time.
pub const PIECE: usize = 256 * 1024;

/// Serves `server` on a fresh in-memory pipe, on a spawned task, and returns the client's
/// end of it. The task ends when the client's end is dropped.
pub fn serve_in_memory(server: &Server, config: StreamConfig) -> DuplexStream {
    let (client, server_end) = tokio::io::duplex(256 * 1024);
    let server = server.clone();
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_end);
        if let Err(e) = serve_stream(&server, reader, writer, &config).await {
            tracing::debug!(error = %e, "in-memory connection ended");
        }
    });
    client
}
