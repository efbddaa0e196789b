//! A session's record as Redis holds it: each field and each subscription tagged with
//! the bus keys (`TAG:VALUE`, the keyring's tagged text bound to the session's name and
//! the field), and
//! read back only when its tag verifies under a key of the ring.
//!
//! Invariant: nothing read back is believed without its tag. A record whose version,
//! client or init (or a level it has) does not verify is no record; a subscription that
//! does not verify is dropped; each refusal is reported to the caller, which counts and
//! logs it.

use std::collections::HashMap;

use rsrc::keyring::Keyring;
use rsrc::sessions::{SessionState, StoredSession};

/// `value` of `field` of session `name`, tagged with the first key: `TAG:VALUE`.
pub(crate) fn tagged(keys: &Keyring, name: &str, field: &str, value: &str) -> String {
    tagged_with(keys, 0, name, field, value)
}

/// [`tagged`] with key `index`.
pub(crate) fn tagged_with(
    keys: &Keyring,
    index: usize,
    name: &str,
    field: &str,
    value: &str,
) -> String {
    keys.seal_text_with(index, ':', &[name.as_bytes(), field.as_bytes()], value)
}

/// The value of a tagged `stored` value of `field` of session `name`, if its tag
/// verifies under any key.
pub(crate) fn untagged<'a>(
    keys: &Keyring,
    name: &str,
    field: &str,
    stored: &'a str,
) -> Option<&'a str> {
    keys.open_text(':', &[name.as_bytes(), field.as_bytes()], stored)
}

/// Called with what was refused, and why (to count and log it).
type Refused<'a> = &'a dyn Fn(&str, &str);

/// A session record read back from Redis: its fields verified, its subscriptions each
/// verified (one that does not is dropped and reported to `refused`).
pub(crate) fn record_of(
    keys: &Keyring,
    name: &str,
    fields: &HashMap<String, String>,
    members: &[String],
    refused: Refused<'_>,
) -> Option<StoredSession> {
    let field = |f: &str| fields.get(f).map(String::as_str);
    let verified = |f: &str| field(f).and_then(|v| untagged(keys, name, f, v));
    let refuse = |f: &str| {
        refused("a session record", &format!("its {f} does not verify"));
        None
    };
    let version = verified("version").or_else(|| refuse("version"))?;
    let client = verified("client").or_else(|| refuse("client"))?;
    let init = verified("init").or_else(|| refuse("init"))?;
    let log_level = match field("level") {
        None => None,
        Some(v) => Some(untagged(keys, name, "level", v).or_else(|| refuse("level"))?),
    };
    let number = |f: &str| field(f).and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut record = StoredSession::new(version.to_owned(), client.to_owned());
    record.state = session_state(
        init == "1",
        log_level.map(str::to_owned),
        subscriptions(keys, name, members, refused),
    );
    record.holder = field("holder").filter(|h| !h.is_empty()).map(str::to_owned);
    record.claims = number("claims");
    record.rev = number("rev");
    record.streams = number("streams");
    Some(record)
}

/// A session's state of these parts.
pub(crate) fn session_state(
    initialized: bool,
    log_level: Option<String>,
    subscriptions: Vec<String>,
) -> SessionState {
    let mut state = SessionState::default();
    state.initialized = initialized;
    state.log_level = log_level;
    state.subscriptions = subscriptions;
    state
}

/// The verified subscriptions among `members`, sorted.
pub(crate) fn subscriptions(
    keys: &Keyring,
    name: &str,
    members: &[String],
    refused: Refused<'_>,
) -> Vec<String> {
    let mut out: Vec<String> = members
        .iter()
        .filter_map(|m| {
            let uri = untagged(keys, name, "sub", m);
            if uri.is_none() {
                refused("a subscription", "it does not verify");
            }
            uri.map(str::to_owned)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use rsrc::keyring::TAG_TEXT_LEN;

    use super::*;

    #[test]
    fn a_tagged_value_verifies_only_for_its_session_and_field() {
        let keys = Keyring::new(&[[1; 32]]).unwrap();
        let t = tagged(&keys, "n1", "level", "debug");
        assert_eq!(untagged(&keys, "n1", "level", &t), Some("debug"));
        assert_eq!(untagged(&keys, "n2", "level", &t), None, "another session");
        assert_eq!(untagged(&keys, "n1", "init", &t), None, "another field");
        let forged = format!("{}error", &t[..=TAG_TEXT_LEN]);
        assert_eq!(untagged(&keys, "n1", "level", &forged), None);
        for junk in ["", "debug", ":debug", "é", &"x".repeat(TAG_TEXT_LEN)] {
            assert_eq!(untagged(&keys, "n1", "level", junk), None, "{junk:?}");
        }
        // Tagged with an older key of the ring: still verifies.
        let rotated = Keyring::new(&[[2; 32], [1; 32]]).unwrap();
        assert_eq!(untagged(&rotated, "n1", "level", &t), Some("debug"));
        assert_ne!(tagged(&rotated, "n1", "level", "debug"), t);
        assert_eq!(tagged_with(&rotated, 1, "n1", "level", "debug"), t);
    }
}
