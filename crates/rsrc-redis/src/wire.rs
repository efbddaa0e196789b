//! The messages on the bus's channel: one JSON object per event, tagged with the sending
//! instance's id, the time it was sent and (events) its sequence number, and
//! authenticated: `TAG.JSON`, the keyring's tagged text (`rsrc::keyring`) bound to the
//! channel's name, under the deployment's bus keys.
//!
//! Invariants:
//! - A message whose tag does not verify under any bus key, or that is not one of ours
//!   (too large, not JSON, no member or more than one, no sender) decodes to a
//!   [`Reject`]: nothing of it is believed. The channel's name is authenticated too, so a
//!   message cannot be sent again into another namespace.
//! - No message sent is larger than [`MAX_MESSAGE`]: an event that would be is sent as
//!   the resync of what it could have changed (a prefix of its URI, cut on a character
//!   boundary; everything for a signal).
//! - Freshness (the time sent, each sender's sequence) is checked by the receiver
//!   ([`Heard`]): a message older than [`MAX_AGE`], or an event not newer than the last
//!   one heard from its sender, is stale or heard before (someone sending a genuine
//!   message again), and refused.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rsrc::bus::BusEvent;
use rsrc::keyring::Keyring;
use serde::{Deserialize, Serialize};

/// What the publishing task sends.
#[derive(Debug)]
pub(crate) enum Out {
    Event(BusEvent),
    /// A shared session changed (its name in the store, never its id).
    Session(String),
    /// This instance's heartbeat: it expects to hear it back.
    Beat,
}

/// An event on the wire.
#[derive(Serialize, Deserialize)]
struct Wire {
    from: String,
    /// Milliseconds since the Unix epoch, when it was sent.
    ts: u64,
    /// The sender's sequence number (events and session changes; not heartbeats, which
    /// travel on another connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
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
pub(crate) const MAX_MESSAGE: usize = 64 * 1024;
/// The longest URI prefix a resync replacing an oversized event carries.
const MAX_PREFIX: usize = 1024;
/// The oldest (or most in the future) a message may be, by the receiver's clock:
/// instances' clocks must agree within it.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(300);

/// Why a message was not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Its tag does not verify under any bus key.
    Forged,
    /// Not one of our messages (too large, not JSON, not one event).
    Malformed,
    /// Older than [`MAX_AGE`], or already heard.
    Stale,
}

/// A message as received.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) from: String,
    pub(crate) ts: u64,
    pub(crate) seq: Option<u64>,
    pub(crate) out: Out,
}

/// The channel of one deployment: its name, and the keys its messages are tagged with.
#[derive(Debug)]
pub(crate) struct Channel {
    pub(crate) name: String,
    keys: Keyring,
}

