//! Where a shared session lives in Redis and how much of it is read back: its keys'
//! names, their lifetime, the bounds of a record and of a replay-log entry, and the
//! numbers Redis answers with.
//!
//! Invariant: every bound here is applied to what is read back, whatever Redis holds:
//! a record or entry over it is refused, never believed.

use std::time::Duration;

use redis::Value;
use rsrc::sessions::Lookup;

/// The largest value of a record's field read back (the client's information is cut to
/// 4 KiB before it is stored).
pub(crate) const MAX_FIELD: usize = 16 * 1024;
/// The most fields of a record read back (about ten, and a writer per retained stream).
pub(crate) const MAX_FIELDS: usize = 64;
/// The most subscriptions of a record read back.
pub(crate) const MAX_MEMBERS: usize = 64 * 1024;
/// The most bytes of subscriptions of a record read back.
pub(crate) const MAX_MEMBER_BYTES: usize = 16 * 1024 * 1024;
/// The largest replay-log entry stored and read back: a larger event is kept by its
/// writer only (its stream then has a hole elsewhere).
pub(crate) const MAX_ENTRY: usize = 16 * 1024 * 1024;

/// The key of session `name`'s record; its other keys start with it (`…:subs`, `…:sN`,
/// `…:gone`).
pub(crate) fn session_key(namespace: &str, name: &str) -> String {
    format!("{namespace}:session:{name}")
}

/// How long every key of a session lasts unused, in ms: `idle` and a quarter, since an
/// instance in use touches it only every eighth of `idle`.
pub(crate) fn key_ttl(idle: Duration) -> u64 {
    millis(idle.saturating_add(idle / 4))
}

/// `d` in whole milliseconds, at least one.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// `(SEQ, N)` of a stream entry id `SEQ-N`.
pub(crate) fn seq_of(entry_id: &str) -> Option<(u64, u64)> {
    let (s, n) = entry_id.split_once('-')?;
    Some((s.parse().ok()?, n.parse().ok()?))
}

/// A script's answer about a session: -1 → deleted, 0 → missing, anything else is the
/// answer.
pub(crate) fn lookup(v: Value) -> Lookup<Value> {
    match v {
        Value::Int(-1) => Lookup::Deleted,
        Value::Int(0) => Lookup::Missing,
        v => Lookup::Found(v),
    }
}
