//! [`SessionStore`] on Redis. A session `ID` is the hash `NAMESPACE:session:ID`
//! (owner, version, client, init, level, holder, the count of POST streams, and the
//! writer `wN` of each), the set `…:subs`, and one Redis Stream per SSE stream, `…:sN`,
//! whose entries have the id `SEQ-0` (field `f`: the SSE frame) and end with `LAST-1`
//! (field `end`). Every key expires after `idle` without use.
//!
//! Invariants: log entries are written by one task, in the order they were queued, so a
//! stream's end follows its events; an entry Redis refuses (an older writer of stream 0
//! racing the new holder) is skipped; a change to a record is announced on the bus's
//! channel only after Redis accepted it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::aio::MultiplexedConnection;
use tokio::sync::mpsc;

use super::{Out, Shared, connect};
use crate::bus::RETAINED_STREAMS;
use crate::bus::{
    Claim, SessionChanged, SessionState, SessionStore, StoreError, StoredEvent, StoredSession,
    StreamTail,
};
use crate::provider::BoxFuture;

/// Log entries waiting to be written.
const LOG_QUEUE: usize = 8192;
/// Most entries read back in one resumption.
const MAX_READ: usize = 16_384;

/// Sessions on the bus's Redis.
pub(super) struct RedisSessions {
    shared: Arc<Shared>,
    idle: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
    logs: mpsc::Sender<Entry>,
}

enum Entry {
    Event(StoredEvent),
    End {
        session: String,
        stream: u64,
        last: u64,
    },
}

fn err(e: &redis::RedisError) -> StoreError {
    StoreError(format!("Redis: {e}"))
}

impl RedisSessions {
    pub(super) fn new(shared: Arc<Shared>, idle: Duration) -> Self {
        let (logs, rx) = mpsc::channel(LOG_QUEUE);
        shared
            .runtime
            .spawn(write_logs(Arc::downgrade(&shared), rx, millis(idle)));
        RedisSessions {
            shared,
            idle,
            conn: Mutex::new(None),
            logs,
        }
    }

    fn key(&self, id: &str) -> String {
        format!("{}:session:{id}", self.shared.options.namespace)
    }

    fn ttl(&self) -> u64 {
        millis(self.idle)
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

/// `SEQ` of a stream entry id `SEQ-N`.
fn seq_of(entry_id: &str) -> Option<(u64, u64)> {
    let (s, n) = entry_id.split_once('-')?;
    Some((s.parse().ok()?, n.parse().ok()?))
}

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        &self.shared.id
    }

