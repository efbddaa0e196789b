//! Sorted, resumable walks of a directory tree with memory bounded by the page size.
//!
//! The order is component-wise byte order of paths (a depth-first walk visiting the
//! entries of each directory in name order). A page ends after the last file it returns;
//! that file's path is the keyset position where the next page starts. A filtered walk
//! (SEP-2564, [`select_files_after`]) may end after a file it passed over, or a directory
//! it did not enter or walked to its end: resuming after a directory's path skips what is
//! below it. Because the order
//! is total and positions are paths rather than offsets, a walk that runs while files are
//! created and deleted returns every file that exists throughout exactly once.
//!
//! Invariants:
//! - No directory is ever held in memory whole: each directory's next entries are read a
//!   batch at a time ([`next_entries`]), so a page costs memory proportional to the page
//!   size times the depth.
//! - A walk looks at its scope's stop signal before each directory and each entry it
//!   visits, and ends with [`Stopped`](crate::kit::blocking::Stopped) once it is set,
//!   never with a page that could pass for a whole one.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::sync::Arc;

use super::entry::{Entry, Kind};
use super::prefetch::AHEAD_DIRS;
use super::scan::{Scope, next_entries};
use crate::kit::blocking::is_stopped;
use crate::kit::rel_path::RelPath;

/// A directory being walked: entries fetched but not yet visited, and where to fetch
/// more (`None` once the directory is exhausted).
struct Frame {
    dir: Arc<RelPath>,
    pending: VecDeque<Entry>,
    fetch_after: Option<Option<OsString>>,
}

/// A file found by a walk, with the directory it is in.
pub(crate) type Located = (Arc<RelPath>, Entry);

/// Up to `limit` files after `after` in walk order, each with its directory, and whether
/// more may follow.
pub(crate) fn files_after(
    scope: &Scope<'_>,
    after: Option<&RelPath>,
    limit: usize,
) -> io::Result<(Vec<Located>, bool)> {
    let walked = select_files_after(scope, after, limit, None)?;
    Ok((walked.files, walked.next.is_some()))
}

/// What a filtered walk keeps, and how much it may examine.
pub(crate) struct Select<'a> {
    /// Whether a file (in its directory) is kept.
    pub(crate) file: &'a dyn Fn(&RelPath, &Entry) -> bool,
    /// Whether the walk goes into a directory (by its path): a directory none of whose
    /// files could be kept is passed over whole.
    pub(crate) dir: &'a dyn Fn(&RelPath) -> bool,
    /// Most entries (files and directories) examined.
    pub(crate) scan: usize,
}

/// What a walk found.
pub(crate) struct Walked {
    /// The files kept, in walk order.
    pub(crate) files: Vec<Located>,
    /// Where the walk goes on, when it may: after this path.
    pub(crate) next: Option<RelPath>,
    /// Entries examined.
    pub(crate) examined: usize,
}

