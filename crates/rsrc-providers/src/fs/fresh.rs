//! How the provider knows that a cached listing is still current: by its directory's
//! stamp (one `statx`), or, while the file watcher vouches for the root, by the watcher
//! alone.
//!
//! The watcher vouches for a root while its watches cover every exposed directory of the
//! root and it has lost no event since they were placed. It drops the cached listing of
//! every directory a change touches as soon as it reads the change, before publishing it
//! (`watch.rs`), so a listing answered without a stamp reflects every change the watcher
//! has delivered.
//!
//! Invariants:
//! - Trust is per root and per term: each time the watcher starts or stops vouching for a
//!   root, the root's term moves on (odd terms are vouched for, even ones are not). A
//!   cached listing is answered without a stamp only if it was scanned wholly within the
//!   root's current vouched-for term, with no listing dropped during its scan
//!   (`cache.rs`, `Ticket`); every other listing is checked by its stamp, exactly as in
//!   [`ListingFreshness::Stamp`] mode. A listing cached before an overflow (or any other
//!   fallback) is therefore never trusted again: trust comes back only for directories
//!   scanned anew once the watches are whole again.
//! - In [`ListingFreshness::Stamp`] mode no term is ever vouched for.
//! - Every fallback is counted by reason ([`FreshnessFallback`]), from the one place that
//!   ends a term ([`Freshness::withdraw`]): both in the provider
//!   ([`ListingTrust::fallbacks`]) and as the metric
//!   `rsrc_listing_freshness_fallbacks_total{reason}` ([`rsrc::observe::listing_fallback`]),
//!   so the two never disagree. The reasons' label words are the metrics catalogue's
//!   ([`rsrc::observe::LISTING_FALLBACK_REASONS`]), not written again here.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a filesystem provider knows that a listing it cached is still current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListingFreshness {
    /// Trust the file watcher while it is armed and has lost nothing: a cached listing is
    /// answered without a system call, and the watcher drops it as soon as it reads a
    /// change to its directory (before the change is published). Where the watcher cannot
    /// vouch (not armed yet, an overflow, an error, a directory it cannot watch, a
    /// filesystem without change events), listings fall back to [`Stamp`](Self::Stamp).
    /// The default.
    #[default]
    Watch,
    /// Check each cached directory's stamp (one `statx`: inode, modification and change
    /// times) every time it is listed. For mounts over network filesystems, whose changes
    /// made elsewhere raise no event here.
    Stamp,
}

impl ListingFreshness {
    /// The name of the mode, as `rsrc serve --listing-freshness` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ListingFreshness::Watch => "watch",
            ListingFreshness::Stamp => "stamp",
        }
    }
}

impl std::str::FromStr for ListingFreshness {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "watch" => Ok(ListingFreshness::Watch),
            "stamp" => Ok(ListingFreshness::Stamp),
            other => Err(format!(
                "unknown listing freshness {other:?}: expected \"watch\" or \"stamp\""
            )),
        }
    }
}

/// Why listings of a root fell back from trusting the watcher to stamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FreshnessFallback {
    /// The kernel's event queue overflowed (`IN_Q_OVERFLOW`): events were lost.
    Overflow,
    /// Reading events failed: the watcher starts again.
    Error,
    /// The watch table is full (`fs.inotify.max_user_watches`): some directories are not
    /// watched.
    WatchLimit,
    /// A directory, or a whole root, cannot be watched (unreadable, no inotify, no
    /// `/proc`).
    Unwatchable,
    /// A directory lies on a filesystem whose changes are not all reported to this
    /// machine's watchers (NFS, SMB, FUSE, 9p, Ceph, AFS, cluster filesystems, procfs).
    NoEvents,
    /// A watched directory moved or was unmounted, or an ignore file changed: the root's
    /// watches are rebuilt.
    Rebuild,
}

