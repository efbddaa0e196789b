//! A bounded cache of directory listings, so that listing a tree again costs no system
//! call per file.
//!
//! A cached directory holds its exposed entries, sorted, with their metadata, and the
//! directory's own stamp (inode, modification and change times) taken before the scan.
//! Whether it is still current is decided here, in [`DirCache::lookup`], in one of two
//! ways (`fresh.rs`): while the file watcher vouches for its root, a listing scanned in
//! the watcher's current term is current until the watcher drops it
//! ([`DirCache::forget`]), with no system call; any other costs one `statx` of the
//! directory, and a different stamp means an entry was added, removed or renamed, and
//! the directory is scanned again.
//!
//! Invariants:
//! - Memory is bounded: at most `budget` entries in all, directories with more than
//!   [`MAX_CACHED_DIR`] entries are never cached (they are listed by bounded selection
//!   instead), and the oldest directories are evicted first.
//! - Staleness is bounded: additions, removals and renames are seen at once through the
//!   directory stamp, or, on the watcher's word, as soon as the watcher has read them;
//!   a change *inside* a file (its size, its modification time) is seen once the watcher
//!   has read it, and in any case after at most the time-to-live (which also bounds what
//!   no watcher reports: a symlink's target, a file changed through another hard link or
//!   a memory map).
//! - A listing is cached as trusted only if its scan began in a vouched-for term that
//!   is still current and no listing was dropped while it ran ([`Ticket`]): a change the
//!   watcher read during the scan, which the scan may have missed, leaves it to its stamp.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::entry::Entry;
use super::fresh::{Freshness, vouched};
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
    /// The vouched-for term it was scanned in, if it is trusted in it.
    term: Option<u64>,
}

/// A directory: its root's index and its path in that root. Ordered so that a directory
/// and everything below it are next to one another.
type Key = (usize, RelPath);

/// The cached directories, with the order they were cached in (the oldest is evicted
/// first), how many entries they hold together, and how many times listings were
/// dropped.
#[derive(Debug, Default)]
struct Cached {
    map: BTreeMap<Key, (u64, Arc<CachedDir>)>,
    order: BTreeMap<u64, Key>,
    next: u64,
    total: usize,
    drops: u64,
}

impl Cached {
    fn remove(&mut self, key: &Key) -> Option<Arc<CachedDir>> {
        let (seq, old) = self.map.remove(key)?;
        self.order.remove(&seq);
        self.total -= old.entries.len();
        Some(old)
    }
}

/// What a scan notes before it starts, so that its listing is trusted only if nothing
/// it may have missed happened meanwhile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    term: u64,
    drops: u64,
}

/// A lookup's answer: the current listing, or the stamp (and ticket) to cache a fresh
/// scan under.
pub(crate) enum Lookup {
    Hit(Arc<CachedDir>),
    Miss(Stamp, Ticket),
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

    /// The cached listing of `dir` if it is current: trusted on the watcher's word in
    /// root `root`'s current term, or else under the stamp `stamp` reads now (only then
    /// is it read). A miss says what to cache a fresh scan under.
    pub(crate) fn lookup(
        &self,
        fresh: &Freshness,
        root: usize,
        dir: &RelPath,
        stamp: impl FnOnce() -> io::Result<Stamp>,
    ) -> io::Result<Lookup> {
        let term = fresh.term(root);
        let (held, drops) = {
            let cached = self.lock();
            let held = cached
                .map
                .get(&(root, dir.clone()))
                .map(|(_, hit)| Arc::clone(hit))
                .filter(|hit| hit.filled.elapsed() < self.ttl);
            (held, cached.drops)
        };
        let current = match held {
            Some(hit) if vouched(term) && hit.term == Some(term) => hit,
            held => {
                #[cfg(test)]
                fresh
                    .stamps
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let now = stamp()?;
                match held.filter(|hit| hit.stamp == now) {
                    Some(hit) => hit,
                    None => {
                        rsrc::observe::cache_lookup("listing", "miss");
                        return Ok(Lookup::Miss(now, Ticket { term, drops }));
                    }
                }
            }
        };
        rsrc::observe::cache_lookup("listing", "hit");
        Ok(Lookup::Hit(current))
    }

