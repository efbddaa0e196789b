//! The `rsrc::sessions::SessionStore` on Redis. A session is known by its name `NAME` (a keyed digest of
//! its id and owner, `SessionStore::names`: the id is never written), and its keys are
//! under `NAMESPACE:session:NAME`:
//! - the hash itself: version, client, init, level (each value `TAG:VALUE`, authenticated
//!   with the bus keys and bound to the session and the field), holder, claims, `rev`
//!   (the record's revision), `streams` (POST streams numbered so far) and the writer
//!   `wN` of each;
//! - `…:subs`, the set of subscriptions, each member `TAG:URI`;
//! - `…:sN`, one Redis Stream per SSE stream, whose entries are `SEQ-0` (fields `f`: the
//!   SSE frame, `o`: the oldest event its writer kept, `t`: the tag of the session,
//!   stream, numbers and frame) and the end `LAST-1` (fields `end`, `t`);
//! - `…:gone`, the tombstone DELETE leaves, so that a deleted session can be told from
//!   one Redis lost.
//!
//! Every key expires after `idle` and a quarter without use (instances touch a session
//! they use every eighth of `idle`, so the record outlives every copy in use).
//!
//! Invariants: every change is one script (no transaction: an ACL user needs no more
//! than `@scripting` and the commands scripts run), so nothing is left half-written (a stream key
//! without its expiry, a record without its fields); a save changes only the fields its
//! request changed and never re-creates a session that no longer exists; stream 0 is
//! written only by the instance the record names as holder, checked in the script that
//! writes it (an entry from an older holder is refused, and that instance is told, on
//! itself, to reload its copy); log entries are written by one task, in the order they
//! were queued, so a stream's end follows its events; a stream read back with a hole
//! (entries lost while Redis was away, dropped from a full queue, or that do not
//! verify) is reported broken; a change to a record is announced on the bus's channel
//! (by name) only after Redis accepted it. Nothing read back is believed without its
//! tag, and nothing read back exceeds its bound (`layout.rs`): a record or an entry
//! over it is refused; what is refused is counted and logged at a bounded rate.
//!
//! The files, from the store down: `sessions.rs` is the store (`RedisSessions`) and its
//! operations on records; `logs.rs` the replay logs (the task that writes them, and
//! reading a stream back); `records.rs` how a record's fields are tagged and read back;
//! `scripts.rs` the Lua scripts every change runs; `conn.rs` the store's connection;
//! `layout.rs` the keys, their lifetime and the bounds of what is read back.

mod conn;
mod layout;
mod logs;
mod records;
mod scripts;
mod sessions;

#[cfg(feature = "fuzzing")]
pub(crate) use logs::{TailReader, entry_tag, entry_verifies};
#[cfg(feature = "fuzzing")]
pub(crate) use records::{record_of, tagged};
pub(crate) use sessions::RedisSessions;