/// Milliseconds since the Unix epoch now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Channel {
    pub(crate) fn new(name: String, keys: Keyring) -> Self {
        Channel { name, keys }
    }

    fn text(&self, from: &str, seq: Option<u64>, ts: u64, out: &Out) -> String {
        let mut w = Wire {
            from: from.to_owned(),
            ts,
            seq,
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
            // A kind of event this bus does not carry: the others look at everything.
            Out::Event(_) => w.resync = Some(String::new()),
            Out::Session(name) => w.session = Some(name.clone()),
            Out::Beat => w.beat = true,
        }
        let json = serde_json::to_string(&w).unwrap_or_default();
        self.keys.seal_text('.', &[self.name.as_bytes()], &json)
    }

    /// The message for `out`, sent by `from` now (with its sequence number, for events);
    /// one the receivers would refuse as too large becomes the resync of what it could
    /// have changed (a prefix of its URI; everything for a signal).
    pub(crate) fn encode(&self, from: &str, seq: Option<u64>, out: &Out) -> String {
        let ts = now_ms();
        let text = self.text(from, seq, ts, out);
        if text.len() <= MAX_MESSAGE {
            return text;
        }
        let prefix = match out {
            Out::Event(BusEvent::Updated(uri) | BusEvent::Resync(uri)) => cut(uri, MAX_PREFIX),
            _ => "",
        };
        self.text(
            from,
            seq,
            ts,
            &Out::Event(BusEvent::Resync(prefix.to_owned())),
        )
    }

    /// The message in `payload`, if it is an authentic one of ours.
    pub(crate) fn decode(&self, payload: &[u8]) -> Result<Received, Reject> {
        if payload.len() > MAX_MESSAGE {
            return Err(Reject::Malformed);
        }
        let json = self
            .keys
            .open_bytes('.', &[self.name.as_bytes()], payload)
            .ok_or(Reject::Forged)?;
        let w: Wire = serde_json::from_slice(json).map_err(|_| Reject::Malformed)?;
        let out = match (w.updated, w.list, w.signal, w.resync, w.session, w.beat) {
            (Some(uri), false, None, None, None, false) => Out::Event(BusEvent::Updated(uri)),
            (None, true, None, None, None, false) => Out::Event(BusEvent::ListChanged),
            (None, false, Some(topic), None, None, false) => Out::Event(BusEvent::Signal(topic)),
            (None, false, None, Some(prefix), None, false) => Out::Event(BusEvent::Resync(prefix)),
            (None, false, None, None, Some(name), false) => Out::Session(name),
            (None, false, None, None, None, true) => Out::Beat,
            _ => return Err(Reject::Malformed),
        };
        Ok(Received {
            from: w.from,
            ts: w.ts,
            seq: w.seq,
            out,
        })
    }
}

/// The most senders whose sequence numbers are remembered (only authentic messages add
/// one: instances of the deployment).
const MAX_SENDERS: usize = 4096;

/// What each sender last sent, to refuse a message heard before.
#[derive(Debug, Default)]
pub(crate) struct Heard {
    last: HashMap<String, (u64, Instant)>,
}