    /// Caches the listing of `dir` scanned under `stamp` and `ticket` (both taken before
    /// the scan); and whether the cache kept it (not if it alone is over the budget).
    pub(crate) fn insert(
        &self,
        fresh: &Freshness,
        (root, dir): (usize, &RelPath),
        (stamp, ticket): (Stamp, Ticket),
        entries: Vec<Entry>,
    ) -> (Arc<CachedDir>, bool) {
        let mut stored = self.lock();
        let trusted =
            vouched(ticket.term) && fresh.term(root) == ticket.term && stored.drops == ticket.drops;
        let cached = Arc::new(CachedDir {
            entries,
            stamp,
            filled: Instant::now(),
            term: trusted.then_some(ticket.term),
        });
        if cached.entries.len() > self.budget {
            return (cached, false);
        }
        let key = (root, dir.clone());
        stored.remove(&key);
        let seq = stored.next;
        stored.next += 1;
        stored.order.insert(seq, key.clone());
        stored.map.insert(key, (seq, Arc::clone(&cached)));
        stored.total += cached.entries.len();
        while stored.total > self.budget {
            let Some((_, oldest)) = stored.order.pop_first() else {
                break;
            };
            if let Some((_, old)) = stored.map.remove(&oldest) {
                stored.total -= old.entries.len();
                rsrc::observe::cache_eviction("listing", "size");
            }
        }
        let kept = stored
            .map
            .get(&(root, dir.clone()))
            .is_some_and(|(_, now)| Arc::ptr_eq(now, &cached));
        (cached, kept)
    }

