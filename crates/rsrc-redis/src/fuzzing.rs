//! The checks the fuzz targets `bus_message` and `session_record` run
//! (`fuzz/fuzz_targets/`), and the replay of their corpora (`tests/fuzz_corpus.rs`): each
//! takes arbitrary bytes, runs a reader that faces what anyone who can write to Redis
//! may write, and panics only when one of the invariants it checks breaks. Only with
//! the `fuzzing` feature: never in a production build. Not part of the API.
//!
//! Invariant checked everywhere: no bytes panic the reader, and nothing is believed
//! without the key's tag; plus each entry point's own, stated on it.

use std::collections::HashMap;

use bytes::Bytes;
use rsrc::bus::BusEvent;
use rsrc::keyring::Keyring;

use crate::store::{TailReader, entry_tag, entry_verifies, record_of, tagged};
use crate::wire::{Channel, Heard, MAX_MESSAGE, Out, Received, Reject, now_ms};

/// The channel's decoding on arbitrary bytes, for the fuzz target `bus_message` and its
/// corpus: any payload decodes to a message or a refusal without panicking; nothing
/// decodes unless tagged with the key (a payload tagged with another key, or for
/// another channel, is forged); and an event built from the bytes round-trips.
pub fn bus_message(data: &[u8]) {
    let keys = Keyring::new(&[[4; 32]]).expect("a key");
    let channel = Channel::new("rsrc:changes".into(), keys);
    if let Ok(m) = channel.decode(data) {
        // The fuzzer cannot forge a tag: whatever decodes was encoded here.
        let _ = Heard::default().fresh(&m, now_ms());
        panic!("bytes decoded without a tag made with the key: {m:?}");
    }
    let text = String::from_utf8_lossy(data).into_owned();
    let event = match data.first().map(|b| b % 4) {
        Some(0) => BusEvent::Updated(text),
        Some(1) => BusEvent::Signal(text),
        Some(2) => BusEvent::Resync(text),
        _ => BusEvent::ListChanged,
    };
    let wire = channel.encode("i", Some(1), &Out::Event(event.clone()));
    assert!(wire.len() <= MAX_MESSAGE);
    match channel.decode(wire.as_bytes()) {
        Ok(Received {
            out: Out::Event(got),
            ..
        }) => assert!(got == event || matches!(got, BusEvent::Resync(_))),
        other => panic!("an event does not round-trip: {other:?}"),
    }
    let other = Channel::new(
        "rsrc:changes".into(),
        Keyring::new(&[[5; 32]]).expect("a key"),
    );
    assert_eq!(other.decode(wire.as_bytes()).unwrap_err(), Reject::Forged);
}

/// The session-record and replay-log checks on arbitrary bytes, for the fuzz target
/// `session_record` and its corpus: a record or entry made of the bytes never panics
/// the reader, is never believed unless tagged with the key, and one tagged with it is
/// read back as it was written.
pub fn session_record(data: &[u8]) {
    let keys = Keyring::new(&[[3; 32]]).expect("a key");
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{1}');
    let name = parts.next().unwrap_or_default();
    let mut fields = HashMap::new();
    let mut members = Vec::new();
    for part in parts {
        match part.split_once('=') {
            Some((f, v)) => {
                fields.insert(f.to_owned(), v.to_owned());
            }
            None => members.push(part.to_owned()),
        }
    }
    let refused = |_: &str, _: &str| {};
    // As found: a record whose core fields verify has them tagged with the key.
    if let Some(r) = record_of(&keys, name, &fields, &members, &refused) {
        assert_eq!(
            fields.get("version").map(String::as_str),
            Some(tagged(&keys, name, "version", &r.version).as_str())
        );
    }
    // Tagged by an instance: read back whole.
    let value = fields.values().next().map_or("", String::as_str);
    let mut tagged_fields = HashMap::new();
    for f in ["version", "client", "init", "level"] {
        tagged_fields.insert(f.to_owned(), tagged(&keys, name, f, value));
    }
    let tagged_members: Vec<String> = members
        .iter()
        .map(|m| tagged(&keys, name, "sub", m))
        .collect();
    let r = record_of(&keys, name, &tagged_fields, &tagged_members, &refused)
        .expect("a record tagged with the key is read");
    assert_eq!(r.version, value);
    assert_eq!(r.state.log_level.as_deref(), Some(value));
    let mut expected = members.clone();
    expected.sort();
    expected.dedup();
    assert_eq!(r.state.subscriptions, expected);
    // Tagged for another session: not believed.
    if !name.is_empty() {
        let other = format!("{name}x");
        assert!(record_of(&keys, &other, &tagged_fields, &[], &refused).is_none());
    }
    entries(&keys, name, data);
}

/// Replay-log entries made of arbitrary bytes (for [`session_record`]): a tag that is
/// not the key's never verifies, one made with it does, and a stream read back from
/// any numbers neither panics nor returns an event it was not given.
fn entries(keys: &Keyring, name: &str, data: &[u8]) {
    let number = |i: usize| {
        data.get(i..i + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let (stream, seq, oldest) = (number(0), number(8), number(16));
    assert!(!entry_verifies(
        keys,
        name,
        stream,
        seq,
        oldest,
        Some(data),
        data
    ));
    let tag = entry_tag(keys, name, stream, seq, oldest, Some(data));
    assert!(entry_verifies(
        keys,
        name,
        stream,
        seq,
        oldest,
        Some(data),
        tag.as_bytes()
    ));
    assert!(!entry_verifies(
        keys,
        name,
        stream,
        seq,
        oldest,
        None,
        tag.as_bytes()
    ));
    let mut reader = TailReader::new(number(24));
    let mut given = 0;
    for (i, chunk) in data.chunks(9).enumerate() {
        let seq = u64::from(chunk[0]) + (i as u64);
        let frame = (chunk.len() > 1).then(|| Bytes::copy_from_slice(&chunk[1..]));
        given += usize::from(frame.is_some());
        reader.take(seq, u64::from(chunk.last().copied().unwrap_or(0)), frame);
    }
    let end = data.first().map(|&b| u64::from(b));
    let tail = reader.finish(end, data.len().is_multiple_of(2), true, true);
    assert!(tail.events.len() <= given);
}
