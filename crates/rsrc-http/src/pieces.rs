//! One message's bytes as the connection asks for them: a JSON response body, or an
//! event of an unnumbered SSE stream.
//!
//! A reply holding a text of [`STREAM_FROM`] bytes or more is written as it is over stdio
//! ([`Streaming`]): encoded with the text left out, then the text escaped [`PIECE`] bytes
//! of output at a time, each piece made only when hyper asks for the next one, so that
//! the text is never in memory twice and its escaping overlaps the client's reading.
//!
//! Invariants:
//! - The pieces, in order, are the bytes of the message's whole encoding, framed.
//! - The message holds what its reply held of the budget of content in flight until its
//!   last byte has been written or the body is dropped (a stalled reader is dropped by
//!   `stall.rs`): whole bytes own the reservation, a streaming message keeps it and hands
//!   it to its last piece.
//! - Nothing is copied to be framed: a notification goes out as three chunks around its
//!   bytes, a reply is encoded after its frame's opening.

use std::convert::Infallible;

use axum::body::Body;
use bytes::Bytes;

use rsrc::server::{Framed, Reply, Streaming, holding};
use rsrc::transport::{PIECE, STREAM_FROM};
use rsrc_protocol::http::sse::{DATA, END};

/// The bytes of one message, handed out a chunk at a time.
pub(crate) struct Pieces {
    /// Ready chunks, the next one last.
    ready: Vec<Bytes>,
    /// What follows them, made a piece at a time.
    streaming: Option<Streaming>,
}

impl Pieces {
    /// `json` (a notification) as an unnumbered event.
    pub(crate) fn event(json: Bytes) -> Pieces {
        Pieces {
            ready: vec![Bytes::from_static(END), json, Bytes::from_static(DATA)],
            streaming: None,
        }
    }

    /// `reply` as an unnumbered event.
    pub(crate) fn reply_event(reply: Reply) -> Pieces {
        Pieces::reply(reply, DATA, END)
    }

    /// `reply` as a JSON body.
    pub(crate) fn json(reply: Reply) -> Pieces {
        Pieces::reply(reply, b"", b"")
    }

    fn reply(reply: Reply, prefix: &[u8], suffix: &[u8]) -> Pieces {
        match reply.into_framed(prefix, suffix, STREAM_FROM) {
            Framed::Whole(bytes, hold) => Pieces {
                ready: vec![holding(bytes, hold)],
                streaming: None,
            },
            Framed::Streaming(streaming) => Pieces {
                ready: Vec::new(),
                streaming: Some(streaming),
            },
        }
    }

    /// The next chunk; `None` once the message is out.
    pub(crate) fn next(&mut self) -> Option<Bytes> {
        if let Some(chunk) = self.ready.pop() {
            return Some(chunk);
        }
        let mut streaming = self.streaming.take()?;
        let (piece, last) = streaming.next_piece(PIECE);
        if last {
            return Some(streaming.into_last_piece(piece));
        }
        self.streaming = Some(streaming);
        Some(Bytes::from(piece))
    }

    /// The message as a response body: whole (with its length), or made a piece at a
    /// time as hyper polls it.
    pub(crate) fn into_body(mut self) -> Body {
        if self.streaming.is_none() && self.ready.len() == 1 {
            return Body::from(self.ready.pop().unwrap_or_default());
        }
        let pieces = std::iter::from_fn(move || self.next().map(Ok::<_, Infallible>));
        Body::from_stream(futures_util::stream::iter(pieces))
    }
}