impl Heard {
    /// Whether `msg`, received at `now_ms`, is fresh: sent within [`MAX_AGE`] of now and,
    /// if numbered, newer than anything heard from its sender.
    pub(crate) fn fresh(&mut self, msg: &Received, now_ms: u64) -> bool {
        let age = u64::try_from(MAX_AGE.as_millis()).unwrap_or(u64::MAX);
        if now_ms.abs_diff(msg.ts) > age {
            return false;
        }
        let Some(seq) = msg.seq else {
            return true;
        };
        let now = Instant::now();
        if let Some((last, seen)) = self.last.get_mut(&msg.from) {
            if seq <= *last {
                return false;
            }
            *last = seq;
            *seen = now;
            return true;
        }
        if self.last.len() >= MAX_SENDERS {
            // Senders not heard within the age bound cannot send anything fresh again.
            self.last
                .retain(|_, (_, seen)| now.duration_since(*seen) < MAX_AGE);
            if self.last.len() >= MAX_SENDERS {
                return false;
            }
        }
        self.last.insert(msg.from.clone(), (seq, now));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(keys: &[[u8; 32]]) -> Channel {
        Channel::new("rsrc:changes".into(), Keyring::new(keys).unwrap())
    }

    #[test]
    fn events_round_trip_and_anything_else_is_refused() {
        let c = channel(&[[1; 32]]);
        for event in [
            BusEvent::Updated("file:///a%20b".into()),
            BusEvent::ListChanged,
            BusEvent::Signal("db://shop".into()),
            BusEvent::Resync(String::new()),
        ] {
            let wire = c.encode("i1", Some(7), &Out::Event(event.clone()));
            match c.decode(wire.as_bytes()) {
                Ok(Received {
                    from,
                    seq: Some(7),
                    out: Out::Event(got),
                    ..
                }) => assert_eq!((from.as_str(), got), ("i1", event)),
                other => panic!("{other:?}"),
            }
        }
        let wire = c.encode("i2", Some(1), &Out::Session("abc".into()));
        assert!(
            matches!(c.decode(wire.as_bytes()), Ok(Received { from, out: Out::Session(n), .. }) if from == "i2" && n == "abc")
        );
        let wire = c.encode("i3", None, &Out::Beat);
        assert!(matches!(
            c.decode(wire.as_bytes()),
            Ok(Received {
                out: Out::Beat,
                seq: None,
                ..
            })
        ));
        for junk in [
            &b""[..],
            b"null",
            b"{\"from\":\"x\",\"ts\":1,\"updated\":\"u\"}",
            &[b'"'; 70_000],
        ] {
            assert!(c.decode(junk).is_err());
        }
    }

    #[test]
    fn a_message_without_the_keys_tag_is_forged() {
        let c = channel(&[[1; 32]]);
        let json = format!(
            "{{\"from\":\"x\",\"ts\":{},\"updated\":\"file:///a\"}}",
            now_ms()
        );
        assert_eq!(c.decode(json.as_bytes()).unwrap_err(), Reject::Forged);
        // Tagged by another deployment's key, or for another namespace.
        let other = channel(&[[2; 32]]).encode("x", Some(1), &Out::Event(BusEvent::ListChanged));
        assert_eq!(c.decode(other.as_bytes()).unwrap_err(), Reject::Forged);
        let elsewhere = Channel::new("other:changes".into(), Keyring::new(&[[1; 32]]).unwrap())
            .encode("x", Some(1), &Out::Event(BusEvent::ListChanged));
        assert_eq!(c.decode(elsewhere.as_bytes()).unwrap_err(), Reject::Forged);
        // A tag moved onto other content.
        let good = c.encode("x", Some(1), &Out::Event(BusEvent::ListChanged));
        let (tag, _) = good.split_once('.').unwrap();
        let moved = format!("{tag}.{{\"from\":\"x\",\"ts\":1,\"resync\":\"\"}}");
        assert_eq!(c.decode(moved.as_bytes()).unwrap_err(), Reject::Forged);
        // A rotated ring opens what the old key tagged.
        let rotated = channel(&[[3; 32], [1; 32]]);
        assert!(rotated.decode(good.as_bytes()).is_ok());
    }

    #[test]
    fn stale_messages_and_ones_heard_before_are_not_fresh() {
        let c = channel(&[[1; 32]]);
        let mut heard = Heard::default();
        let now = now_ms();
        let msg = |seq| {
            c.decode(
                c.encode("i1", seq, &Out::Event(BusEvent::ListChanged))
                    .as_bytes(),
            )
            .unwrap()
        };
        assert!(heard.fresh(&msg(Some(5)), now));
        assert!(!heard.fresh(&msg(Some(5)), now), "the same message again");
        assert!(!heard.fresh(&msg(Some(4)), now), "an older one");
        assert!(heard.fresh(&msg(Some(9)), now));
        let age = u64::try_from(MAX_AGE.as_millis()).unwrap();
        assert!(!heard.fresh(&msg(Some(10)), now + age + 60_000), "too old");
        assert!(heard.fresh(&msg(None), now), "heartbeats are not numbered");
    }

    #[test]
    fn an_event_too_large_for_the_receivers_is_sent_as_a_resync_of_its_prefix() {
        let c = channel(&[[1; 32]]);
        // Multi-byte characters, so that the cut has to find a boundary.
        let uri = format!("file:///big/{}", "é".repeat(MAX_MESSAGE));
        let wire = c.encode("i1", Some(1), &Out::Event(BusEvent::Updated(uri.clone())));
        assert!(wire.len() <= MAX_MESSAGE);
        match c.decode(wire.as_bytes()) {
            Ok(Received {
                out: Out::Event(BusEvent::Resync(prefix)),
                ..
            }) => {
                assert!(prefix.starts_with("file:///big/") && uri.starts_with(&prefix));
            }
            other => panic!("{other:?}"),
        }
        let wire = c.encode(
            "i1",
            Some(2),
            &Out::Event(BusEvent::Signal("s".repeat(MAX_MESSAGE))),
        );
        assert!(matches!(
            c.decode(wire.as_bytes()),
            Ok(Received { out: Out::Event(BusEvent::Resync(p)), .. }) if p.is_empty()
        ));
    }
}
