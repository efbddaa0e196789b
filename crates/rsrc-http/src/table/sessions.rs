//! The legacy sessions of one endpoint: the table of this instance's copies, keyed by
//! the sessions' names, its cap, eviction, and expiry.
//!
//! Invariants:
//! - A session is found by its name, a keyed digest of its id and of the identity that
//!   created it ([`Sessions::names`]): with a store, under the store's keys (the names
//!   every instance computes alike); without, under a key of this process.
//! - At most `max` sessions are kept. At the cap, expired sessions go first, then the
//!   least recently used one that is not busy (nothing in flight, no stream attached); if
//!   every session is busy, none is registered.
//! - An evicted session ends everywhere: it is deleted from the store (a tombstone), and
//!   until the store has said so, this instance refuses to load it back.
//! - A busy session never expires; an idle one expires after `idle`, and is ended at its
//!   next lookup even before the periodic expiry comes by (with a store, an expired copy
//!   must not serve, or put back, a session that expired there).
//! - A session in the table is ended (requests cancelled, streams closed) when it
//!   leaves it, and only then; a lookup records the use under the table's lock, so expiry and
//!   eviction cannot end a session between its lookup and its use.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use rsrc::keyring::Keyring;
use rsrc::sessions::{Lookup, SessionStore};

use super::session::{HttpSession, owner_bytes};
use crate::auth::Owner;

type Map = RwLock<HashMap<Arc<str>, Arc<HttpSession>>>;

/// The most evicted sessions remembered until the store has deleted them.
const MAX_EVICTED: usize = 4096;

/// Reloads asked for and not done yet, coalesced: each session's once, and all of them
/// once however often asked (`legacy::reload`).
#[derive(Debug, Default)]
pub(crate) struct Reloads {
    pending: Mutex<Pending>,
    pub(crate) asked: Notify,
    /// The task doing them runs.
    pub(crate) started: AtomicBool,
    /// Cancelled when the sessions are dropped: the task ends.
    pub(crate) closed: tokio_util::sync::CancellationToken,
}

#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Every copy.
    pub(crate) all: bool,
    /// These copies, in the order asked, each once.
    pub(crate) names: VecDeque<Arc<str>>,
    queued: HashSet<Arc<str>>,
}

/// Sessions waiting beyond which every copy is reloaded instead.
const MAX_PENDING_RELOADS: usize = 1024;

