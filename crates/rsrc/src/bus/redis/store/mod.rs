//! [`SessionStore`] on Redis. A session is known by its name `NAME` (a keyed digest of
//! its id and owner, [`SessionStore::names`]: the id is never written), and its keys are
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
//! tag, and nothing read back exceeds its bound: a record ([`MAX_FIELD`],
//! [`MAX_MEMBERS`], [`MAX_MEMBER_BYTES`]) or an entry ([`MAX_ENTRY`]) over it is
//! refused; what is refused is counted and logged at a bounded rate.
//!
//! This file holds the store and its operations on records; beside it, `records.rs` holds
//! how a record's fields are tagged and read back, `scripts.rs` the Lua scripts every
//! change runs, `logs.rs` the replay logs (the task that writes them, and reading a
//! stream back).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use redis::Value;
use redis::aio::MultiplexedConnection;
use tokio::sync::mpsc;

use super::{BusState, Out, SessionHandlers, connect};
use crate::bus::RETAINED_STREAMS;
use crate::bus::{
    Claim, Keep, Lookup, Revision, SessionChanged, SessionState, SessionStore, StoreError,
    StoredEvent, StoredSession, StreamTail,
};
use crate::future::BoxFuture;
use crate::keyring::{Keyring, feed};
use logs::{Entry, LOG_QUEUE, PendingEnds, write_logs};
use records::{record_of, subscriptions, tagged, tagged_with, untagged};
use scripts::Scripts;

mod logs;
mod records;
mod scripts;

/// The largest value of a record's field read back (the client's information is cut to
/// 4 KiB before it is stored).
const MAX_FIELD: usize = 16 * 1024;
/// The most fields of a record read back (about ten, and a writer per retained stream).
const MAX_FIELDS: usize = 64;
/// The most subscriptions of a record read back.
const MAX_MEMBERS: usize = 64 * 1024;
/// The most bytes of subscriptions of a record read back.
const MAX_MEMBER_BYTES: usize = 16 * 1024 * 1024;
/// The largest replay-log entry stored and read back: a larger event is kept by its
/// writer only (its stream then has a hole elsewhere).
pub(super) const MAX_ENTRY: usize = 16 * 1024 * 1024;

/// Sessions on the bus's Redis.
pub(super) struct RedisSessions {
    shared: Arc<BusState>,
    idle: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
    logs: mpsc::Sender<Entry>,
    /// Ends that did not fit in the queue, written once it is empty.
    ends: Arc<PendingEnds>,
    /// This store's [`SessionStore::on_change`] handlers (the bus holds them weakly).
    handlers: Arc<SessionHandlers>,
    scripts: Scripts,
}

fn err(e: &redis::RedisError) -> StoreError {
    StoreError(format!("Redis: {e}"))
}

fn unexpected(what: &str) -> StoreError {
    StoreError(format!("Redis: unexpected answer to {what}"))
}

/// Whether a failed round trip means the connection itself is gone.
fn broken_connection(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal()
}

/// How long every key of a session lasts unused: `idle` and a quarter, since an
/// instance in use touches it only every eighth of `idle`.
fn key_ttl(idle: Duration) -> u64 {
    millis(idle.saturating_add(idle / 4))
}

/// The session-record and replay-log checks on arbitrary bytes, for the fuzz target
/// `session_record` and its corpus: a record or entry made of the bytes never panics
/// the reader, is never believed unless tagged with the key, and one tagged with it is
/// read back as it was written.
pub(crate) fn fuzz_record(data: &[u8]) {
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
    logs::fuzz_entries(&keys, name, data);
}

impl RedisSessions {
    pub(super) fn new(shared: Arc<BusState>, idle: Duration) -> Self {
        let (logs, rx) = mpsc::channel(LOG_QUEUE);
        let ends = Arc::new(PendingEnds::default());
        let handlers = Arc::new(SessionHandlers::default());
        shared.add_session_handlers(&handlers);
        shared.runtime.spawn(write_logs(
            Arc::downgrade(&shared),
            rx,
            key_ttl(idle),
            Arc::clone(&ends),
        ));
        RedisSessions {
            shared,
            idle,
            conn: Mutex::new(None),
            logs,
            ends,
            handlers,
            scripts: Scripts::new(),
        }
    }