impl FreshnessFallback {
    /// Every reason, in a fixed order.
    pub const ALL: [FreshnessFallback; 6] = [
        FreshnessFallback::Overflow,
        FreshnessFallback::Error,
        FreshnessFallback::WatchLimit,
        FreshnessFallback::Unwatchable,
        FreshnessFallback::NoEvents,
        FreshnessFallback::Rebuild,
    ];

    /// The reason as the label of `rsrc_listing_freshness_fallbacks_total`: its name in
    /// snake case (`watch_limit`), the word at its position in the metrics catalogue's
    /// [`LISTING_FALLBACK_REASONS`](rsrc::observe::LISTING_FALLBACK_REASONS).
    pub fn as_str(self) -> &'static str {
        rsrc::observe::LISTING_FALLBACK_REASONS[self.index()]
    }

    /// Its position in [`ALL`](Self::ALL), and in the catalogue's list of words.
    fn index(self) -> usize {
        match self {
            FreshnessFallback::Overflow => 0,
            FreshnessFallback::Error => 1,
            FreshnessFallback::WatchLimit => 2,
            FreshnessFallback::Unwatchable => 3,
            FreshnessFallback::NoEvents => 4,
            FreshnessFallback::Rebuild => 5,
        }
    }
}

// A word for every reason, and a reason for every word.
const _: () =
    assert!(FreshnessFallback::ALL.len() == rsrc::observe::LISTING_FALLBACK_REASONS.len());

/// Whether the watcher vouches for each root, and the fallbacks so far.
#[derive(Debug)]
pub(crate) struct Freshness {
    mode: ListingFreshness,
    /// Each root's term: odd while the watcher vouches for it.
    terms: Box<[AtomicU64]>,
    fallbacks: [AtomicU64; FreshnessFallback::ALL.len()],
    /// Stamps taken (one `statx` each), for the tests.
    #[cfg(test)]
    pub(crate) stamps: std::sync::atomic::AtomicUsize,
}

/// Whether `term` is one the watcher vouches for.
pub(crate) fn vouched(term: u64) -> bool {
    term % 2 == 1
}

impl Freshness {
    /// `roots` roots, none vouched for yet.
    pub(crate) fn new(mode: ListingFreshness, roots: usize) -> Freshness {
        Freshness {
            mode,
            terms: (0..roots).map(|_| AtomicU64::new(0)).collect(),
            fallbacks: Default::default(),
            #[cfg(test)]
            stamps: Default::default(),
        }
    }

    /// The current term of `root`.
    pub(crate) fn term(&self, root: usize) -> u64 {
        self.terms
            .get(root)
            .map_or(0, |t| t.load(Ordering::Acquire))
    }

    /// The watcher's watches cover `root` whole and it has lost nothing since they were
    /// placed: a new vouched-for term begins, unless one is running (or the mode is
    /// [`ListingFreshness::Stamp`]).
    pub(crate) fn vouch(&self, root: usize) {
        if self.mode == ListingFreshness::Stamp {
            return;
        }
        if let Some(term) = self.terms.get(root) {
            let _ = term.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                (!vouched(t)).then_some(t + 1)
            });
        }
    }

    /// The watcher no longer vouches for `root` (every root for `None`), for `reason`:
    /// its term ends, if one was running, and the fallback is counted either way, here
    /// and in `rsrc_listing_freshness_fallbacks_total`.
    pub(crate) fn withdraw(&self, root: Option<usize>, reason: FreshnessFallback) {
        let roots = match root {
            Some(r) => r..r + 1,
            None => 0..self.terms.len(),
        };
        for term in self.terms.get(roots).unwrap_or_default() {
            let _ = term.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                vouched(t).then_some(t + 1)
            });
        }
        self.fallbacks[reason.index()].fetch_add(1, Ordering::Relaxed);
        rsrc::observe::listing_fallback(reason.as_str());
        tracing::debug!(
            reason = reason.as_str(),
            "listings fall back to directory stamps"
        );
    }

    /// Whether the watcher vouches for every root now.
    pub(crate) fn vouched_for_all(&self) -> bool {
        self.terms
            .iter()
            .all(|t| vouched(t.load(Ordering::Acquire)))
    }
}

