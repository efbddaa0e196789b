//! The recursive listing's pages, kept with the cached directory listings they were
//! walked from, so that listing a page again through a tree that has not changed costs a
//! clone of the page, not a walk: no system call while the watcher vouches for the
//! listings, else a stamp per directory (one `statx`).
//!
//! Invariants:
//! - A kept page answers only while every directory its walk read is still the very
//!   listing the cache holds for it (the same allocation, current by the cache's rules:
//!   on the watcher's word or under a fresh stamp, and within the cache's time to live).
//!   A walk reads nothing else, so it would give the same page: a kept page is exactly as
//!   fresh as a walk through the cache, and an entry added, removed or renamed shows as
//!   soon as a walk would show it.
//! - A walk that read a directory the cache does not hold (too large for it, or no cache),
//!   or that failed to read one, is not kept.
//! - Memory is bounded: the kept pages cost at most the listing cache's budget in all,
//!   counting each page's files and the listings its walk read (and an empty page as one),
//!   and are dropped together past it. They refer to the cached listings weakly, so the
//!   entries of a listing the cache evicts are freed as they would be without them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rsrc::ListEntry;

use super::cache::CachedDir;
use crate::kit::rel_path::RelPath;

/// A directory listing a walk read: its root's index, its path and the cached listing.
type Read = (usize, RelPath, Weak<CachedDir>);

/// What one walk read, as it goes (shared by the scopes of its roots).
#[derive(Debug)]
pub(crate) struct Visits {
    read: Vec<Read>,
    /// False once the walk read a directory that is not cached, or failed to read one.
    whole: bool,
}

impl Visits {
    pub(crate) fn new() -> RefCell<Visits> {
        RefCell::new(Visits {
            read: Vec::new(),
            whole: true,
        })
    }

    /// The walk read `dir` of root `root` from the cached `listing`.
    pub(crate) fn read(&mut self, root: usize, dir: &RelPath, listing: &Arc<CachedDir>) {
        self.read.push((root, dir.clone(), Arc::downgrade(listing)));
    }

    /// The walk read a directory the cache does not hold, or failed to read one.
    pub(crate) fn missed(&mut self) {
        self.whole = false;
    }
}

/// A page and what its walk read.
struct KeptPage {
    resources: Vec<ListEntry>,
    next: Option<Vec<u8>>,
    read: Vec<Read>,
}

impl KeptPage {
    /// What the page counts against the budget.
    fn cost(&self) -> usize {
        self.resources.len().max(1) + self.read.len()
    }
}

/// Where a page starts (after which position, none for the first) and its size limit.
type Start = (Option<Vec<u8>>, usize);

#[derive(Default)]
struct Kept {
    pages: HashMap<Start, Arc<KeptPage>>,
    /// What the pages cost in all ([`KeptPage::cost`]).
    cost: usize,
}

/// The kept pages of the recursive listing.
pub(crate) struct KeptPages {
    kept: Mutex<Kept>,
    budget: usize,
}

impl std::fmt::Debug for KeptPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptPages")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl KeptPages {
    /// Pages costing at most `budget` in all.
    pub(crate) fn new(budget: usize) -> KeptPages {
        KeptPages {
            kept: Mutex::new(Kept::default()),
            budget,
        }
    }

    /// What the kept pages cost in all.
    #[cfg(test)]
    pub(crate) fn cost(&self) -> usize {
        self.lock().cost
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The page after `after` of at most `limit` files, with where the next one starts, if
    /// it is kept and every listing its walk read is still `current(root, dir)`; a kept
    /// page found out of date is dropped.
    pub(crate) fn get(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        current: impl Fn(usize, &RelPath) -> Option<Arc<CachedDir>>,
    ) -> Option<(Vec<ListEntry>, Option<Vec<u8>>)> {
        let start = (after.map(<[u8]>::to_vec), limit);
        let page = self.lock().pages.get(&start).cloned()?;
        let fresh = page.read.iter().all(|(root, dir, listing)| {
            current(*root, dir).is_some_and(|now| std::ptr::eq(Arc::as_ptr(&now), listing.as_ptr()))
        });
        if !fresh {
            let mut kept = self.lock();
            if kept
                .pages
                .get(&start)
                .is_some_and(|p| Arc::ptr_eq(p, &page))
            {
                kept.pages.remove(&start);
                kept.cost -= page.cost();
            }
            return None;
        }
        Some((page.resources.clone(), page.next.clone()))
    }

    /// Keeps the page after `after` of at most `limit` files, if its walk read only cached
    /// listings.
    pub(crate) fn keep(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        resources: &[ListEntry],
        next: Option<&[u8]>,
        visits: RefCell<Visits>,
    ) {
        let visits = visits.into_inner();
        if !visits.whole {
            return;
        }
        let page = Arc::new(KeptPage {
            resources: resources.to_vec(),
            next: next.map(<[u8]>::to_vec),
            read: visits.read,
        });
        let cost = page.cost();
        if cost > self.budget {
            return;
        }
        let mut kept = self.lock();
        if kept.cost + cost > self.budget {
            *kept = Kept::default();
        }
        kept.cost += cost;
        if let Some(old) = kept.pages.insert((after.map(<[u8]>::to_vec), limit), page) {
            kept.cost -= old.cost();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_pages_past_the_budget_are_dropped_together() {
        // Each page: its files, plus the listings its walk read (none here).
        let kept = KeptPages::new(3);
        let entries = |n: usize| -> Vec<ListEntry> {
            (0..n)
                .map(|i| {
                    ListEntry::encoded(rsrc::protocol::Resource::new(format!("t:///{i}"), "x"))
                })
                .collect()
        };
        let none = |_: usize, _: &RelPath| None;
        kept.keep(None, 2, &entries(2), Some(b"a"), Visits::new());
        assert_eq!(kept.get(None, 2, none).unwrap().0.len(), 2);
        kept.keep(Some(b"a"), 2, &entries(2), None, Visits::new());
        assert!(
            kept.get(None, 2, none).is_none(),
            "the first page was dropped"
        );
        assert!(kept.get(Some(b"a"), 2, none).is_some());
        assert_eq!(kept.cost(), 2);
        // A walk that missed a directory is not kept.
        let missed = Visits::new();
        missed.borrow_mut().missed();
        kept.keep(Some(b"b"), 2, &entries(1), None, missed);
        assert!(kept.get(Some(b"b"), 2, none).is_none());
    }
}
