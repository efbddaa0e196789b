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
//! This file holds the framing: an event is an optional `id:` line, one `data:` line
//! holding one JSON-RPC message, and a blank line; a comment line keeps an idle stream
//! open. Beside it, `log.rs` keeps a stream's events for replay within its bounds,
//! `reader.rs` follows a log for the one client reading it, and `mirror.rs` writes a
//! log's events to the session store.
//!
//! Invariants:
//! - An event carries exactly one whole message; nothing (a keep-alive comment, another
//!   event) is ever written inside one, even while a large reply in it is still being
//!   escaped a piece at a time.
//! - Event numbers never overflow: a `Last-Event-ID` beyond [`MAX_SEQ`] is malformed, and
//!   numbers read back from a store saturate.

mod log;
mod mirror;
mod reader;

pub(super) use log::{Budget, LogLimits, StreamLog};
pub(super) use mirror::Mirror;
pub(super) use reader::{Follow, follow};

/// What opens an event's data.
pub(super) const DATA: &[u8] = b"data: ";
/// What ends an event.
pub(super) const END: &[u8] = b"\n\n";

/// A comment line: keeps idle connections open through proxies; clients ignore it.
pub(super) const KEEP_ALIVE: &[u8] = b":\n\n";

/// What opens event `seq` of numbered stream `stream`, up to its data.
fn numbered(stream: u64, seq: u64) -> String {
    format!("id: {stream}-{seq}\ndata: ")
}

/// An event with id `{stream}-{seq}` and empty data: where a client may resume from.
fn primed(stream: u64, seq: u64) -> bytes::Bytes {
    let mut event = numbered(stream, seq);
    event.push('\n');
    event.push('\n');
    event.into()
}

/// The largest event number a `Last-Event-ID` may name (2^53: what every client can
/// hold as a number); beyond, it is malformed rather than numbered past.
pub(super) const MAX_SEQ: u64 = 1 << 53;

/// Parses a `Last-Event-ID` of the form `{stream}-{seq}`.
pub(super) fn parse_event_id(v: &str) -> Option<(u64, u64)> {
    let (s, q) = v.trim().split_once('-')?;
    let (stream, seq) = (s.parse().ok()?, q.parse().ok()?);
    (seq <= MAX_SEQ).then_some((stream, seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_parse() {
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id("3"), None);
        assert_eq!(parse_event_id("0-9007199254740992"), Some((0, MAX_SEQ)));
        assert_eq!(parse_event_id("0-9007199254740993"), None);
        assert_eq!(parse_event_id("0-18446744073709551615"), None);
    }

    #[test]
    fn a_primed_event_names_its_place_and_carries_no_data() {
        assert_eq!(&primed(3, 0)[..], b"id: 3-0\ndata: \n\n");
    }
}