/// What a provider's listings rest on, read from outside it: whether the watcher vouches
/// for them now, and how often they fell back to stamps, by reason. Cheap to clone; it
/// stays valid after the provider is mounted.
#[derive(Debug, Clone)]
pub struct ListingTrust(pub(crate) Arc<Freshness>);

impl ListingTrust {
    /// The configured mode.
    pub fn mode(&self) -> ListingFreshness {
        self.0.mode
    }

    /// Whether every root's cached listings are answered on the watcher's word now
    /// (without a stamp per directory).
    pub fn trusted(&self) -> bool {
        self.0.vouched_for_all()
    }

    /// How many times listings fell back to stamps for `reason` since the provider
    /// started.
    pub fn fallbacks(&self, reason: FreshnessFallback) -> u64 {
        self.0.fallbacks[reason.index()].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_move_on_with_each_change_of_trust_and_stamp_mode_never_trusts() {
        let fresh = Freshness::new(ListingFreshness::Watch, 2);
        assert!(!vouched(fresh.term(0)));
        fresh.vouch(0);
        let first = fresh.term(0);
        assert!(vouched(first));
        fresh.vouch(0);
        assert_eq!(fresh.term(0), first, "vouching again keeps the term");
        assert!(!vouched(fresh.term(1)), "roots are vouched for one by one");
        fresh.withdraw(None, FreshnessFallback::Overflow);
        fresh.withdraw(Some(0), FreshnessFallback::Overflow);
        assert!(!vouched(fresh.term(0)));
        fresh.vouch(0);
        assert!(vouched(fresh.term(0)) && fresh.term(0) > first);
        let trust = ListingTrust(Arc::new(fresh));
        assert_eq!(trust.fallbacks(FreshnessFallback::Overflow), 2);
        assert_eq!(trust.fallbacks(FreshnessFallback::Rebuild), 0);

        let stamp = Freshness::new(ListingFreshness::Stamp, 1);
        stamp.vouch(0);
        assert!(!vouched(stamp.term(0)));
        assert_eq!("stamp".parse(), Ok(ListingFreshness::Stamp));
        assert!("sometimes".parse::<ListingFreshness>().is_err());
    }

    #[test]
    fn each_reason_is_labelled_with_its_own_name_from_the_catalogue_words() {
        // The words are the catalogue's, taken by position: each reason's must be its own
        // name in snake case, so a list reordered on either side fails here.
        for (i, reason) in FreshnessFallback::ALL.into_iter().enumerate() {
            assert_eq!(reason.index(), i, "{reason:?}");
            let mut snake = String::new();
            for c in format!("{reason:?}").chars() {
                if c.is_ascii_uppercase() && !snake.is_empty() {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(reason.as_str(), snake);
        }
        let labels = FreshnessFallback::ALL.map(FreshnessFallback::as_str);
        assert_eq!(labels, rsrc::observe::LISTING_FALLBACK_REASONS);
    }

    #[test]
    fn every_reason_is_counted_once_per_withdrawal_and_accepted_by_the_catalogue() {
        // `withdraw` records the metric too: the catalogue's check (a debug assertion)
        // accepts every reason's word.
        let fresh = Freshness::new(ListingFreshness::Watch, 1);
        for reason in FreshnessFallback::ALL {
            fresh.withdraw(Some(0), reason);
        }
        fresh.withdraw(None, FreshnessFallback::WatchLimit);
        let trust = ListingTrust(Arc::new(fresh));
        for reason in FreshnessFallback::ALL {
            let expected = if reason == FreshnessFallback::WatchLimit {
                2
            } else {
                1
            };
            assert_eq!(trust.fallbacks(reason), expected, "{reason:?}");
        }
    }
}
