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

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::aio::MultiplexedConnection;
use redis::{Script, Value};
use tokio::sync::{Notify, mpsc};

use super::{BusState, Out, SessionHandlers, connect};
use crate::bus::RETAINED_STREAMS;
use crate::bus::{
    Claim, Keep, Lookup, Revision, SessionChanged, SessionState, SessionStore, StoreError,
    StoredEvent, StoredSession, StreamTail,
};
use crate::provider::BoxFuture;

/// Log entries waiting to be written.
const LOG_QUEUE: usize = 8192;
/// Log entries written per round trip.
const LOG_BATCH: usize = 256;
/// Stream entries read per round trip.
const PAGE: usize = 4096;
/// Most pages read for one stream (a stream is bounded by its writer's settings; this
/// only bounds the work should it not be).
const MAX_PAGES: usize = 4096;
/// Ends of streams kept to be written later: those that did not fit in the queue, and
/// those that found Redis away.
const MAX_PENDING_ENDS: usize = 1024;

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

#[derive(Default)]
struct PendingEnds {
    ends: Mutex<VecDeque<Entry>>,
    added: Notify,
}

impl PendingEnds {
    fn push(&self, entry: Entry) -> bool {
        let mut ends = self.ends.lock().unwrap_or_else(PoisonError::into_inner);
        if ends.len() >= MAX_PENDING_ENDS {
            return false;
        }
        ends.push_back(entry);
        drop(ends);
        self.added.notify_one();
        true
    }

    fn take(&self) -> Vec<Entry> {
        self.ends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect()
    }
}

enum Entry {
    Event(StoredEvent),
    End {
        session: String,
        stream: u64,
        last: u64,
    },
}

impl Entry {
    fn session(&self) -> &str {
        match self {
            Entry::Event(e) => &e.session,
            Entry::End { session, .. } => session,
        }
    }
}

/// The scripts, hashed once.
struct Scripts {
    touch: Script,
    save: Script,
    restore: Script,
    delete: Script,
    claim: Script,
    open: Script,
}

/// Restarts a session's expiry: 1 if it exists, 0 if deleted, -1 if missing.
const TOUCH: &str = r"
if redis.call('pexpire', KEYS[1], ARGV[1]) == 1 then
  redis.call('pexpire', KEYS[2], ARGV[1])
  redis.call('pexpire', KEYS[3], ARGV[1])
  return 1
end
if redis.call('exists', KEYS[4]) == 1 then return 0 end
return -1";

/// Applies one request's changes; the merged state and its revision, or -1 (deleted),
/// 0 (missing). ARGV: ttl, init ('1': became true), level changed ('1'), level, the
/// number of subscriptions added, those, then those removed.
const SAVE: &str = r"
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[3]) == 1 then return -1 end
  return 0
end
if ARGV[2] == '1' then redis.call('hset', KEYS[1], 'init', '1') end
if ARGV[3] == '1' then redis.call('hset', KEYS[1], 'level', ARGV[4]) end
local n = tonumber(ARGV[5])
for i = 6, 5 + n do redis.call('sadd', KEYS[2], ARGV[i]) end
for i = 6 + n, #ARGV do redis.call('srem', KEYS[2], ARGV[i]) end
local rev = redis.call('hincrby', KEYS[1], 'rev', 1)
redis.call('pexpire', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[1])
return {rev, redis.call('hget', KEYS[1], 'init') or '0',
        redis.call('hget', KEYS[1], 'level') or '', redis.call('smembers', KEYS[2])}";

/// Re-creates a lost session from a copy: -1 if deleted meanwhile, 1 if anything was
/// written, 0 if a record at least as recent was there (taking its holder if it had
/// none). ARGV: ttl, holder (this instance, or ''), owner, version, client, init,
/// level, claims, rev, streams, subscriptions.
const RESTORE: &str = r"
if redis.call('exists', KEYS[3]) == 1 then return -1 end
local exists = redis.call('exists', KEYS[1]) == 1
local claims = tonumber(ARGV[8])
local streams = tonumber(ARGV[10])
if exists then
  claims = math.max(claims, tonumber(redis.call('hget', KEYS[1], 'claims') or '0'))
  streams = math.max(streams, tonumber(redis.call('hget', KEYS[1], 'streams') or '0'))
  redis.call('hset', KEYS[1], 'streams', streams)
  local holder = redis.call('hget', KEYS[1], 'holder') or ''
  if tonumber(redis.call('hget', KEYS[1], 'rev') or '0') >= tonumber(ARGV[9]) then
    if ARGV[2] ~= '' and holder == '' then
      redis.call('hset', KEYS[1], 'holder', ARGV[2], 'claims', claims + 1)
      return 1
    end
    return 0
  end
end
local holder = ARGV[2]
if holder ~= '' then
  claims = claims + 1
