//! The numbering of a legacy stream's events: the id `{stream}-{seq}` an event carries,
//! the primed event a stream opens with, and reading a `Last-Event-ID` back.
//!
//! Invariant: event numbers never overflow: a `Last-Event-ID` beyond [`MAX_SEQ`] is
//! malformed.

use rsrc_protocol::http::sse::opening;

/// What opens event `seq` of numbered stream `stream`, up to its data.
pub(crate) fn numbered(stream: u64, seq: u64) -> String {
    opening(&format!("{stream}-{seq}"))
}

/// An event with id `{stream}-{seq}` and empty data: where a client may resume from.
pub(crate) fn primed(stream: u64, seq: u64) -> bytes::Bytes {
    let mut event = numbered(stream, seq);
    event.push('\n');
    event.push('\n');
    event.into()
}

/// The largest event number a `Last-Event-ID` may name (2^53: what every client can
/// hold as a number); beyond, it is malformed rather than numbered past.
pub(crate) const MAX_SEQ: u64 = 1 << 53;

/// Parses a `Last-Event-ID` of the form `{stream}-{seq}`.
pub(crate) fn parse_event_id(v: &str) -> Option<(u64, u64)> {
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
