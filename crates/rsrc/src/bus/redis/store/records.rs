//! A session's record as Redis holds it: each field and each subscription tagged with
//! the bus keys (`TAG:VALUE`, the tag bound to the session's name and the field), and
//! read back only when its tag verifies under a key of the ring.
//!
//! Invariant: nothing read back is believed without its tag. A record whose version,
//! client or init (or a level it has) does not verify is no record; a subscription that
//! does not verify is dropped; each refusal is reported to the caller, which counts and
//! logs it.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::bus::{SessionState, StoredSession};
use crate::keyring::{Keyring, TAG_LEN, feed};

/// The base64url length of a tag.
const TAG_TEXT: usize = (TAG_LEN * 4).div_ceil(3);

/// `value` of `field` of session `name`, tagged with the first key: `TAG:VALUE`.
pub(super) fn tagged(keys: &Keyring, name: &str, field: &str, value: &str) -> String {
    tagged_with(keys, 0, name, field, value)
}

/// [`tagged`] with key `index`.
pub(super) fn tagged_with(
    keys: &Keyring,
    index: usize,
    name: &str,
    field: &str,
    value: &str,
) -> String {
    let tag = keys.tag_with(index, |m| {
        feed(m, &[name.as_bytes(), field.as_bytes(), value.as_bytes()]);
    });
    format!("{}:{value}", URL_SAFE_NO_PAD.encode(tag))
}

/// The value of a tagged `stored` value of `field` of session `name`, if its tag
/// verifies under any key.
pub(super) fn untagged<'a>(
    keys: &Keyring,
    name: &str,
    field: &str,
    stored: &'a str,
) -> Option<&'a str> {
    let (tag, value) = (stored.get(..TAG_TEXT)?, stored.get(TAG_TEXT..)?);
    let value = value.strip_prefix(':')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    keys.opens(&tag, |m| {
        feed(m, &[name.as_bytes(), field.as_bytes(), value.as_bytes()]);
    })
    .then_some(value)
}

/// Called with what was refused, and why (to count and log it).
type Refused<'a> = &'a dyn Fn(&str, &str);

/// A session record read back from Redis: its fields verified, its subscriptions each
/// verified (one that does not is dropped and reported to `refused`).
pub(super) fn record_of(
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
    Some(StoredSession {
        version: version.to_owned(),
        client: client.to_owned(),
        state: SessionState {
            initialized: init == "1",
            log_level: log_level.map(str::to_owned),
            subscriptions: subscriptions(keys, name, members, refused),
        },
        holder: field("holder").filter(|h| !h.is_empty()).map(str::to_owned),
        claims: number("claims"),
        rev: number("rev"),
        streams: number("streams"),
    })
}

/// The verified subscriptions among `members`, sorted.
pub(super) fn subscriptions(
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
    use super::*;

    #[test]
    fn a_tagged_value_verifies_only_for_its_session_and_field() {
        let keys = Keyring::new(&[[1; 32]]).unwrap();
        let t = tagged(&keys, "n1", "level", "debug");
        assert_eq!(untagged(&keys, "n1", "level", &t), Some("debug"));
        assert_eq!(untagged(&keys, "n2", "level", &t), None, "another session");
        assert_eq!(untagged(&keys, "n1", "init", &t), None, "another field");
        let forged = format!("{}error", &t[..=TAG_TEXT]);
        assert_eq!(untagged(&keys, "n1", "level", &forged), None);
        for junk in ["", "debug", ":debug", "é", &"x".repeat(TAG_TEXT)] {
            assert_eq!(untagged(&keys, "n1", "level", junk), None, "{junk:?}");
        }
        // Tagged with an older key of the ring: still verifies.
        let rotated = Keyring::new(&[[2; 32], [1; 32]]).unwrap();
        assert_eq!(untagged(&rotated, "n1", "level", &t), Some("debug"));
        assert_ne!(tagged(&rotated, "n1", "level", "debug"), t);
        assert_eq!(tagged_with(&rotated, 1, "n1", "level", "debug"), t);
    }
}
