//! [`SessionStore`] on Redis. The keys of a session `ID`, under `NAMESPACE:session:ID`:
//! - the hash itself: owner, version, client, init, level, holder, claims, `rev` (the
//!   record's revision), `streams` (POST streams numbered so far) and the writer `wN` of
//!   each;
//! - `…:subs`, the set of subscriptions;
//! - `…:sN`, one Redis Stream per SSE stream, whose entries are `SEQ-0` (fields `f`: the
//!   SSE frame, `o`: the oldest event its writer kept) and the end `LAST-1` (field `end`);
//! - `…:gone`, the tombstone DELETE leaves, so that a deleted session can be told from
//!   one Redis lost.
//!
//! Every key expires after `idle` and a quarter without use (instances touch a session
//! they use every eighth of `idle`, so the record outlives every copy in use).
//!
//! Invariants: every change is one script, so nothing is left half-written (a stream key
//! without its expiry, a record without its owner); a save changes only the fields its
//! request changed and never re-creates a session that no longer exists; stream 0 is
//! written only by the instance the record names as holder, checked in the script that
//! writes it (an entry from an older holder is refused, and that instance is told, on
//! itself, to reload its copy); log entries are written by one task, in the order they
//! were queued, so a stream's end follows its events; a stream read back with a hole
//! (entries lost while Redis was away, or dropped from a full queue) is reported broken;
//! a change to a record is announced on the bus's channel only after Redis accepted it.
//!
//! This file holds the store and its operations on records; beside it, `scripts.rs` holds
//! the Lua scripts every change runs, `logs.rs` the replay logs (the task that writes
//! them, and reading a stream back).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use redis::Value;
use redis::aio::MultiplexedConnection;
use tokio::sync::mpsc;

use super::{BusState, Out, SessionHandlers, connect};
use crate::bus::RETAINED_STREAMS;
use crate::bus::{
    Claim, Keep, Lookup, Revision, SessionChanged, SessionState, SessionStore, StoreError,
    StoredEvent, StoredSession, StreamTail,
};
use crate::provider::BoxFuture;
use logs::{Entry, LOG_QUEUE, PendingEnds, write_logs};
use scripts::Scripts;

mod logs;
mod scripts;

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