elseif exists then
  holder = redis.call('hget', KEYS[1], 'holder') or ''
end
redis.call('hset', KEYS[1], 'owner', ARGV[3], 'version', ARGV[4], 'client', ARGV[5],
  'init', ARGV[6], 'level', ARGV[7], 'holder', holder, 'claims', claims, 'rev', ARGV[9],
  'streams', streams)
redis.call('del', KEYS[2])
for i = 11, #ARGV do redis.call('sadd', KEYS[2], ARGV[i]) end
redis.call('pexpire', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[1])
return 1";

/// Deletes a session and its streams, leaving the tombstone.
const DELETE: &str = r"
local n = tonumber(redis.call('hget', KEYS[1], 'streams') or '0')
redis.call('del', KEYS[1], KEYS[2], KEYS[1] .. ':s0')
for i = math.max(1, n - tonumber(ARGV[1])), n do
  redis.call('del', KEYS[1] .. ':s' .. i)
end
redis.call('set', KEYS[3], '1', 'PX', ARGV[2])
return 1";

/// Makes ARGV[1] the holder: {previous holder, top entry of stream 0, claim number},
/// or -1 (deleted), 0 (missing).
const CLAIM: &str = r"
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[3]) == 1 then return -1 end
  return 0
end
local old = redis.call('hget', KEYS[1], 'holder') or ''
redis.call('hset', KEYS[1], 'holder', ARGV[1])
local number = redis.call('hincrby', KEYS[1], 'claims', 1)
local last = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1)
local top = '0-0'
if last[1] then top = last[1][1] end
return {old, top, number}";

/// Numbers a new POST stream written by ARGV[1], forgetting the oldest beyond ARGV[2].
const OPEN: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return 0 end
local n = redis.call('hincrby', KEYS[1], 'streams', 1)
redis.call('hset', KEYS[1], 'w' .. n, ARGV[1])
local old = n - tonumber(ARGV[2])
if old > 0 then
  redis.call('del', KEYS[1] .. ':s' .. old)
  redis.call('hdel', KEYS[1], 'w' .. old)
end
return n";

/// Writes one log entry: 1 written, 0 refused (stream 0 of a session another instance
/// holds), -1 (the session does not exist), -2 (out of order). A stream-0 entry for a
/// session nobody holds makes this instance its holder. ARGV: 'e' (event) or 'x' (end),
/// seq, oldest kept, frame, ttl, this instance, '1' for stream 0.
const LOG: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
if ARGV[7] == '1' then
  local h = redis.call('hget', KEYS[1], 'holder') or ''
  if h == '' then
    redis.call('hset', KEYS[1], 'holder', ARGV[6])
    redis.call('hincrby', KEYS[1], 'claims', 1)
  elseif h ~= ARGV[6] then
    return 0
  end
end
local r
if ARGV[1] == 'e' then
  r = redis.pcall('xadd', KEYS[2], 'MINID', '=', ARGV[3] .. '-0', ARGV[2] .. '-0',
    'f', ARGV[4], 'o', ARGV[3])
else
  r = redis.pcall('xadd', KEYS[2], ARGV[2] .. '-1', 'end', '1')
end
if type(r) == 'table' and r.err then return -2 end
redis.call('pexpire', KEYS[2], ARGV[5])
return 1";

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
            scripts: Scripts {
                touch: Script::new(TOUCH),
                save: Script::new(SAVE),
                restore: Script::new(RESTORE),
                delete: Script::new(DELETE),
                claim: Script::new(CLAIM),
                open: Script::new(OPEN),
            },
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
        Box::pin(async move {
            let key = self.key(id);
            let log = format!("{key}:s{stream}");
            let (first, top, writer): (Entries, Entries, Option<String>) = self
                .with(async |c| {
                    redis::pipe()
                        .cmd("XRANGE")
                        .arg(&log)
                        .arg(format!("({after}-1"))
                        .arg("+")
                        .arg("COUNT")
                        .arg(PAGE)
                        .cmd("XREVRANGE")
                        .arg(&log)
                        .arg("+")
                        .arg("-")
                        .arg("COUNT")
                        .arg(1)
                        .hget(&key, format!("w{stream}"))
                        .query_async(c)
                        .await
                })
                .await?;
            let mut reader = TailReader::new(after, keep);
            let mut page = first;
            for _ in 0..MAX_PAGES {
                let full = page.len() >= PAGE;
                let Some(last_id) = page.last().map(|(id, _)| id.clone()) else {
                    break;
                };
                reader.take(page);
                if !full {
                    break;
                }
                page = self
                    .with(async |c| {
                        redis::cmd("XRANGE")
                            .arg(&log)
                            .arg(format!("({last_id}"))
                            .arg("+")
                            .arg("COUNT")
                            .arg(PAGE)
                            .query_async(c)
                            .await
                    })
                    .await?;
            }
            // The end, even when the position is past it (a client naming an event the
            // stream never had).
            let end = top
                .first()
                .and_then(|(id, _)| seq_of(id))
                .filter(|(_, n)| *n == 1)
                .map(|(last, _)| last);
            let writer_alive = match &writer {
                None => stream == 0,
                Some(w) => {
                    let lease = format!("{}:lease:instance:{w}", self.shared.options.namespace);
                    self.with(async |c| {
                        redis::cmd("EXISTS")
                            .arg(&lease)
                            .query_async::<bool>(c)
                            .await
                    })
                    .await?
                }
            };
            Ok(reader.finish(end, stream == 0 || writer.is_some(), writer_alive))
        })
    }

    fn on_change(&self, handler: SessionChanged) {
        self.handlers.add(handler);
    }
}

