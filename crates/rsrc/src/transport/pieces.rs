//! How large replies are written, over every transport (this crate's and `rsrc-http`):
//! a reply holding a text of [`STREAM_FROM`] bytes or more is written [`PIECE`] bytes of
//! output at a time, as the output drains.
//!
//! Invariant: these two numbers are the only place the sizes are decided.

/// Replies holding a text of this size or more are written a piece at a time
/// ([`Streaming`](crate::server::Streaming)), over every transport (this crate's and
/// `rsrc-http`): the text is escaped into the output as it drains, never whole.
pub const STREAM_FROM: usize = 1024 * 1024;
/// How much output a streaming reply adds at a time.
pub const PIECE: usize = 256 * 1024;