    fn key(&self, name: &str) -> String {
        format!("{}:session:{name}", self.shared.options.namespace)
    }

    fn ttl(&self) -> u64 {
        key_ttl(self.idle)
    }

    fn tag(&self, name: &str, field: &str, value: &str) -> String {
        tagged(&self.shared.keys.fields, name, field, value)
    }

    async fn conn(&self) -> Result<MultiplexedConnection, StoreError> {
        if let Some(c) = self.lock().clone() {
            return Ok(c);
        }
        let c = connect(&self.shared.client, self.shared.options.timeout)
            .await
            .map_err(|e| err(&e))?;
        *self.lock() = Some(c.clone());
        Ok(c)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<MultiplexedConnection>> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on a connection, forgetting the connection if it is found broken (the
    /// next call opens a new one).
    async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut MultiplexedConnection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        let r = f(&mut c).await;
        if let Err(e) = &r
            && broken_connection(e)
        {
            *self.lock() = None;
        }
        r.map_err(|e| err(&e))
    }

    fn announce(&self, name: &str) {
        self.shared.send(Out::Session(name.to_owned()));
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// `(SEQ, N)` of a stream entry id `SEQ-N`.
fn seq_of(entry_id: &str) -> Option<(u64, u64)> {
    let (s, n) = entry_id.split_once('-')?;
    Some((s.parse().ok()?, n.parse().ok()?))
}

/// -1 → deleted, 0 → missing, anything else is the answer.
fn lookup(v: Value) -> Lookup<Value> {
    match v {
        Value::Int(-1) => Lookup::Deleted,
        Value::Int(0) => Lookup::Missing,
        v => Lookup::Found(v),
    }
}

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        &self.shared.id
    }

    fn names(&self, id: &str, owner: &[u8]) -> Vec<String> {
        let keys = &self.shared.keys.names;
        (0..keys.len())
            .map(|i| URL_SAFE_NO_PAD.encode(keys.tag_with(i, |m| feed(m, &[id.as_bytes(), owner]))))
            .collect()
    }

    fn idle(&self) -> Duration {
        self.idle
    }

    fn liveness_grace(&self) -> Duration {
        self.shared.options.lease_ttl
    }

    fn recovering(&self) -> bool {
        self.shared.recovering()
    }

    fn create<'a>(
        &'a self,
        name: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let ttl = self.ttl();
            let init = if session.state.initialized { "1" } else { "0" };
            self.with(async |c| {
                self.scripts
                    .create
                    .key(&key)
                    .key(format!("{key}:subs"))
                    .key(format!("{key}:s0"))
                    .key(format!("{key}:gone"))
                    .arg(ttl)
                    .arg(self.tag(name, "version", &session.version))
                    .arg(self.tag(name, "client", &session.client))
                    .arg(self.tag(name, "init", init))
                    .invoke_async::<i64>(c)
                    .await
            })
            .await?;
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        name: &'a str,
        touch: bool,
    ) -> BoxFuture<'a, Result<Lookup<StoredSession>, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let got: Value = self
                .with(async |c| {
                    self.scripts
                        .load
                        .key(&key)
                        .key(format!("{key}:subs"))
                        .key(format!("{key}:s0"))
                        .key(format!("{key}:gone"))
                        .arg(if touch { self.ttl() } else { 0 })
                        .arg(MAX_FIELDS)
                        .arg(MAX_FIELD)
                        .arg(MAX_MEMBERS)
                        .arg(MAX_MEMBER_BYTES)
                        .invoke_async(c)
                        .await
                })
                .await?;
            let got = match got {
                Value::Int(-3) => {
                    self.shared
                        .rejected_stored("a session record", "it is over its bounds");
                    return Ok(Lookup::Missing);
                }
                got => match lookup(got) {
                    Lookup::Found(v) => v,
                    Lookup::Deleted => return Ok(Lookup::Deleted),
                    Lookup::Missing => return Ok(Lookup::Missing),
                },
            };
            let (fields, members): (HashMap<String, String>, Vec<String>) =
                redis::from_redis_value(got).map_err(|_| unexpected("a load"))?;
            let refused = |what: &str, why: &str| self.shared.rejected_stored(what, why);
            Ok(
                match record_of(&self.shared.keys.fields, name, &fields, &members, &refused) {
                    Some(record) => Lookup::Found(record),
                    // Not one this deployment wrote: as good as missing.
                    None => Lookup::Missing,
                },
            )
        })
    }

    fn touch<'a>(
        &'a self,
        names: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Lookup<()>>, StoreError>> {
        Box::pin(async move {
            if names.is_empty() {
                return Ok(Vec::new());
            }
            let ttl = self.ttl();
            let found: Vec<i64> = self
                .with(async |c| {
                    let mut p = redis::pipe();
                    p.load_script(&self.scripts.touch).ignore();
                    for name in names {
                        let key = self.key(name);
                        p.invoke_script(
                            self.scripts
                                .touch
                                .key(&key)
                                .key(format!("{key}:subs"))
                                .key(format!("{key}:s0"))
                                .key(format!("{key}:gone"))
                                .arg(ttl),
                        );
                    }
                    p.query_async(c).await
                })
                .await?;
            Ok(found
                .into_iter()
                .map(|n| match n {
                    1 => Lookup::Found(()),
                    0 => Lookup::Deleted,
                    _ => Lookup::Missing,
                })
                .collect())
        })
    }

    fn save<'a>(
        &'a self,
        name: &'a str,
        before: &'a SessionState,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<Lookup<Revision>, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let keys = &self.shared.keys.fields;
            let added: Vec<String> = state
                .subscriptions
                .iter()
                .filter(|u| before.subscriptions.binary_search(u).is_err())
                .map(|u| self.tag(name, "sub", u))
                .collect();
            // A member may have been tagged with any key of the ring.
            let removed: Vec<String> = before
                .subscriptions
                .iter()
                .filter(|u| state.subscriptions.binary_search(u).is_err())
                .flat_map(|u| (0..keys.len()).map(move |i| tagged_with(keys, i, name, "sub", u)))
                .collect();
            let level = state
                .log_level
                .as_deref()
                .filter(|l| before.log_level.as_deref() != Some(*l));
            let init = if state.initialized && !before.initialized {
                self.tag(name, "init", "1")
            } else {
                String::new()
            };
            let got: Value = self
                .with(async |c| {
                    let mut call = self.scripts.save.key(&key);
                    call.key(format!("{key}:subs"))
                        .key(format!("{key}:gone"))
                        .arg(self.ttl())
                        .arg(&init)
                        .arg(if level.is_some() { "1" } else { "0" })
                        .arg(
                            level
                                .map(|l| self.tag(name, "level", l))
                                .unwrap_or_default(),
                        )
                        .arg(added.len())
                        .arg(&added)
                        .arg(&removed);
                    call.invoke_async(c).await
                })
                .await?;
            let merged = match lookup(got) {
                Lookup::Found(v) => v,
                Lookup::Deleted => return Ok(Lookup::Deleted),
                Lookup::Missing => return Ok(Lookup::Missing),
            };
            let (rev, init, level, members): (u64, String, String, Vec<String>) =
                redis::from_redis_value(merged).map_err(|_| unexpected("a save"))?;
            let verified = |field: &str, v: &str| {
                let value = untagged(keys, name, field, v).map(str::to_owned);
                if value.is_none() && !v.is_empty() {
                    self.shared.rejected_stored(
                        "a session record",
                        &format!("its {field} does not verify"),
                    );
                }
                value
            };
            self.announce(name);
            Ok(Lookup::Found(Revision::new(
                SessionState {
                    initialized: verified("init", &init).as_deref() == Some("1"),
                    log_level: verified("level", &level),
                    subscriptions: subscriptions(keys, name, &members, &|what, why| {
                        self.shared.rejected_stored(what, why);
                    }),
                },
                rev,
            )))
        })
    }

    fn restore<'a>(
        &'a self,
        name: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<Lookup<()>, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let subs: Vec<String> = session
                .state
                .subscriptions
                .iter()
                .map(|u| self.tag(name, "sub", u))
                .collect();
            let init = if session.state.initialized { "1" } else { "0" };
            let written: i64 = self
                .with(async |c| {
                    let mut call = self.scripts.restore.key(&key);
                    call.key(format!("{key}:subs"))
                        .key(format!("{key}:gone"))
                        .arg(self.ttl())
                        .arg(session.holder.as_deref().unwrap_or(""))
                        .arg(self.tag(name, "version", &session.version))
                        .arg(self.tag(name, "client", &session.client))
                        .arg(self.tag(name, "init", init))
                        .arg(
                            session
                                .state
                                .log_level
                                .as_deref()
                                .map(|l| self.tag(name, "level", l))
                                .unwrap_or_default(),
                        )
                        .arg(session.claims)
                        .arg(session.rev)
                        .arg(session.streams)
                        .arg(&subs);
                    call.invoke_async(c).await
                })
                .await?;
            match written {
                -1 => Ok(Lookup::Deleted),
                0 => Ok(Lookup::Found(())),
                _ => {
                    tracing::info!("re-created a shared session the store had lost");
                    self.announce(name);
                    Ok(Lookup::Found(()))
                }
            }
        })
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            self.with(async |c| {
                self.scripts
                    .delete
                    .key(&key)
                    .key(format!("{key}:subs"))
                    .key(format!("{key}:gone"))
                    .arg(RETAINED_STREAMS)
                    .arg(self.ttl())
                    .invoke_async::<i64>(c)
                    .await
            })
            .await?;
            self.announce(name);
            Ok(())
        })
    }

    fn claim<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Lookup<Claim>, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let got: Value = self
                .with(async |c| {
                    self.scripts
                        .claim
                        .key(&key)
                        .key(format!("{key}:s0"))
                        .key(format!("{key}:gone"))
                        .arg(&self.shared.id)
                        .invoke_async(c)
                        .await
                })
                .await?;
            let got = match lookup(got) {
                Lookup::Found(v) => v,
                Lookup::Deleted => return Ok(Lookup::Deleted),
                Lookup::Missing => return Ok(Lookup::Missing),
            };
            let (old, top, number): (String, String, u64) =
                redis::from_redis_value(got).map_err(|_| unexpected("a claim"))?;
            self.announce(name);
            Ok(Lookup::Found(Claim {
                previous: Some(old).filter(|o| !o.is_empty()),
                last: seq_of(&top).map_or(0, |(s, _)| s),
                number,
            }))
        })
    }

    fn open_stream<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let n: u64 = self
                .with(async |c| {
                    self.scripts
                        .open
                        .key(&key)
                        .arg(&self.shared.id)
                        .arg(RETAINED_STREAMS)
                        .invoke_async(c)
                        .await
                })
                .await?;
            if n == 0 {
                return Err(StoreError("the session is not in the store".into()));
            }
            Ok(n)
        })
    }

    fn append(&self, event: StoredEvent) {
        if event.frame.len() > MAX_ENTRY {
            // Too large to share: the stored log has a hole there, which readers see.
            tracing::debug!(
                "an event too large for the shared replay log is kept on this instance only"
            );
            return;
        }
        if self.logs.try_send(Entry::Event(event)).is_err() {
            // The stored log now has a hole, which readers see.
            tracing::debug!("the shared replay log queue is full: an event is kept here only");
        }
    }

    fn end_stream(&self, session: &str, stream: u64, last: u64) {
        let end = Entry::End {
            session: session.to_owned(),
            stream,
            last,
        };
        if let Err(mpsc::error::TrySendError::Full(end)) = self.logs.try_send(end)
            && !self.ends.push(end)
        {
            tracing::debug!(
                "too many stream ends waiting: a resumption elsewhere ends when its writer does"
            );
        }
    }

    fn read<'a>(
        &'a self,
        name: &'a str,
        stream: u64,
        after: u64,
        keep: Keep,
    ) -> BoxFuture<'a, Result<StreamTail, StoreError>> {
        Box::pin(self.read_log(name, stream, after, keep))
    }

    fn on_change(&self, handler: SessionChanged) {
        self.handlers.add(handler);
    }
}
