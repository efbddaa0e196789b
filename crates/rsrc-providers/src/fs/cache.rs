//! A bounded cache of directory listings, so that listing a tree again costs no system
//! call per file.
//!
//! A cached directory holds its exposed entries, sorted, with their metadata, and the
//! directory's own stamp (inode, modification and change times) taken before the scan.
//! Using it costs one `statx` of the directory: a different stamp means an entry was
//! added, removed or renamed, and the directory is scanned again.
//!
//! Invariants:
//! - Memory is bounded: at most `budget` entries in all, directories with more than
//!   [`MAX_CACHED_DIR`] entries are never cached (they are listed by bounded selection
//!   instead), and the oldest directories are evicted first.
//! - Staleness is bounded: additions, removals and renames are seen at once through the
//!   directory stamp; a change *inside* a file (its size, its modification time) is seen
//!   after at most the time-to-live.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::entry::Entry;
use crate::kit::rel_path::RelPath;

/// Directories with more entries than this are never cached.
pub(crate) const MAX_CACHED_DIR: usize = 65_536;

/// What identifies one state of a directory's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// Seconds and nanoseconds.
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

#[derive(Debug)]
pub(crate) struct CachedDir {
    pub(crate) entries: Vec<Entry>,
    stamp: Stamp,
    filled: Instant,
}

/// A directory: its root's index and its path in that root.
type Key = (usize, RelPath);

/// The cached directories, in the order they were cached (the oldest is evicted first),
/// and how many entries they hold together.
#[derive(Debug, Default)]
struct Cached {
    map: HashMap<Key, Arc<CachedDir>>,
    order: VecDeque<Key>,
    total: usize,
}

/// Cached directory listings.
#[derive(Debug)]
pub(crate) struct DirCache {
    cached: Mutex<Cached>,
    budget: usize,
    ttl: Duration,
}

impl DirCache {
    pub(crate) fn new(budget: usize, ttl: Duration) -> DirCache {
        DirCache {
            cached: Mutex::new(Cached::default()),
            budget,
            ttl,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached listing of `dir`, if it is still current for `stamp`.
    pub(crate) fn get(&self, root: usize, dir: &RelPath, stamp: Stamp) -> Option<Arc<CachedDir>> {
        let cached = self.lock();
        let hit = cached
            .map
            .get(&(root, dir.clone()))
            .filter(|hit| hit.stamp == stamp && hit.filled.elapsed() < self.ttl)
            .map(Arc::clone);
        rsrc::observe::cache_lookup("listing", if hit.is_some() { "hit" } else { "miss" });
        hit
    }

    /// Caches the listing of `dir` scanned under `stamp` (taken before the scan); and
    /// whether the cache kept it (not if it alone is over the budget).
    pub(crate) fn insert(
        &self,
        root: usize,
        dir: &RelPath,
        stamp: Stamp,
        entries: Vec<Entry>,
    ) -> (Arc<CachedDir>, bool) {
        let cached = Arc::new(CachedDir {
            entries,
            stamp,
            filled: Instant::now(),
        });
        if cached.entries.len() > self.budget {
            return (cached, false);
        }
        let mut stored = self.lock();
        let key = (root, dir.clone());
        if let Some(old) = stored.map.insert(key.clone(), Arc::clone(&cached)) {
            stored.total -= old.entries.len();
        } else {
            stored.order.push_back(key.clone());
        }
        stored.total += cached.entries.len();
        while stored.total > self.budget {
            let Some(oldest) = stored.order.pop_front() else {
                break;
            };
            if let Some(old) = stored.map.remove(&oldest) {
                stored.total -= old.entries.len();
                rsrc::observe::cache_eviction("listing", "size");
            }
        }
        let kept = stored
            .map
            .get(&key)
            .is_some_and(|now| Arc::ptr_eq(now, &cached));
        (cached, kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::entry::{Info, Kind};

    fn entries(n: usize) -> Vec<Entry> {
        (0..n)
            .map(|i| Entry {
                name: std::ffi::OsStr::new(&format!("f{i}")).into(),
                kind: Kind::File,
                info: Info {
                    is_dir: false,
                    len: 1,
                    modified: None,
                },
                listed: Default::default(),
            })
            .collect()
    }

    const STAMP: Stamp = Stamp {
        dev: 1,
        ino: 7,
        mtime: (1, 0),
        ctime: (1, 0),
    };

    #[test]
    fn a_changed_stamp_or_an_old_entry_is_a_miss() {
        let cache = DirCache::new(100, Duration::from_secs(60));
        let dir = RelPath::root();
        cache.insert(0, &dir, STAMP, entries(3));
        assert_eq!(cache.get(0, &dir, STAMP).unwrap().entries.len(), 3);
        let later = Stamp {
            mtime: (2, 0),
            ..STAMP
        };
        assert!(cache.get(0, &dir, later).is_none());
        let expired = DirCache::new(100, Duration::ZERO);
        expired.insert(0, &dir, STAMP, entries(1));
        assert!(expired.get(0, &dir, STAMP).is_none());
    }

    #[test]
    fn the_budget_evicts_the_oldest_directories() {
        let cache = DirCache::new(10, Duration::from_secs(60));
        let a = RelPath::from_position(b"a").unwrap();
        let b = RelPath::from_position(b"b").unwrap();
        cache.insert(0, &a, STAMP, entries(6));
        cache.insert(0, &b, STAMP, entries(6));
        assert!(cache.get(0, &a, STAMP).is_none());
        assert!(cache.get(0, &b, STAMP).is_some());
        cache.insert(0, &a, STAMP, entries(20));
        assert!(
            cache.get(0, &a, STAMP).is_none(),
            "larger than the whole budget"
        );
    }
}