/// Reads a stream's entries page by page: keeps the newest within the bounds, and sees
/// holes.
struct TailReader {
    after: u64,
    keep: Keep,
    events: VecDeque<(u64, Bytes)>,
    bytes: usize,
    /// The first event read, and the last.
    first: Option<u64>,
    last: Option<u64>,
    /// The oldest event the writer kept, as of the newest event.
    trimmed_to: u64,
    hole: bool,
}

impl TailReader {
    fn new(after: u64, keep: Keep) -> Self {
        TailReader {
            after,
            keep,
            events: VecDeque::new(),
            bytes: 0,
            first: None,
            last: None,
            trimmed_to: 0,
            hole: false,
        }
    }

    fn take(&mut self, page: Entries) {
        for (entry, mut fields) in page {
            let Some((seq, 0)) = seq_of(&entry) else {
                continue;
            };
            let Some(frame) = fields.remove("f") else {
                continue;
            };
            if let Some(prev) = self.last
                && seq != prev.saturating_add(1)
            {
                self.hole = true;
            }
            self.first.get_or_insert(seq);
            self.last = Some(seq);
            self.trimmed_to = fields
                .get("o")
                .and_then(|o| std::str::from_utf8(o).ok()?.parse().ok())
                .unwrap_or(0);
            self.bytes += frame.len();
            self.events.push_back((seq, Bytes::from(frame)));
            while self.events.len() > 1
                && (self.events.len() > self.keep.events.max(1) || self.bytes > self.keep.bytes)
            {
                if let Some((_, old)) = self.events.pop_front() {
                    self.bytes -= old.len();
                }
            }
        }
    }

    /// `end`: the stream's end marker (its last event), if it has one.
    fn finish(self, end: Option<u64>, writer_known: bool, writer_alive: bool) -> StreamTail {
        let next = self.after.saturating_add(1);
        let mut broken = self.hole;
        match (self.first, self.last) {
            // Entries present are those from the writer's trim point on: the first after
            // the position is the next one, or the oldest kept.
            (Some(first), Some(last)) => {
                broken |= first != next.max(self.trimmed_to);
                broken |= end.is_some_and(|e| e != last);
            }
            // No event after the position, though the stream ended after it.
            _ => broken |= end.is_some_and(|e| e > self.after),
        }
        let known = writer_known || end.is_some() || self.first.is_some();
        StreamTail {
            events: self.events.into(),
            ended: end.is_some(),
            known,
            writer_alive,
            broken,
        }
    }
}

