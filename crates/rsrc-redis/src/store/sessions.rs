//! The session store on Redis ([`RedisSessions`]): a `rsrc::sessions::SessionStore`
//! whose every change is one script, tagged and bound as `records.rs` says, announced on
//! the bus's channel by name once Redis accepted it. See the folder's documentation
//! (`store/mod.rs`) for the keys and the invariants.
//!
//! Invariants: a save changes only the fields its request changed and never re-creates
//! a session that no longer exists; nothing read back is believed without its tag or
//! beyond its bounds (what is refused is counted on the bus); a change is announced
//! only after Redis accepted it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use rsrc::BoxFuture;
use rsrc::sessions::{
    Claim, Keep, Lookup, RETAINED_STREAMS, Revision, SessionChanged, SessionState, SessionStore,
    StoreError, StoredEvent, StoredSession, StreamTail,
};
use tokio::sync::mpsc;

use super::conn::{StoreConn, unexpected};
use super::layout::{
    MAX_ENTRY, MAX_FIELD, MAX_FIELDS, MAX_MEMBER_BYTES, MAX_MEMBERS, key_ttl, lookup, seq_of,
    session_key,
};
use super::logs::{Entry, LOG_QUEUE, PendingEnds, read_log, write_logs};
use super::records::{record_of, session_state, subscriptions, tagged, tagged_with, untagged};
use super::scripts::Scripts;
use crate::state::{BusState, SessionHandlers};
use crate::wire::Out;

/// Sessions on the bus's Redis.
pub(crate) struct RedisSessions {
    shared: Arc<BusState>,
    idle: Duration,
    conn: StoreConn,
    logs: mpsc::Sender<Entry>,
    /// Ends that did not fit in the queue, written once it is empty.
    ends: Arc<PendingEnds>,
    /// This store's [`SessionStore::on_change`] handlers (the bus holds them weakly).
    handlers: Arc<SessionHandlers>,
    scripts: Scripts,
}

impl RedisSessions {
    pub(crate) fn new(shared: Arc<BusState>, idle: Duration) -> Self {
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
            conn: StoreConn::new(shared.client.clone(), shared.options.timeout),
            shared,
            idle,
            logs,
            ends,
            handlers,
            scripts: Scripts::new(),
        }
    }

    fn key(&self, name: &str) -> String {
        session_key(&self.shared.options.namespace, name)
    }

    fn ttl(&self) -> u64 {
        key_ttl(self.idle)
    }

    fn tag(&self, name: &str, field: &str, value: &str) -> String {
        tagged(&self.shared.keys.fields, name, field, value)
    }

    fn announce(&self, name: &str) {
        self.shared.send(Out::Session(name.to_owned()));
    }
}

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        &self.shared.id
    }

    fn names(&self, id: &str, owner: &[u8]) -> Vec<String> {
        let keys = &self.shared.keys.names;
        (0..keys.key_count())
            .map(|i| keys.tag_with(i, &[id.as_bytes(), owner]))
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
            self.conn
                .with(async |c| {
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
                .conn
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
                .conn
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
                .flat_map(|u| {
                    (0..keys.key_count()).map(move |i| tagged_with(keys, i, name, "sub", u))
                })
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
                .conn
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
                session_state(
                    verified("init", &init).as_deref() == Some("1"),
                    verified("level", &level),
                    subscriptions(keys, name, &members, &|what, why| {
                        self.shared.rejected_stored(what, why);
                    }),
                ),
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
                .conn
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
            self.conn
                .with(async |c| {
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
                .conn
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
            let mut claim = Claim::default();
            claim.previous = Some(old).filter(|o| !o.is_empty());
            claim.last = seq_of(&top).map_or(0, |(s, _)| s);
            claim.number = number;
            Ok(Lookup::Found(claim))
        })
    }

    fn open_stream<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let key = self.key(name);
            let n: u64 = self
                .conn
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
        Box::pin(read_log(
            &self.conn,
            &self.shared,
            name,
            stream,
            after,
            keep,
        ))
    }

    fn on_change(&self, handler: SessionChanged) {
        self.handlers.add(handler);
    }
}