    /// Drops the listing of `dir` in root `root`, and with `below` every listing of a
    /// directory under it too; a scan running meanwhile is not trusted.
    pub(crate) fn forget(&self, root: usize, dir: &RelPath, below: bool) {
        let mut cached = self.lock();
        cached.drops += 1;
        let start = (root, dir.clone());
        let gone: Vec<Key> = if below {
            cached
                .map
                .range(start..)
                .map(|(key, _)| key)
                .take_while(|(r, path)| {
                    *r == root && path.components().starts_with(dir.components())
                })
                .cloned()
                .collect()
        } else {
            vec![start]
        };
        for key in &gone {
            if cached.remove(key).is_some() {
                rsrc::observe::cache_eviction("listing", "changed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::entry::{Info, Kind};
    use crate::fs::fresh::{FreshnessFallback, ListingFreshness};

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

    /// The entries of the listing of `dir` current under `stamp` (or trusted), if any.
    fn get(cache: &DirCache, fresh: &Freshness, dir: &RelPath, stamp: Stamp) -> Option<usize> {
        match cache.lookup(fresh, 0, dir, || Ok(stamp)).unwrap() {
            Lookup::Hit(hit) => Some(hit.entries.len()),
            Lookup::Miss(..) => None,
        }
    }

    /// Scans nothing, but caches `n` entries for `dir` as a scan starting now would.
    fn fill(cache: &DirCache, fresh: &Freshness, dir: &RelPath, n: usize) {
        let Lookup::Miss(stamp, ticket) = cache.lookup(fresh, 0, dir, || Ok(STAMP)).unwrap() else {
            panic!("{dir:?} is cached already");
        };
        cache.insert(fresh, (0, dir), (stamp, ticket), entries(n));
    }

    fn path(p: &str) -> RelPath {
        RelPath::from_position(p.as_bytes()).unwrap()
    }

    #[test]
    fn a_changed_stamp_or_an_old_entry_is_a_miss() {
        let fresh = Freshness::new(ListingFreshness::Stamp, 1);
        let cache = DirCache::new(100, Duration::from_secs(60));
        let dir = RelPath::root();
        fill(&cache, &fresh, &dir, 3);
        assert_eq!(get(&cache, &fresh, &dir, STAMP), Some(3));
        let later = Stamp {
            mtime: (2, 0),
            ..STAMP
        };
        assert_eq!(get(&cache, &fresh, &dir, later), None);
        let expired = DirCache::new(100, Duration::ZERO);
        fill(&expired, &fresh, &dir, 1);
        assert_eq!(get(&expired, &fresh, &dir, STAMP), None);
    }

    #[test]
    fn the_budget_evicts_the_oldest_directories() {
        let fresh = Freshness::new(ListingFreshness::Stamp, 1);
        let cache = DirCache::new(10, Duration::from_secs(60));
        let (a, b) = (path("a"), path("b"));
        fill(&cache, &fresh, &a, 6);
        fill(&cache, &fresh, &b, 6);
        assert_eq!(get(&cache, &fresh, &a, STAMP), None);
        assert_eq!(get(&cache, &fresh, &b, STAMP), Some(6));
        fill(&cache, &fresh, &a, 20);
        assert_eq!(
            get(&cache, &fresh, &a, STAMP),
            None,
            "larger than the whole budget"
        );
    }

    #[test]
    fn a_vouched_for_listing_needs_no_stamp_until_the_watcher_drops_it() {
        let fresh = Freshness::new(ListingFreshness::Watch, 1);
        let cache = DirCache::new(100, Duration::from_secs(60));
        let (a, ab, abc, b) = (path("a"), path("a/b"), path("a/b/c"), path("b"));
        let no_stamp = || -> io::Result<Stamp> { panic!("a stamp was read") };
        // Cached before the watcher vouched: checked by its stamp, even once it does.
        fill(&cache, &fresh, &b, 1);
        fresh.vouch(0);
        assert_eq!(get(&cache, &fresh, &b, STAMP), Some(1));
        for dir in [&a, &ab, &abc] {
            fill(&cache, &fresh, dir, 2);
        }
        for dir in [&a, &ab, &abc] {
            assert!(matches!(
                cache.lookup(&fresh, 0, dir, no_stamp),
                Ok(Lookup::Hit(_))
            ));
        }
        // A drop of one directory, then of a directory and everything below it.
        cache.forget(0, &abc, false);
        assert_eq!(get(&cache, &fresh, &abc, STAMP), None);
        fill(&cache, &fresh, &abc, 2);
        cache.forget(0, &ab, true);
        assert_eq!(get(&cache, &fresh, &ab, STAMP), None);
        assert_eq!(get(&cache, &fresh, &abc, STAMP), None);
        assert!(matches!(
            cache.lookup(&fresh, 0, &a, no_stamp),
            Ok(Lookup::Hit(_))
        ));
        // A scan during which a listing was dropped is cached, but not trusted.
        let Lookup::Miss(stamp, ticket) = cache.lookup(&fresh, 0, &ab, || Ok(STAMP)).unwrap()
        else {
            panic!("dropped");
        };
        cache.forget(0, &b, false);
        cache.insert(&fresh, (0, &ab), (stamp, ticket), entries(2));
        assert_eq!(get(&cache, &fresh, &ab, STAMP), Some(2), "by its stamp");
        // Once the watcher stops vouching, every listing is checked by its stamp, and
        // those of the ended term stay so when it vouches again.
        fresh.withdraw(None, FreshnessFallback::Overflow);
        let other = Stamp { ino: 8, ..STAMP };
        assert_eq!(get(&cache, &fresh, &a, other), None);
        fresh.vouch(0);
        assert_eq!(get(&cache, &fresh, &a, other), None);
        // The order of eviction forgets dropped listings too.
        let held = cache.lock();
        assert_eq!(held.order.len(), held.map.len(), "no stale places");
    }
}