    fn idle(&self) -> Duration {
        self.idle
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
                    .del(&[&key, &format!("{key}:subs"), &format!("{key}:s0")])
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
    ) -> BoxFuture<'a, Result<Option<StoredSession>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let subs = format!("{key}:subs");
            let ttl = self.ttl() as i64;
            let (fields, mut members): (HashMap<String, String>, Vec<String>) = self
                .with(async |c| {
                    let mut p = redis::pipe();
                    p.hgetall(&key).smembers(&subs);
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
                return Ok(None);
            }
            members.sort();
            let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
            Ok(Some(StoredSession {
                owner: field("owner"),
                version: field("version"),
                client: field("client"),
                state: SessionState {
                    initialized: field("init") == "1",
                    log_level: Some(field("level")).filter(|l| !l.is_empty()),
                    subscriptions: members,
                },
                holder: Some(field("holder")).filter(|h| !h.is_empty()),
                claims: field("claims").parse().unwrap_or(0),
            }))
        })
    }

    fn touch<'a>(&'a self, ids: &'a [String]) -> BoxFuture<'a, Result<Vec<bool>, StoreError>> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let ttl = self.ttl() as i64;
            self.with(async |c| {
                let mut p = redis::pipe();
                for id in ids {
                    let key = self.key(id);
                    p.pexpire(&key, ttl)
                        .pexpire(format!("{key}:subs"), ttl)
                        .ignore()
                        .pexpire(format!("{key}:s0"), ttl)
                        .ignore();
                }
                p.query_async::<Vec<bool>>(c).await
            })
            .await
        })
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        before: &'a SessionState,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let subs = format!("{key}:subs");
            let ttl = self.ttl() as i64;
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
            self.with(async |c| {
                let mut p = redis::pipe();
                p.atomic()
                    .cmd("HSET")
                    .arg(&key)
                    .arg("init")
                    .arg(u8::from(state.initialized))
                    .arg("level")
                    .arg(state.log_level.as_deref().unwrap_or(""))
                    .ignore();
                if !added.is_empty() {
                    p.sadd(&subs, &added).ignore();
                }
                if !removed.is_empty() {
                    p.srem(&subs, &removed).ignore();
                }
                p.pexpire(&key, ttl)
                    .ignore()
                    .pexpire(&subs, ttl)
                    .ignore()
                    .query_async::<()>(c)
                    .await
            })
            .await?;
            self.announce(id);
            Ok(())
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        const DELETE: &str = "local n = tonumber(redis.call('hget', KEYS[1], 'streams') or '0') \
            redis.call('del', KEYS[1], KEYS[1] .. ':subs', KEYS[1] .. ':s0') \
            for i = math.max(1, n - tonumber(ARGV[1])), n do \
              redis.call('del', KEYS[1] .. ':s' .. i) end \
            return 1";
        Box::pin(async move {
            let key = self.key(id);
            self.with(async |c| {
                redis::Script::new(DELETE)
                    .key(&key)
                    .arg(RETAINED_STREAMS)
                    .invoke_async::<i64>(c)
                    .await
            })
            .await?;
            self.announce(id);
            Ok(())
        })
    }

    fn claim<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Claim, StoreError>> {
        const CLAIM: &str = "if redis.call('exists', KEYS[1]) == 0 then return false end \
            local old = redis.call('hget', KEYS[1], 'holder') or '' \
            redis.call('hset', KEYS[1], 'holder', ARGV[1]) \
            local number = redis.call('hincrby', KEYS[1], 'claims', 1) \
            local last = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1) \
            local top = '0-0' \
            if last[1] then top = last[1][1] end \
            return {old, top, number}";
        Box::pin(async move {
            let key = self.key(id);
            let got: Option<(String, String, u64)> = self
                .with(async |c| {
                    redis::Script::new(CLAIM)
                        .key(&key)
                        .key(format!("{key}:s0"))
                        .arg(&self.shared.id)
                        .invoke_async(c)
                        .await
                })
                .await?;
            let Some((old, top, number)) = got else {
                return Err(StoreError("the session no longer exists".into()));
            };
            self.announce(id);
            Ok(Claim {
                previous: Some(old).filter(|o| !o.is_empty()),
                last: seq_of(&top).map_or(0, |(s, _)| s),
                number,
            })
        })
    }

    fn open_stream<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        const OPEN: &str = "if redis.call('exists', KEYS[1]) == 0 then return 0 end \
            local n = redis.call('hincrby', KEYS[1], 'streams', 1) \
            redis.call('hset', KEYS[1], 'w' .. n, ARGV[1]) \
            local old = n - tonumber(ARGV[2]) \
            if old > 0 then \
              redis.call('del', KEYS[1] .. ':s' .. old) \
              redis.call('hdel', KEYS[1], 'w' .. old) end \
            return n";
        Box::pin(async move {
            let key = self.key(id);
            let n: u64 = self
                .with(async |c| {
                    redis::Script::new(OPEN)
                        .key(&key)
                        .arg(&self.shared.id)
                        .arg(RETAINED_STREAMS)
                        .invoke_async(c)
                        .await
                })
                .await?;
            if n == 0 {
                return Err(StoreError("the session no longer exists".into()));
            }
            Ok(n)
        })
    }

    fn append(&self, event: StoredEvent) {
        if self.logs.try_send(Entry::Event(event)).is_err() {
            tracing::debug!("the shared replay log queue is full: an event is kept here only");
        }
    }

    fn end_stream(&self, session: &str, stream: u64, last: u64) {
        let _ = self.logs.try_send(Entry::End {
            session: session.to_owned(),
            stream,
            last,
        });
    }

    fn read<'a>(
        &'a self,
        id: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<StreamTail, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            type Entries = Vec<(String, Vec<(String, Vec<u8>)>)>;
            let (entries, writer): (Entries, Option<String>) = self
                .with(async |c| {
                    redis::pipe()
                        .cmd("XRANGE")
                        .arg(format!("{key}:s{stream}"))
                        .arg(format!("({after}-0"))
                        .arg("+")
                        .arg("COUNT")
                        .arg(MAX_READ)
                        .hget(&key, format!("w{stream}"))
                        .query_async(c)
                        .await
                })
                .await?;
            let mut tail = StreamTail::default();
            for (entry, fields) in entries {
                let Some((seq, n)) = seq_of(&entry) else {
                    continue;
                };
                for (name, value) in fields {
                    match (name.as_str(), n) {
                        ("f", 0) => tail.events.push((seq, Bytes::from(value))),
                        ("end", _) => tail.ended = true,
                        _ => {}
                    }
                }
            }
            tail.known = stream == 0 || tail.ended || !tail.events.is_empty() || writer.is_some();
            tail.writer_alive = match writer {
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
            Ok(tail)
        })
    }

    fn on_change(&self, handler: SessionChanged) {
        self.shared
            .session_handlers
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(handler);
    }
}

/// Writes queued log entries, in order, pipelined; entries that find Redis away are kept
/// only by the instance that wrote them.
async fn write_logs(shared: Weak<Shared>, mut rx: mpsc::Receiver<Entry>, ttl: u64) {
    let mut conn: Option<MultiplexedConnection> = None;
    let mut batch = Vec::with_capacity(256);
    let mut warned = false;
    loop {
        if rx.recv_many(&mut batch, 256).await == 0 {
            return;
        }
        let Some(s) = shared.upgrade() else { return };
        if conn.is_none() {
            conn = connect(&s.client, s.options.timeout).await.ok();
        }
        let ns = &s.options.namespace;
        let mut p = redis::pipe();
        p.ignore_errors();
        for entry in batch.drain(..) {
            let (key, id) = match &entry {
                Entry::Event(e) => (format!("{ns}:session:{}:s{}", e.session, e.stream), e.seq),
                Entry::End {
                    session,
                    stream,
                    last,
                } => (format!("{ns}:session:{session}:s{stream}"), *last),
            };
            match entry {
                Entry::Event(e) => p
                    .cmd("XADD")
                    .arg(&key)
                    .arg("MINID")
                    .arg("=")
                    .arg(format!("{}-0", e.oldest))
                    .arg(format!("{id}-0"))
                    .arg("f")
                    .arg(&e.frame[..]),
                Entry::End { .. } => p
                    .cmd("XADD")
                    .arg(&key)
                    .arg(format!("{id}-1"))
                    .arg("end")
                    .arg(1),
            };
            p.pexpire(&key, ttl as i64);
        }
        let Some(c) = conn.as_mut() else {
            if !warned {
                tracing::warn!("cannot reach Redis: replay logs are kept on this instance only");
                warned = true;
            }
            continue;
        };
        match p.query_async::<redis::Value>(c).await {
            Ok(_) => warned = false,
            Err(e) => {
                if !warned {
                    tracing::warn!(error = %e, "cannot write replay logs to Redis: they are kept on this instance only");
                    warned = true;
                }
                conn = None;
            }
        }
    }
}