/// How long every key of a session lasts unused: `idle` and a quarter, since an
/// instance in use touches it only every eighth of `idle`.
fn key_ttl(idle: Duration) -> u64 {
    millis(idle.saturating_add(idle / 4))
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

    fn key(&self, id: &str) -> String {
        format!("{}:session:{id}", self.shared.options.namespace)
    }

    fn ttl(&self) -> u64 {
        key_ttl(self.idle)
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

    /// Runs `f` on a connection, forgetting the connection if it failed.
    async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut MultiplexedConnection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        let r = f(&mut c).await;
        if let Err(e) = &r
            && (e.is_io_error() || e.is_timeout() || e.is_connection_dropped())
        {
            *self.lock() = None;
        }
        r.map_err(|e| err(&e))
    }

    fn announce(&self, id: &str) {
        self.shared.send(Out::Session(id.to_owned()));
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

type Entries = Vec<(String, HashMap<String, Vec<u8>>)>;

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        &self.shared.id
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
        id: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let ttl = self.ttl();
            self.with(async |c| {
                redis::pipe()
                    .atomic()
                    .del(&[
                        &key,
                        &format!("{key}:subs"),
                        &format!("{key}:s0"),
                        &format!("{key}:gone"),
                    ])
                    .ignore()
                    .cmd("HSET")
                    .arg(&key)
                    .arg("owner")
                    .arg(&session.owner)
                    .arg("version")
                    .arg(&session.version)
                    .arg("client")
                    .arg(&session.client)
                    .arg("init")
                    .arg(u8::from(session.state.initialized))
                    .arg("streams")
                    .arg(0)
                    .arg("rev")
                    .arg(0)
                    .arg("claims")
                    .arg(0)
                    .ignore()
                    .pexpire(&key, ttl as i64)
                    .ignore()
                    .query_async::<()>(c)
                    .await
            })
            .await
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        touch: bool,
    ) -> BoxFuture<'a, Result<Lookup<StoredSession>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let subs = format!("{key}:subs");
            let ttl = self.ttl() as i64;
            let (fields, mut members, gone): (HashMap<String, String>, Vec<String>, bool) = self
                .with(async |c| {
                    let mut p = redis::pipe();
                    p.hgetall(&key)
                        .smembers(&subs)
                        .exists(format!("{key}:gone"));
                    if touch {
                        p.pexpire(&key, ttl)
                            .ignore()
                            .pexpire(&subs, ttl)
                            .ignore()
                            .pexpire(format!("{key}:s0"), ttl)
                            .ignore();
                    }
                    p.query_async(c).await
                })
                .await?;
            if fields.is_empty() {
                return Ok(if gone {
                    Lookup::Deleted
                } else {
                    Lookup::Missing
                });
            }
            members.sort();
            let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
            let number = |name: &str| field(name).parse().unwrap_or(0);
            Ok(Lookup::Found(StoredSession {
                owner: field("owner"),
                version: field("version"),
                client: field("client"),
                state: SessionState {
                    initialized: field("init") == "1",
                    log_level: Some(field("level")).filter(|l| !l.is_empty()),
                    subscriptions: members,
                },
                holder: Some(field("holder")).filter(|h| !h.is_empty()),
                claims: number("claims"),
                rev: number("rev"),
                streams: number("streams"),
            }))
        })
    }

    fn touch<'a>(
        &'a self,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Lookup<()>>, StoreError>> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let ttl = self.ttl();
            let found: Vec<i64> = self
                .with(async |c| {
                    let mut p = redis::pipe();
                    p.load_script(&self.scripts.touch).ignore();
                    for id in ids {
                        let key = self.key(id);
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
        id: &'a str,
        before: &'a SessionState,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<Lookup<Revision>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let added: Vec<&String> = state
                .subscriptions
                .iter()
                .filter(|u| before.subscriptions.binary_search(u).is_err())
                .collect();
            let removed: Vec<&String> = before
                .subscriptions
                .iter()
                .filter(|u| state.subscriptions.binary_search(u).is_err())
                .collect();
            let level = state
                .log_level
                .as_deref()
                .filter(|l| before.log_level.as_deref() != Some(*l));
            let got: Value = self
                .with(async |c| {
                    let mut call = self.scripts.save.key(&key);
                    call.key(format!("{key}:subs"))
                        .key(format!("{key}:gone"))
                        .arg(self.ttl())
                        .arg(if state.initialized && !before.initialized {
                            "1"
                        } else {
                            "0"
                        })
                        .arg(if level.is_some() { "1" } else { "0" })
                        .arg(level.unwrap_or(""))
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
            let (rev, init, level, mut subscriptions): (u64, String, String, Vec<String>) =
                redis::from_redis_value(merged).map_err(|_| unexpected("a save"))?;
            subscriptions.sort();
            self.announce(id);
            Ok(Lookup::Found(Revision::new(
                SessionState {
                    initialized: init == "1",
                    log_level: Some(level).filter(|l| !l.is_empty()),
                    subscriptions,
                },
                rev,
            )))
        })
    }

    fn restore<'a>(
        &'a self,
        id: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<Lookup<()>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let written: i64 = self
                .with(async |c| {
                    let mut call = self.scripts.restore.key(&key);
                    call.key(format!("{key}:subs"))
                        .key(format!("{key}:gone"))
                        .arg(self.ttl())
                        .arg(session.holder.as_deref().unwrap_or(""))
                        .arg(&session.owner)
                        .arg(&session.version)
                        .arg(&session.client)
                        .arg(u8::from(session.state.initialized))
                        .arg(session.state.log_level.as_deref().unwrap_or(""))
                        .arg(session.claims)
                        .arg(session.rev)
                        .arg(session.streams)
                        .arg(&session.state.subscriptions);
                    call.invoke_async(c).await
                })
                .await?;
            match written {
                -1 => Ok(Lookup::Deleted),
                0 => Ok(Lookup::Found(())),
                _ => {
                    tracing::info!("re-created a shared session the store had lost");
                    self.announce(id);
                    Ok(Lookup::Found(()))
                }
            }
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
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
            self.announce(id);
            Ok(())
        })
    }

    fn claim<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Lookup<Claim>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
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
            self.announce(id);
            Ok(Lookup::Found(Claim {
                previous: Some(old).filter(|o| !o.is_empty()),
                last: seq_of(&top).map_or(0, |(s, _)| s),
                number,
            }))
        })
    }

    fn open_stream<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
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
        id: &'a str,
        stream: u64,
        after: u64,
        keep: Keep,
    ) -> BoxFuture<'a, Result<StreamTail, StoreError>> {
        Box::pin(self.read_log(id, stream, after, keep))
    }

    fn on_change(&self, handler: SessionChanged) {
        self.handlers.add(handler);
    }
}