impl Reloads {
    /// Asks for session `name`'s copy (every copy for `None`) to be reloaded.
    pub(crate) fn ask(&self, name: Option<&str>) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        match name {
            None => p.all = true,
            Some(_) if p.all => {}
            Some(_) if p.queued.len() >= MAX_PENDING_RELOADS => {
                p.all = true;
                p.names.clear();
                p.queued.clear();
            }
            Some(name) => {
                if !p.queued.contains(name) {
                    let name: Arc<str> = name.into();
                    p.queued.insert(Arc::clone(&name));
                    p.names.push_back(name);
                }
            }
        }
        drop(p);
        self.asked.notify_one();
    }

    /// What was asked for since the last time.
    pub(crate) fn take(&self) -> Pending {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The legacy sessions of one endpoint.
pub(crate) struct Sessions {
    map: Arc<Map>,
    epoch: Instant,
    max: usize,
    idle: Duration,
    /// Shared with the other instances, if the server's bus holds sessions.
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    /// Names sessions without a store (none when the random source failed: no session
    /// can be named then, and `initialize` is refused).
    local: Option<Keyring>,
    /// Sessions this instance evicted and the store has not deleted yet: not loaded back.
    evicted: Arc<Mutex<VecDeque<Arc<str>>>>,
    /// Copies to reload (`legacy::reload`).
    pub(crate) reloads: Arc<Reloads>,
}

impl Drop for Sessions {
    fn drop(&mut self) {
        self.reloads.closed.cancel();
    }
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("max", &self.max)
            .field("shared", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration, store: Option<Arc<dyn SessionStore>>) -> Self {
        Sessions {
            map: Arc::new(RwLock::new(HashMap::new())),
            epoch: Instant::now(),
            max: max.max(1),
            idle,
            store,
            local: Keyring::random()
                .inspect_err(|e| tracing::error!("no 2025 HTTP session can be created: {e}"))
                .ok(),
            evicted: Arc::default(),
            reloads: Arc::default(),
        }
    }

    pub(crate) fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.store.as_ref()
    }

    /// The names session `id` created by `owner` may have, the one a new session takes
    /// first: the store's, or this process's own.
    pub(crate) fn names(&self, id: &str, owner: Option<Owner>) -> Vec<Arc<str>> {
        let owner = owner_bytes(owner);
        match &self.store {
            Some(store) => store
                .names(id, &owner)
                .into_iter()
                .map(Into::into)
                .collect(),
            None => self
                .local
                .iter()
                .map(|k| k.tag(&[id.as_bytes(), &owner]).into())
                .collect(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The copy of session `name`, unless it has expired (it is ended then, even if the
    /// periodic expiry has not come by yet: with a store, such a copy must not put back
    /// a session that expired there).
    pub(crate) fn get(&self, name: &str) -> Option<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let s = map.get(name)?;
        if !self.fresh(s) {
            let stale = Arc::clone(s);
            drop(map);
            let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
            if map.get(name).is_some_and(|now| Arc::ptr_eq(now, &stale)) {
                tracing::debug!(session = %name, "session expired");
                map.remove(name);
                stale.end();
            }
            return None;
        }
        // Touched under the lock: expiry and eviction, which take it for writing, cannot
        // end a session between its lookup and its use being recorded.
        s.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(Arc::clone(s))
    }

    /// The copies to reload: `name`'s, or all of them.
    pub(crate) fn copies(&self, name: Option<&str>) -> Vec<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        match name {
            Some(name) => map.get(name).cloned().into_iter().collect(),
            None => map.values().cloned().collect(),
        }
    }

    /// Whether the store's copy of `s` should be touched (and checked) now: a few times
    /// per idle period, so that it outlives every use.
    pub(crate) fn touch_due(&self, s: &HttpSession) -> bool {
        let now = self.now_ms();
        let every = u64::try_from((self.idle / 8).as_millis()).unwrap_or(u64::MAX);
        let last = s.touched_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < every {
            return false;
        }
        s.touched_ms.store(now, Ordering::Relaxed);
        true
    }

    /// Whether this instance evicted session `name` and the store has not deleted it yet.
    pub(crate) fn evicted(&self, name: &str) -> bool {
        self.evicted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|e| &**e == name)
    }

    /// Registers a session, making room at the cap; the session registered under its
    /// name (an earlier copy wins), or `None` if every session is busy.
    pub(crate) fn insert(&self, session: Arc<HttpSession>) -> Option<Arc<HttpSession>> {
        let now = self.now_ms();
        session.last_used_ms.store(now, Ordering::Relaxed);
        session.touched_ms.store(now, Ordering::Relaxed);
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = map.get(&session.name) {
            return Some(Arc::clone(existing));
        }
        if map.len() >= self.max {
            self.expire_locked(&mut map, now);
        }
        if map.len() >= self.max {
            let victim = map
                .values()
                .filter(|s| !s.busy())
                .min_by_key(|s| s.last_used_ms.load(Ordering::Relaxed))
                .map(|s| Arc::clone(&s.name));
            match victim.and_then(|name| map.remove(&name)) {
                Some(old) => {
                    tracing::info!("session cap reached: ended the least recently used session");
                    old.end();
                    self.end_everywhere(&old.name);
                }
                None => return None,
            }
        }
        map.insert(Arc::clone(&session.name), Arc::clone(&session));
        Some(session)
    }

    /// Deletes an evicted session from the store, so that no instance serves it again;
    /// until that is done, this one refuses to load it back (and tries again at the next
    /// expiry round).
    fn end_everywhere(&self, name: &Arc<str>) {
        let Some(store) = &self.store else { return };
        {
            let mut evicted = self.evicted.lock().unwrap_or_else(PoisonError::into_inner);
            if evicted.len() >= MAX_EVICTED {
                evicted.pop_front();
            }
            evicted.push_back(Arc::clone(name));
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, evicted, name) = (
            Arc::clone(store),
            Arc::downgrade(&self.evicted),
            Arc::clone(name),
        );
        rt.spawn(async move {
            delete_evicted(&*store, &evicted, &name).await;
        });
    }

    /// Ends this instance's copy of a session.
    pub(crate) fn remove(&self, name: &str) {
        end_copy(&self.map, name);
    }

    /// Whether a copy is still in use here (it would not expire now).
    pub(crate) fn fresh(&self, s: &HttpSession) -> bool {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        s.busy()
            || self
                .now_ms()
                .saturating_sub(s.last_used_ms.load(Ordering::Relaxed))
                < idle
    }

    /// Ends idle sessions; with a store, also keeps the stored copies of busy ones alive
    /// (a GET stream can stay open longer than the idle period), ending those deleted
    /// elsewhere and re-creating those the store lost, and deletes the evicted sessions
    /// the store could not delete yet.
    pub(crate) fn expire(&self) {
        let now = self.now_ms();
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        self.expire_locked(&mut map, now);
        let Some(store) = &self.store else { return };
        let busy: Vec<String> = map
            .values()
            .filter(|s| s.busy())
            .map(|s| s.name.to_string())
            .collect();
        drop(map);
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let evicted: Vec<Arc<str>> = self
            .evicted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if !evicted.is_empty() {
            let (store, pending) = (Arc::clone(store), Arc::downgrade(&self.evicted));
            rt.spawn(async move {
                for name in evicted {
                    delete_evicted(&*store, &pending, &name).await;
                }
            });
        }
        if busy.is_empty() {
            return;
        }
        let store = Arc::clone(store);
        let map = Arc::downgrade(&self.map);
        let reloads = Arc::downgrade(&self.reloads);
        rt.spawn(async move {
            let found = match store.touch(&busy).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::debug!(error = %e, "cannot keep busy sessions alive in the store");
                    return;
                }
            };
            for (name, found) in busy.iter().zip(found) {
                match found {
                    Lookup::Found(()) => {}
                    Lookup::Deleted => {
                        tracing::debug!(session = %name, "session ended on another instance");
                        if let Some(map) = map.upgrade() {
                            end_copy(&map, name);
                        }
                    }
                    // The reloader re-creates it from this copy.
                    Lookup::Missing => {
                        if let Some(r) = reloads.upgrade() {
                            r.ask(Some(name));
                        }
                    }
                }
            }
        });
    }

    fn expire_locked(&self, map: &mut HashMap<Arc<str>, Arc<HttpSession>>, now: u64) {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        map.retain(|_, s| {
            let fresh = now.saturating_sub(s.last_used_ms.load(Ordering::Relaxed)) < idle;
            let keep = fresh || s.busy();
            if !keep {
                tracing::debug!(session = %s.name, "session expired");
                s.end();
            }
            keep
        });
    }

    pub(crate) fn end_all(&self) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        for (_, s) in map.drain() {
            s.end();
        }
    }
}

/// Deletes evicted session `name` from the store; once done, forgets that it was
/// evicted (the store's tombstone says so from then on).
async fn delete_evicted(
    store: &dyn SessionStore,
    evicted: &std::sync::Weak<Mutex<VecDeque<Arc<str>>>>,
    name: &Arc<str>,
) {
    match store.delete(name).await {
        Ok(()) => {
            if let Some(evicted) = evicted.upgrade() {
                evicted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|e| e != name);
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, "cannot delete an evicted session from the store yet");
        }
    }
}

/// Ends the copy of session `name` in `map`, if there is one.
fn end_copy(map: &Map, name: &str) {
    let removed = map
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(name);
    if let Some(s) = removed {
        s.end();
    }
}
