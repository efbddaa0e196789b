//! Transports: newline-delimited JSON over any byte stream ([`serve_stream`]), standard
//! input and output ([`serve_stdio`]), an in-memory pipe for tests and embedding
//! ([`serve_in_memory`]), and Streamable HTTP (`http`, with the `http` feature).
//!
//! Invariant: a transport only moves bytes; every protocol decision is the server's.

#[cfg(feature = "http")]
#[allow(
    clippy::result_large_err,
    reason = "a refused request is answered with its response, built where it is refused"
)]
pub mod http;
mod lines;
mod stdio;
mod stream;

pub use lines::{Frame, LineReader, PREFIX_KEEP};
pub use stdio::serve_stdio;
pub use stream::{StreamConfig, serve_stream};

use tokio::io::DuplexStream;

use crate::server::Server;

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
