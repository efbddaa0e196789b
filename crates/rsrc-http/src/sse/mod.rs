//! Server-Sent Events: the framing of every event this endpoint sends, and (beside it) the
//! replayable logs behind the legacy (2025) streams.
//!
//! A legacy session numbers its streams (0 is the standalone GET stream, then one per
//! POST answered with SSE) and each stream numbers its events, so the event id
//! `"{stream}-{seq}"` names one event of one stream of that session. `Last-Event-ID` is
//! resolved within the session that presents it, so a client can only ever resume its
//! own streams, and only the stream the id belongs to. A 2026-07-28 stream is not
//! numbered: there is nothing to resume it from.
//!
//! An event is an optional `id:` line, one `data:` line holding one JSON-RPC message,
//! and a blank line; a comment line keeps an idle stream open (the framing is
//! `rsrc_protocol::http::sse`'s). `frame.rs` numbers events and reads a `Last-Event-ID`,
//! `log.rs` keeps a stream's events for replay within its bounds, `reader.rs` follows a
//! log for the one client reading it, and `mirror.rs` writes a log's events to the
//! session store. This file is a facade.
//!
//! Invariants:
//! - An event carries exactly one whole message; nothing (a keep-alive comment, another
//!   event) is ever written inside one, even while a large reply in it is still being
//!   escaped a piece at a time.
//! - Event numbers never overflow: a `Last-Event-ID` beyond `MAX_SEQ` is malformed, and
//!   numbers read back from a store saturate.

mod frame;
mod log;
mod mirror;
mod reader;

pub(crate) use frame::parse_event_id;
pub(crate) use log::{Budget, LogLimits, StreamLog};
pub(crate) use mirror::Mirror;
pub(crate) use reader::{Follow, follow};