/// Up to `limit` files after `after` in walk order that `select` keeps (every file
/// without one), each with its directory, and where the walk goes on when more may
/// follow. Without `select` that is the last file returned. With it, it is the last place
/// the walk has passed: a file examined (kept or not), a directory passed over, or one
/// walked to its end, since resuming after a directory's path skips what is below it. A
/// filtered walk stops at the first such place once it has examined `select.scan`
/// entries, so it may return fewer files, even none, with a place to go on from, which
/// always lies beyond `after`.
pub(crate) fn select_files_after(
    scope: &Scope<'_>,
    after: Option<&RelPath>,
    limit: usize,
    select: Option<&Select<'_>>,
) -> io::Result<Walked> {
    // Resume: one frame per ancestor of the position, the deepest on top, each continuing
    // after the position's component at its level.
    let mut frames: Vec<Frame> = match after {
        None => vec![Frame {
            dir: Arc::new(RelPath::root()),
            pending: VecDeque::new(),
            fetch_after: Some(None),
        }],
        Some(pos) => {
            let comps = pos.components();
            let mut dir = RelPath::root();
            let mut frames = Vec::with_capacity(comps.len());
            for c in comps {
                frames.push(Frame {
                    dir: Arc::new(dir.clone()),
                    pending: VecDeque::new(),
                    fetch_after: Some(Some(c.clone())),
                });
                dir = dir.join(c);
            }
            frames
        }
    };
    let mut out = Vec::with_capacity(limit.min(4096));
    let mut examined = 0usize;
    // The last place passed (see above).
    let mut passed: Option<RelPath> = None;
    while let Some(frame) = frames.last_mut() {
        if frame.pending.is_empty() {
            let Some(after) = frame.fetch_after.take() else {
                let done = frames.pop();
                if let Some(done) = done.filter(|f| select.is_some() && !f.dir.is_root()) {
                    passed = Some(Arc::unwrap_or_clone(done.dir));
                }
                continue;
            };
            // A filtered walk reads more at once: most of what it reads is not kept.
            let wanted = limit - out.len();
            let want = match select {
                None => wanted,
                Some(sel) => wanted.max(sel.scan.saturating_sub(examined).min(4096)),
            }
            .max(16)
                + 1;
            let batch = match next_entries(scope, &frame.dir, after.as_deref(), want) {
                Err(e) if scope.cached_only && e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(e);
                }
                Err(e) if is_stopped(&e) => return Err(e),
                // A directory that vanished (or became unreadable) mid-walk is empty.
                listed => listed.unwrap_or_else(|_| {
                    scope.missed();
                    Vec::new()
                }),
            };
            if batch.len() == want {
                frame.fetch_after = batch.last().map(|e| Some(e.name.to_os_string()));
            }
            if batch.is_empty() {
                frame.fetch_after = None;
                continue;
            }
            frame.pending = batch.into();
        }
        if let Some(sel) = select
            && examined >= sel.scan
            && passed.is_some()
        {
            return Ok(Walked {
                files: out,
                next: passed,
                examined,
            });
        }
        let Some(entry) = frame.pending.pop_front() else {
            continue;
        };
        scope.stop.check()?;
        examined += 1;
        let path = || frame.dir.join(&entry.name);
        match entry.kind {
            Kind::Dir => {
                let dir = path();
                if select.is_none_or(|sel| (sel.dir)(&dir)) {
                    // Through a tree the walk has to scan, the next directories it will
                    // enter are scanned ahead meanwhile (`prefetch.rs`).
                    if let Some(ahead) = &scope.ahead
                        && scope.scanned.get()
                    {
                        for next in frame
                            .pending
                            .iter()
                            .filter(|e| e.kind == Kind::Dir)
                            .take(AHEAD_DIRS)
                        {
                            (ahead.0)(&frame.dir.join(&next.name));
                        }
                    }
                    frames.push(Frame {
                        dir: Arc::new(dir),
                        pending: VecDeque::new(),
                        fetch_after: Some(None),
                    });
                } else {
                    passed = Some(dir);
                }
            }
            Kind::File => {
                if select.is_some_and(|sel| !(sel.file)(&frame.dir, &entry)) {
                    passed = Some(path());
                    continue;
                }
                if out.len() == limit {
                    let next = match select {
                        Some(_) => passed,
                        None => out.last().map(|(dir, e): &Located| dir.join(&e.name)),
                    };
                    return Ok(Walked {
                        files: out,
                        next,
                        examined,
                    });
                }
                if select.is_some() {
                    passed = Some(path());
                }
                out.push((Arc::clone(&frame.dir), entry));
            }
        }
    }
    Ok(Walked {
        files: out,
        next: None,
        examined,
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use cap_std::fs::Dir;

    use super::*;
    use crate::fs::cache::DirCache;
    use crate::fs::fresh::{Freshness, ListingFreshness};
    use crate::fs::visibility::{Visibility, VisibilityConfig};
    use crate::kit::blocking::Stop;

    /// A tree of nested directories with files, some in directories a filter skips.
    fn tree(root: &std::path::Path) {
        for d in [
            "a",
            "a/b",
            "a/b/c",
            "a/skip",
            "a/skip/deeper",
            "d",
            "e/f/g",
            "h",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for (i, d) in [
            "",
            "a",
            "a/b",
            "a/b/c",
            "a/skip",
            "a/skip/deeper",
            "d",
            "e/f/g",
        ]
        .iter()
        .enumerate()
        {
            for j in 0..7 {
                std::fs::write(root.join(d).join(format!("f{i}{j}")), "").unwrap();
            }
        }
    }

    #[test]
    fn a_filtered_walk_returns_what_the_filter_keeps_of_the_whole_walk_page_by_page() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let handle = Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        let visibility = Visibility::new(&VisibilityConfig::standard(), dir.path()).unwrap();
        let cache = DirCache::new(1000, std::time::Duration::from_secs(60));
        for cached in [false, true] {
            let scope = Scope {
                index: 0,
                dir: &handle,
                visibility: &visibility,
                cache: cached.then_some(&cache),
                fresh: &Freshness::new(ListingFreshness::Stamp, 1),
                cached_only: false,
                scanned: Cell::new(false),
                uncached: Cell::new(false),
                stop: &Stop::default(),
                visits: None,
                prefetch: None,
                ahead: None,
            };
            let path_of = |(d, e): &Located| d.join(&e.name);
            // Where a position lies in walk order: a directory's (one walked to its end,
            // or passed over) after everything below it.
            let order = |p: &RelPath| {
                let mut key = p.components().to_vec();
                if dir.path().join(p.to_path()).is_dir() {
                    key.push(std::os::unix::ffi::OsStringExt::from_vec(vec![0xFF]));
                }
                key
            };
            let all: Vec<RelPath> = select_files_after(&scope, None, 1000, None)
                .unwrap()
                .files
                .iter()
                .map(path_of)
                .collect();
            let file = |_: &RelPath, e: &Entry| e.name.as_encoded_bytes().ends_with(b"3");
            let enter = |d: &RelPath| d.name().is_none_or(|n| n != "skip");
            let kept: Vec<RelPath> = all
                .iter()
                .filter(|p| p.name().unwrap().as_encoded_bytes().ends_with(b"3"))
                .filter(|p| !p.components().iter().any(|c| c == "skip"))
                .cloned()
                .collect();
            assert_eq!(kept.len(), 6);
            for (scan, limit) in [
                (1, 1),
                (2, 1),
                (3, 2),
                (5, 1),
                (8, 3),
                (100, 2),
                (1000, 100),
            ] {
                let select = Select {
                    file: &file,
                    dir: &enter,
                    scan,
                };
                let (mut seen, mut pos, mut pages) = (Vec::new(), None::<RelPath>, 0);
                loop {
                    let walked =
                        select_files_after(&scope, pos.as_ref(), limit, Some(&select)).unwrap();
                    assert!(walked.files.len() <= limit);
                    seen.extend(walked.files.iter().map(path_of));
                    pages += 1;
                    assert!(
                        pages < 200,
                        "scan {scan}, limit {limit}: the walk does not end"
                    );
                    match walked.next {
                        Some(next) => {
                            assert!(
                                pos.as_ref().is_none_or(|p| order(&next) > order(p)),
                                "scan {scan}: the walk moves on from {pos:?} to {next:?}"
                            );
                            pos = Some(next);
                        }
                        None => break,
                    }
                }
                assert_eq!(seen, kept, "scan {scan}, limit {limit}, cached {cached}");
            }
        }
    }
}
