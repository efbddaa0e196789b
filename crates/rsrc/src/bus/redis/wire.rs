//! The messages on the bus's channel: one JSON object per event, tagged with the sending
//! instance's id.
//!
//! Invariants:
//! - Exactly one of an event's members is set; a message with none, or with more than
//!   one, or without its sender, or larger than [`MAX_MESSAGE`], is not one of ours and
//!   decodes to nothing.
//! - No message sent is larger than [`MAX_MESSAGE`]: an event that would be is sent as
//!   the resync of what it could have changed (a prefix of its URI, cut on a character
//!   boundary; everything for a signal).

use serde::{Deserialize, Serialize};

use crate::bus::BusEvent;

/// What the publishing task sends.
#[derive(Debug)]
pub(super) enum Out {
    Event(BusEvent),
    /// A shared session changed.
    Session(String),
    /// This instance's heartbeat: it expects to hear it back.
    Beat,
}

/// An event on the wire.
#[derive(Serialize, Deserialize)]
struct Wire {
    from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    list: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resync: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    beat: bool,
}

/// The largest message read from the channel (and sent: a larger event is sent as a
/// resync).
pub(super) const MAX_MESSAGE: usize = 64 * 1024;
/// The longest URI prefix a resync replacing an oversized event carries.
const MAX_PREFIX: usize = 1024;
fn wire(from: &str, out: &Out) -> String {
    let mut w = Wire {
        from: from.to_owned(),
        updated: None,
        list: false,
        signal: None,
        resync: None,
        session: None,
        beat: false,
    };
    match out {
        Out::Event(BusEvent::Updated(uri)) => w.updated = Some(uri.clone()),
        Out::Event(BusEvent::ListChanged) => w.list = true,
        Out::Event(BusEvent::Signal(topic)) => w.signal = Some(topic.clone()),
        Out::Event(BusEvent::Resync(prefix)) => w.resync = Some(prefix.clone()),
        Out::Session(id) => w.session = Some(id.clone()),
        Out::Beat => w.beat = true,
    }
    serde_json::to_string(&w).unwrap_or_default()
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The message for `out`; one the receivers would refuse as too large becomes the
/// resync of what it could have changed (a prefix of its URI; everything for a signal).
pub(super) fn encode(from: &str, out: &Out) -> String {
    let text = wire(from, out);
    if text.len() <= MAX_MESSAGE {
        return text;
    }
    let prefix = match out {
        Out::Event(BusEvent::Updated(uri) | BusEvent::Resync(uri)) => cut(uri, MAX_PREFIX),
        _ => "",
    };
    wire(from, &Out::Event(BusEvent::Resync(prefix.to_owned())))
}

/// The message in `payload` and who sent it; `None` for anything else.
pub(super) fn decode(payload: &[u8]) -> Option<(String, Out)> {
    if payload.len() > MAX_MESSAGE {
        return None;
    }
    let w: Wire = serde_json::from_slice(payload).ok()?;
    let out = match (w.updated, w.list, w.signal, w.resync, w.session, w.beat) {
        (Some(uri), false, None, None, None, false) => Out::Event(BusEvent::Updated(uri)),
        (None, true, None, None, None, false) => Out::Event(BusEvent::ListChanged),
        (None, false, Some(topic), None, None, false) => Out::Event(BusEvent::Signal(topic)),
        (None, false, None, Some(prefix), None, false) => Out::Event(BusEvent::Resync(prefix)),
        (None, false, None, None, Some(id), false) => Out::Session(id),
        (None, false, None, None, None, true) => Out::Beat,
        _ => return None,
    };
    Some((w.from, out))
}

#[cfg(test)]
mod tests {
    use super::{BusEvent, MAX_MESSAGE, Out, decode, encode};

    #[test]
    fn events_round_trip_and_anything_else_is_skipped() {
        for event in [
            BusEvent::Updated("file:///a%20b".into()),
            BusEvent::ListChanged,
            BusEvent::Signal("db://shop".into()),
            BusEvent::Resync(String::new()),
        ] {
            let wire = encode("i1", &Out::Event(event.clone()));
            match decode(wire.as_bytes()) {
                Some((from, Out::Event(got))) => assert_eq!((from.as_str(), got), ("i1", event)),
                other => panic!("{other:?}"),
            }
        }
        let wire = encode("i2", &Out::Session("abc".into()));
        assert!(
            matches!(decode(wire.as_bytes()), Some((f, Out::Session(id))) if f == "i2" && id == "abc")
        );
        let wire = encode("i3", &Out::Beat);
        assert!(matches!(decode(wire.as_bytes()), Some((f, Out::Beat)) if f == "i3"));
        for junk in [
            &b""[..],
            b"null",
            b"{\"from\":\"x\"}",
            b"{\"from\":\"x\",\"list\":true,\"updated\":\"u\"}",
            b"{\"from\":\"x\",\"beat\":true,\"updated\":\"u\"}",
            b"{\"updated\":\"u\"}",
            &[b'"'; 70_000],
        ] {
            assert!(decode(junk).is_none());
        }
    }

    #[test]
    fn an_event_too_large_for_the_receivers_is_sent_as_a_resync_of_its_prefix() {
        // Multi-byte characters, so that the cut has to find a boundary.
        let uri = format!("file:///big/{}", "é".repeat(MAX_MESSAGE));
        let wire = encode("i1", &Out::Event(BusEvent::Updated(uri.clone())));
        assert!(wire.len() <= MAX_MESSAGE);
        match decode(wire.as_bytes()) {
            Some((_, Out::Event(BusEvent::Resync(prefix)))) => {
                assert!(prefix.starts_with("file:///big/") && uri.starts_with(&prefix));
            }
            other => panic!("{other:?}"),
        }
        let wire = encode("i1", &Out::Event(BusEvent::Signal("s".repeat(MAX_MESSAGE))));
        assert!(matches!(
            decode(wire.as_bytes()),
            Some((_, Out::Event(BusEvent::Resync(p)))) if p.is_empty()
        ));
    }
}
