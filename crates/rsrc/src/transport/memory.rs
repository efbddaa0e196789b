//! [`serve_in_memory`]: a server on an in-memory pipe, for tests and embedding.
//!
//! Invariant: the pipe's task ends when the client's end is dropped.

use tokio::io::DuplexStream;

use super::stream::{StreamConfig, serve_stream};
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
