//! Scanning the next directories of a walk ahead of it: when a walk of the recursive
//! listing enters a directory the listing cache does not hold, the next
//! [`AHEAD_DIRS`] sibling directories it will enter are scanned into the cache on
//! blocking threads meanwhile, so a cold tree is scanned on several cores at once instead
//! of one directory after the other on the walk's thread. That is most of the cost of the
//! first listing of a tree (one `statx` per file), and the page that meets a cold
//! directory waits for the slowest scan only.
//!
//! Invariants:
//! - A scan ahead is an ordinary scan (`scan::scan_into_cache`): it takes its stamp and
//!   ticket before reading the directory and caches through `DirCache::insert`, so what it
//!   caches is exactly as fresh as what the walk would have scanned itself; a directory the
//!   cache would not take (too large) is not read whole.
//! - At most one scan ahead of a directory is in flight; a walk that reaches a directory
//!   whose scan ahead has started waits for it (one directory's worth of work), then reads
//!   the cache like any other lookup. One still queued is not waited for (the walk scans
//!   the directory itself, and the scan ahead then finds it cached), so a small blocking
//!   pool full of waiting walks cannot deadlock. A scan ahead never waits for anything,
//!   and its claim is released however it ends (even if its task never runs).
//! - Scans ahead answer no request and go no further than [`AHEAD_DIRS`] directories
//!   past the one a walk is in: memory stays what the walk itself would have cached a few
//!   directories later. Without a tokio runtime (or a listing cache) nothing is scanned
//!   ahead.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use crate::kit::rel_path::RelPath;

/// Sibling directories scanned ahead of the one a walk enters.
pub(crate) const AHEAD_DIRS: usize = 2;

/// A directory of a root.
type Key = (usize, RelPath);

/// The directories claimed for a scan ahead (and whether it has started), and a signal
/// when one is done.
#[derive(Debug, Default)]
pub(crate) struct Prefetch {
    in_flight: Mutex<HashMap<Key, bool>>,
    done: Condvar,
}

/// A directory claimed for a scan ahead: released when dropped (the scan done, or its task
/// dropped before it ran).
pub(crate) struct Claim {
    prefetch: Arc<Prefetch>,
    key: Option<Key>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut in_flight = self
                .prefetch
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            in_flight.remove(&key);
            drop(in_flight);
            self.prefetch.done.notify_all();
        }
    }
}

impl Claim {
    /// Notes that the scan has started: walks reaching the directory wait for it now.
    pub(crate) fn start(&self) {
        if let Some(key) = &self.key {
            let mut in_flight = self
                .prefetch
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(started) = in_flight.get_mut(key) {
                *started = true;
            }
        }
    }
}

impl Prefetch {
    /// Claims `dir` of root `index` for a scan ahead: `None` if one is in flight already.
    pub(crate) fn claim(self: &Arc<Self>, index: usize, dir: &RelPath) -> Option<Claim> {
        let key = (index, dir.clone());
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if in_flight.contains_key(&key) {
            return None;
        }
        in_flight.insert(key.clone(), false);
        Some(Claim {
            prefetch: Arc::clone(self),
            key: Some(key),
        })
    }

    /// Waits until no scan ahead is claimed (tests: readiness, not time).
    #[cfg(test)]
    pub(crate) fn idle(&self) {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !in_flight.is_empty() {
            in_flight = self
                .done
                .wait(in_flight)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits while a started scan ahead of `dir` of root `index` goes on; whether it did.
    pub(crate) fn wait(&self, index: usize, dir: &RelPath) -> bool {
        let key = (index, dir.clone());
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut waited = false;
        while in_flight.get(&key) == Some(&true) {
            waited = true;
            in_flight = self
                .done
                .wait(in_flight)
                .unwrap_or_else(PoisonError::into_inner);
        }
        waited
    }
}

/// What a walk calls to have a directory of its root scanned ahead (`Scope::ahead`).
pub(crate) struct AheadDirs<'a>(pub(crate) &'a (dyn Fn(&RelPath) + 'a));

impl std::fmt::Debug for AheadDirs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AheadDirs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_claimed_once_until_its_claim_is_dropped() {
        let prefetch = Arc::new(Prefetch::default());
        let dir = RelPath::root().join(std::ffi::OsStr::new("d"));
        let claim = prefetch.claim(0, &dir).expect("free");
        assert!(prefetch.claim(0, &dir).is_none(), "in flight");
        assert!(!prefetch.wait(0, &dir), "a queued scan is not waited for");
        assert!(prefetch.claim(1, &dir).is_some(), "another root's");
        drop(claim);
        assert!(!prefetch.wait(0, &dir), "nothing to wait for");
        assert!(prefetch.claim(0, &dir).is_some());
    }

    #[test]
    fn a_walk_waits_for_the_scan_ahead_of_its_directory() {
        let prefetch = Arc::new(Prefetch::default());
        let dir = RelPath::root().join(std::ffi::OsStr::new("d"));
        let claim = prefetch.claim(0, &dir).expect("free");
        claim.start();
        let (waiter, started) = {
            let (prefetch, dir) = (Arc::clone(&prefetch), dir.clone());
            let (tx, rx) = std::sync::mpsc::channel();
            let waiter = std::thread::spawn(move || {
                tx.send(()).unwrap();
                prefetch.wait(0, &dir)
            });
            (waiter, rx)
        };
        started.recv().unwrap();
        // Whether the waiter is parked yet or not, it returns only once the claim goes,
        // and says it waited if it found the scan in flight.
        drop(claim);
        let _waited = waiter.join().unwrap();
        assert!(!prefetch.wait(0, &dir));
    }
}
