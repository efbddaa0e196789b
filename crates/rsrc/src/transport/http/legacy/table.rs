//! The legacy sessions of one endpoint: the table of this instance's copies, its cap,
//! and expiry.
//!
//! Invariants:
//! - At most `max` sessions are kept. At the cap, expired sessions go first, then the
//!   least recently used one that is not busy (nothing in flight, no stream attached); if
//!   every session is busy, none is registered.
//! - A busy session never expires; an idle one expires after `idle`, and is ended at its
//!   next lookup even before the periodic expiry comes by (with a store, an expired copy
//!   must not serve, or put back, a session that expired there).
//! - A session in the table is ended (requests cancelled, streams closed) when it
//!   leaves it, and only then; a lookup records the use under the table's lock, so expiry and
//!   eviction cannot end a session between its lookup and its use.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::session::HttpSession;
use crate::bus::{Lookup, SessionStore};

type Map = RwLock<HashMap<Arc<str>, Arc<HttpSession>>>;

/// The legacy sessions of one endpoint.
pub(in crate::transport::http) struct Sessions {
    map: Arc<Map>,
    epoch: Instant,
    max: usize,
    idle: Duration,
    /// Shared with the other instances, if the server's bus holds sessions.
    pub(super) store: Option<Arc<dyn SessionStore>>,
    /// Sessions to reload, one at a time ([`reload`](super::reload)); started with the first.
    pub(super) reloads: OnceLock<mpsc::Sender<Option<String>>>,
    /// The queue overflowed: reload every copy.
    pub(super) reload_all: AtomicBool,
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
    pub(in crate::transport::http) fn new(
        max: usize,
        idle: Duration,
        store: Option<Arc<dyn SessionStore>>,
    ) -> Self {
        Sessions {
            map: Arc::new(RwLock::new(HashMap::new())),
            epoch: Instant::now(),
            max: max.max(1),
            idle,
            store,
            reloads: OnceLock::new(),
            reload_all: AtomicBool::new(false),
        }
    }

    pub(in crate::transport::http) fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.store.as_ref()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(in crate::transport::http) fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The copy of session `id`, unless it has expired (it is ended then, even if the
    /// periodic expiry has not come by yet: with a store, such a copy must not put back
    /// a session that expired there).
    pub(super) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let s = map.get(id)?;
        if !self.fresh(s) {
            let stale = Arc::clone(s);
            drop(map);
            let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
            if map.get(id).is_some_and(|now| Arc::ptr_eq(now, &stale)) {
                tracing::debug!(session = %id, "session expired");
                map.remove(id);
                stale.end();
            }
            return None;
        }
        // Touched under the lock: expiry and eviction, which take it for writing, cannot
        // end a session between its lookup and its use being recorded.
        s.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(Arc::clone(s))
    }

    /// The copies to reload: `id`'s, or all of them.
    pub(super) fn copies(&self, id: Option<&str>) -> Vec<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        match id {
            Some(id) => map.get(id).cloned().into_iter().collect(),
            None => map.values().cloned().collect(),
        }
    }

    /// Whether the store's copy of `s` should be touched (and checked) now: a few times
    /// per idle period, so that it outlives every use.
    pub(super) fn touch_due(&self, s: &HttpSession) -> bool {
        let now = self.now_ms();
        let every = u64::try_from((self.idle / 8).as_millis()).unwrap_or(u64::MAX);
        let last = s.touched_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < every {
            return false;
        }
        s.touched_ms.store(now, Ordering::Relaxed);
        true
    }

    /// Registers a session, making room at the cap; the session registered under its
    /// id (an earlier copy wins), or `None` if every session is busy.
    pub(super) fn insert(&self, session: Arc<HttpSession>) -> Option<Arc<HttpSession>> {
        let now = self.now_ms();
        session.last_used_ms.store(now, Ordering::Relaxed);
        session.touched_ms.store(now, Ordering::Relaxed);
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = map.get(&session.id) {
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
                .map(|s| Arc::clone(&s.id));
            match victim.and_then(|id| map.remove(&id)) {
                Some(old) => {
                    tracing::info!("session cap reached: ended the least recently used session");
                    old.end();
                }
                None => return None,
            }
        }
        map.insert(Arc::clone(&session.id), Arc::clone(&session));
        Some(session)
    }

    /// Ends this instance's copy of a session.
    pub(super) fn remove(&self, id: &str) {
        end_copy(&self.map, id);
    }

    /// Whether a copy is still in use here (it would not expire now).
    pub(super) fn fresh(&self, s: &HttpSession) -> bool {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        s.busy()
            || self
                .now_ms()
                .saturating_sub(s.last_used_ms.load(Ordering::Relaxed))
                < idle
    }

    /// Ends idle sessions; with a store, also keeps the stored copies of busy ones alive
    /// (a GET stream can stay open longer than the idle period), ending those deleted
    /// elsewhere and re-creating those the store lost.
    pub(in crate::transport::http) fn expire(&self) {
        let now = self.now_ms();
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        self.expire_locked(&mut map, now);
        let Some(store) = &self.store else { return };
        let busy: Vec<String> = map
            .values()
            .filter(|s| s.busy())
            .map(|s| s.id.to_string())
            .collect();
        drop(map);
        if let (false, Ok(rt)) = (busy.is_empty(), tokio::runtime::Handle::try_current()) {
            let store = Arc::clone(store);
            let map = Arc::downgrade(&self.map);
            let reloads = self.reloads.get().cloned();
            rt.spawn(async move {
                let found = match store.touch(&busy).await {
                    Ok(found) => found,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot keep busy sessions alive in the store");
                        return;
                    }
                };
                for (id, found) in busy.iter().zip(found) {
                    match found {
                        Lookup::Found(()) => {}
                        Lookup::Deleted => {
                            tracing::debug!(session = %id, "session ended on another instance");
                            if let Some(map) = map.upgrade() {
                                end_copy(&map, id);
                            }
                        }
                        // The reloader re-creates it from this copy.
                        Lookup::Missing => {
                            if let Some(q) = &reloads {
                                let _ = q.try_send(Some(id.clone()));
                            }
                        }
                    }
                }
            });
        }
    }

    fn expire_locked(&self, map: &mut HashMap<Arc<str>, Arc<HttpSession>>, now: u64) {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        map.retain(|_, s| {
            let fresh = now.saturating_sub(s.last_used_ms.load(Ordering::Relaxed)) < idle;
            let keep = fresh || s.busy();
            if !keep {
                tracing::debug!(session = %s.id, "session expired");
                s.end();
            }
            keep
        });
    }

    pub(in crate::transport::http) fn end_all(&self) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        for (_, s) in map.drain() {
            s.end();
        }
    }
}

/// Ends the copy of session `id` in `map`, if there is one.
fn end_copy(map: &Map, id: &str) {
    let removed = map
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id);
    if let Some(s) = removed {
        s.end();
    }
}
