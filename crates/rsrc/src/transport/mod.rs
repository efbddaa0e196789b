//! Transports: newline-delimited JSON over any byte stream ([`serve_stream`]), standard
//! input and output ([`serve_stdio`]), an in-memory pipe for tests and embedding
//! ([`serve_in_memory`]); Streamable HTTP is the `rsrc-http` crate's.
//!
//! Invariant: a transport only moves bytes; every protocol decision is the server's. A
//! reply holding a large text is written the same way by every transport: a piece at a
//! time as its output drains ([`STREAM_FROM`], [`PIECE`]).
//!
//! This file is a facade: `stream.rs` serves a byte stream, `stdio.rs` standard input
//! and output, `memory.rs` an in-memory pipe, `lines.rs` reads lines, `pieces.rs` says
//! how large replies are written.

mod lines;
mod memory;
mod pieces;
mod stdio;
mod stream;

pub use lines::{Frame, LineReader, PREFIX_KEEP};
pub use memory::serve_in_memory;
pub use pieces::{PIECE, STREAM_FROM};
pub use stdio::{StdinStream, StdoutStream, serve_stdio, stdio_streams};
pub use stream::{StreamConfig, serve_stream};