/// Writes queued log entries, in order, pipelined. Entries that find Redis away are kept
/// only by the instance that wrote them (the stored stream then has a hole), except
/// ends, which are tried again; an instance refused stream 0 of a session (another holds
/// it) has its copy reloaded.
async fn write_logs(
    shared: Weak<BusState>,
    mut rx: mpsc::Receiver<Entry>,
    ttl: u64,
    pending: Arc<PendingEnds>,
) {
    let log = Script::new(LOG);
    let mut conn: Option<MultiplexedConnection> = None;
    let mut batch: Vec<Entry> = Vec::with_capacity(LOG_BATCH);
    // Ends that found Redis away.
    let mut retry: Vec<Entry> = Vec::new();
    let mut warned = false;
    loop {
        if batch.is_empty() {
            let waiting = !retry.is_empty();
            tokio::select! {
                n = rx.recv_many(&mut batch, LOG_BATCH) => if n == 0 { return },
                () = pending.added.notified() => {}
                () = tokio::time::sleep(Duration::from_secs(1)), if waiting => {}
            }
        }
        let Some(s) = shared.upgrade() else { return };
        // Ends tried again first (their streams have nothing after them), then what was
        // queued, then the ends that did not fit in the queue once it is empty.
        let mut entries: Vec<Entry> = std::mem::take(&mut retry);
        entries.append(&mut batch);
        if rx.is_empty() {
            entries.extend(pending.take());
        }
        if entries.is_empty() {
            continue;
        }
        if conn.is_none() {
            conn = connect(&s.client, s.options.timeout).await.ok();
        }
        let ns = &s.options.namespace;
        let mut p = redis::pipe();
        p.load_script(&log).ignore();
        for entry in &entries {
            let session = format!("{ns}:session:{}", entry.session());
            let mut call = log.key(&session);
            match entry {
                Entry::Event(e) => call
                    .key(format!("{session}:s{}", e.stream))
                    .arg("e")
                    .arg(e.seq)
                    .arg(e.oldest)
                    .arg(&e.frame[..])
                    .arg(ttl)
                    .arg(&s.id)
                    .arg(if e.stream == 0 { "1" } else { "0" }),
                Entry::End { stream, last, .. } => call
                    .key(format!("{session}:s{stream}"))
                    .arg("x")
                    .arg(*last)
                    .arg(0)
                    .arg("")
                    .arg(ttl)
                    .arg(&s.id)
                    .arg("0"),
            };
            p.invoke_script(&call);
        }
        let result = match conn.as_mut() {
            Some(c) => p.query_async::<Vec<i64>>(c).await,
            None => Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "not connected",
            ))),
        };
        match result {
            Ok(results) => {
                warned = false;
                let mut refused = HashSet::new();
                for (entry, r) in entries.iter().zip(results) {
                    if r == 0 {
                        refused.insert(entry.session().to_owned());
                    }
                }
                for id in refused {
                    tracing::debug!(
                        "another instance holds a session's stream: this one stops writing it"
                    );
                    s.sessions_changed(Some(&id));
                }
            }
            Err(e) => {
                if !warned {
                    tracing::warn!(error = %e, "cannot write replay logs to Redis: they are kept on this instance only");
                    warned = true;
                }
                conn = None;
                retry = entries
                    .into_iter()
                    .filter(|e| matches!(e, Entry::End { .. }))
                    .take(MAX_PENDING_ENDS)
                    .collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Entries, Keep, TailReader};
    use std::collections::HashMap;

    fn entry(seq: u64, n: u64, oldest: u64) -> (String, HashMap<String, Vec<u8>>) {
        let mut fields = HashMap::new();
        if n == 0 {
            fields.insert("f".to_owned(), format!("id: 1-{seq}\n").into_bytes());
            fields.insert("o".to_owned(), oldest.to_string().into_bytes());
        } else {
            fields.insert("end".to_owned(), b"1".to_vec());
        }
        (format!("{seq}-{n}"), fields)
    }

    fn tail(after: u64, page: Entries, end: Option<u64>) -> super::StreamTail {
        let mut r = TailReader::new(
            after,
            Keep {
                events: 100,
                bytes: 1 << 20,
            },
        );
        r.take(page);
        r.finish(end, true, true)
    }

    #[test]
    fn a_stored_stream_with_a_hole_is_broken() {
        let whole = tail(
            2,
            vec![entry(3, 0, 1), entry(4, 0, 1), entry(4, 1, 0)],
            Some(4),
        );
        assert!(!whole.broken && whole.ended);
        assert_eq!(whole.events.len(), 2);
        // 4 lost between 3 and 5.
        assert!(tail(2, vec![entry(3, 0, 1), entry(5, 0, 1)], None).broken);
        // 3 lost right after the position.
        assert!(tail(2, vec![entry(4, 0, 1), entry(5, 0, 1)], None).broken);
        // The writer dropped 1 to 4 itself (its bounds): not a hole.
        assert!(!tail(2, vec![entry(5, 0, 5), entry(6, 0, 5)], None).broken);
        // The end says 6, the last event read is 5.
        assert!(
            tail(
                2,
                vec![entry(3, 0, 1), entry(4, 0, 1), entry(5, 0, 1)],
                Some(6)
            )
            .broken
        );
        // Nothing after the position, though the stream ended later.
        assert!(tail(2, Vec::new(), Some(4)).broken);
        // A position past the end: ended, nothing missing.
        let past = tail(9, Vec::new(), Some(4));
        assert!(past.ended && !past.broken && past.events.is_empty());
        // The numbers at the very top do not overflow.
        assert!(!tail(u64::MAX, Vec::new(), None).broken);
        assert!(
            tail(u64::MAX - 1, vec![entry(u64::MAX, 0, 1)], None)
                .events
                .len()
                == 1
        );
    }

    #[test]
    fn a_reader_keeps_the_newest_within_its_bounds() {
        let mut r = TailReader::new(
            0,
            Keep {
                events: 2,
                bytes: 1 << 20,
            },
        );
        r.take((1..=5).map(|s| entry(s, 0, 1)).collect());
        let t = r.finish(None, true, true);
        assert!(!t.broken);
        assert_eq!(t.events.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [4, 5]);
    }
}
