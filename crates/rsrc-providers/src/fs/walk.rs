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
//! Invariant: no directory is ever held in memory whole. Reading the next entries of a
//! directory scans it and keeps only the `n` smallest names after the position (a bounded
//! max-heap), so a page costs memory proportional to the page size times the depth, even
//! for a directory of a million files.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use cap_std::fs::{Dir, DirEntry, Metadata};
use rsrc::{ListEntry, keyset};

use super::cache::{DirCache, MAX_CACHED_DIR, Stamp};
use super::filter::Filter;
use crate::kit::rel_path::RelPath;

/// What an entry is, after following a symlink that stays inside the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
}

/// What a listing needs to know about a file or directory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Info {
    pub(crate) is_dir: bool,
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
}

impl From<&Metadata> for Info {
    fn from(md: &Metadata) -> Self {
        Info {
            is_dir: md.is_dir(),
            len: md.len(),
            modified: md.modified().ok().map(cap_std::time::SystemTime::into_std),
        }
    }
}

impl Info {
    #[cfg(target_os = "linux")]
    fn from_statx(st: &rustix::fs::Statx) -> Self {
        use std::time::{Duration, UNIX_EPOCH};
        let t = st.stx_mtime;
        let modified = u64::try_from(t.tv_sec)
            .ok()
            .map(|secs| UNIX_EPOCH + Duration::new(secs, t.tv_nsec));
        Info {
            is_dir: rustix::fs::FileType::from_raw_mode(st.stx_mode.into())
                == rustix::fs::FileType::Directory,
            len: st.stx_size,
            modified,
        }
    }
}

/// One exposed entry of a directory, with its metadata (of the link's target for a
/// symlink).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) name: Arc<OsStr>,
    pub(crate) kind: Kind,
    pub(crate) info: Info,
    /// The entry as listed, encoded on first use; shared by the clones a cached
    /// directory hands out, so a cached entry is encoded once.
    pub(crate) listed: Arc<OnceLock<ListEntry>>,
}

/// An entry selected by name, whose metadata is fetched only if it stays selected.
struct Candidate {
    name: OsString,
    kind: Kind,
    source: Source,
}

enum Source {
    /// Not a link: its own metadata is read later, relative to the open directory, by
    /// name, without following links (one component, so nothing can escape).
    Entry,
    /// A link: the target's metadata, already read through the root's handle.
    Followed(Info),
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name.cmp(&other.name)
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One root directory: its capability handle, its index among the roots, and the
/// provider's filter and listing cache.
#[derive(Debug)]
pub(crate) struct Scope<'a> {
    pub(crate) index: usize,
    pub(crate) dir: &'a Dir,
    pub(crate) filter: &'a Filter,
    pub(crate) cache: Option<&'a DirCache>,
    /// Read only directories the listing cache holds: the first one it does not ends the
    /// walk with [`io::ErrorKind::WouldBlock`].
    pub(crate) cached_only: bool,
    /// Set when the walk scanned a directory (it was not in the listing cache).
    pub(crate) scanned: Cell<bool>,
    /// Set when the walk scanned a directory without caching it (no cache, or too large
    /// for it).
    pub(crate) uncached: Cell<bool>,
}

/// The kind of `name` in `dir`: files and directories as they are; a symlink is followed
/// (inside the root only) and counts if it leads to a regular file. Directories reached
/// through a link are not walked into, which keeps link cycles from making a walk
/// infinite. Anything else (sockets, devices, FIFOs, broken or escaping links) is `None`.
fn classify(scope: &Scope<'_>, dir: &RelPath, item: &DirEntry) -> Option<Candidate> {
    let name = item.file_name();
    let file_type = item.file_type().ok()?;
    let (kind, source) = if file_type.is_file() {
        (Kind::File, Source::Entry)
    } else if file_type.is_dir() {
        (Kind::Dir, Source::Entry)
    } else if file_type.is_symlink() {
        let path = dir.join(&name);
        let md = scope.dir.metadata(path.to_path()).ok()?;
        // Its target must be exposed too (the link's own name is checked by the caller).
        if !md.is_file() || !scope.filter.resolved_visible(scope.dir, &path, false) {
            return None;
        }
        (Kind::File, Source::Followed(Info::from(&md)))
    } else {
        return None;
    };
    Some(Candidate { name, kind, source })
}

/// The identity of the current entries of `dir` (relative to the root handle): a listing
/// cached under another stamp is out of date. On Linux, one `statx` asking for only what
/// the stamp needs.
#[cfg(target_os = "linux")]
fn stamp_of(root: &Dir, dir: &RelPath) -> io::Result<Stamp> {
    use rustix::fs::{AtFlags, StatxFlags};
    use std::path::PathBuf;
    let mask = StatxFlags::INO | StatxFlags::MTIME | StatxFlags::CTIME;
    let (path, flags) = if dir.is_root() {
        (PathBuf::new(), AtFlags::EMPTY_PATH)
    } else {
        (dir.to_path(), AtFlags::SYMLINK_NOFOLLOW)
    };
    let st = rustix::fs::statx(root, &path, flags, mask)?;
    Ok(Stamp {
        dev: (u64::from(st.stx_dev_major) << 32) | u64::from(st.stx_dev_minor),
        ino: st.stx_ino,
        mtime: (st.stx_mtime.tv_sec, i64::from(st.stx_mtime.tv_nsec)),
        ctime: (st.stx_ctime.tv_sec, i64::from(st.stx_ctime.tv_nsec)),
    })
}

/// The identity of the current entries of `dir` (relative to the root handle): a listing
/// cached under another stamp is out of date. Elsewhere, the directory's metadata (not
/// following a final link).
#[cfg(not(target_os = "linux"))]
fn stamp_of(root: &Dir, dir: &RelPath) -> io::Result<Stamp> {
    use cap_std::fs::MetadataExt as _;
    let md = if dir.is_root() {
        root.dir_metadata()?
    } else {
        root.symlink_metadata(dir.to_path())?
    };
    Ok(Stamp {
        dev: md.dev(),
        ino: md.ino(),
        mtime: (md.mtime(), md.mtime_nsec()),
        ctime: (md.ctime(), md.ctime_nsec()),
    })
}

/// The metadata of the entry `name` of the open directory `handle`, not following a
/// link (one component, so nothing can escape). On Linux, one `statx` asking for only
/// what a listing shows.
#[cfg(target_os = "linux")]
fn entry_info(handle: &Dir, name: &OsStr) -> Option<Info> {
    use rustix::fs::{AtFlags, StatxFlags};
    let mask = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::MTIME;
    let st = rustix::fs::statx(handle, name, AtFlags::SYMLINK_NOFOLLOW, mask).ok()?;
    Some(Info::from_statx(&st))
}

/// The metadata of the entry `name` of the open directory `handle`, not following a
/// link (one component, so nothing can escape).
#[cfg(not(target_os = "linux"))]
fn entry_info(handle: &Dir, name: &OsStr) -> Option<Info> {
    handle.symlink_metadata(name).ok().map(|md| Info::from(&md))
}

/// Candidates per thread when reading their metadata: below twice this, one thread.
const RESOLVE_SHARE: usize = 256;
/// Most threads reading one directory's metadata.
const RESOLVE_THREADS: usize = 4;

/// Reads the metadata of selected candidates (in order), relative to the open directory.
/// One `statx` per candidate is most of a listing's cost, and the kernel serves them in
/// parallel, so a large directory's are shared among a few scoped threads (as many as the
/// cores, at most [`RESOLVE_THREADS`], each with at least [`RESOLVE_SHARE`]), which only
/// read metadata: the entries are built (and allocated) on the caller's thread. A share
/// whose thread cannot be started is read by the caller's thread.
fn resolve(handle: &Dir, candidates: Vec<Candidate>) -> Vec<Entry> {
    // Asked once: the answer reads the process's cgroup limits.
    static CORES: std::sync::LazyLock<usize> =
        std::sync::LazyLock::new(|| std::thread::available_parallelism().map_or(1, usize::from));
    let threads = (candidates.len() / RESOLVE_SHARE).clamp(1, (*CORES).min(RESOLVE_THREADS));
    resolve_on(handle, candidates, threads)
}

/// [`resolve`] on `threads` threads.
fn resolve_on(handle: &Dir, candidates: Vec<Candidate>, threads: usize) -> Vec<Entry> {
    let infos: Vec<Option<Info>> = if threads <= 1 {
        candidates.iter().map(|c| info_of(handle, c)).collect()
    } else {
        let mut shares = candidates.chunks(candidates.len().div_ceil(threads));
        let first = shares.next().unwrap_or_default();
        let read = |share: &[Candidate]| -> Vec<Option<Info>> {
            share.iter().map(|c| info_of(handle, c)).collect()
        };
        std::thread::scope(|scope| {
            let running: Vec<_> = shares
                .map(|share| {
                    let thread = std::thread::Builder::new()
                        .name("rsrc-fs-stat".into())
                        .spawn_scoped(scope, move || read(share));
                    (share, thread.ok())
                })
                .collect();
            let mut infos = read(first);
            for (share, thread) in running {
                // Each share's infos, in order, whatever happened to its thread.
                infos.extend(
                    thread
                        .and_then(|t| t.join().ok())
                        .unwrap_or_else(|| read(share)),
                );
            }
            infos
        })
    };
    candidates
        .into_iter()
        .zip(infos)
        .filter_map(|(c, info)| {
            let info = info?;
            // Something else may have replaced the entry since the scan.
            (info.is_dir == (c.kind == Kind::Dir)).then(|| Entry {
                name: Arc::from(c.name),
                kind: c.kind,
                info,
                listed: Arc::default(),
            })
        })
        .collect()
}

/// The metadata of one candidate: read now, or already read through its link.
fn info_of(handle: &Dir, c: &Candidate) -> Option<Info> {
    match c.source {
        Source::Entry => entry_info(handle, &c.name),
        Source::Followed(info) => Some(info),
    }
}

/// The entries after `after`, at most `n`, from a sorted listing.
fn slice(entries: &[Entry], after: Option<&OsStr>, n: usize) -> Vec<Entry> {
    keyset::after(entries, after, |e| &*e.name)
        .iter()
        .take(n)
        .cloned()
        .collect()
}

/// The `n` smallest exposed entries (files and directories) of `dir` whose names are
/// greater than `after`, in order, with their metadata. Served from the directory cache
/// when it is current; otherwise a directory small enough is listed whole and cached, and a
/// larger one is scanned keeping only the `n` entries needed.
pub(crate) fn next_entries(
    scope: &Scope<'_>,
    dir: &RelPath,
    after: Option<&OsStr>,
    n: usize,
) -> io::Result<Vec<Entry>> {
    // The stamp is read by path before the directory is opened and scanned (one system
    // call on a cache hit). Reading it by path cannot expose anything: a stamp is only ever
    // compared with one taken for a listing that was scanned through the capability handle,
    // and a stamp names one inode, so a match means the very directory that was scanned.
    // A change between the stamp and the scan leaves the cached stamp older than the
    // directory's, so the listing is scanned again next time.
    let stamp = match scope.cache {
        Some(cache) => {
            let stamp = stamp_of(scope.dir, dir)?;
            if let Some(hit) = cache.get(scope.index, dir, stamp) {
                return Ok(slice(&hit.entries, after, n));
            }
            Some((cache, stamp))
        }
        None => None,
    };
    if scope.cached_only {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    scope.scanned.set(true);
    let opened;
    let handle = if dir.is_root() {
        scope.dir
    } else {
        opened = scope.dir.open_dir(dir.to_path())?;
        &opened
    };
    let rules = scope.filter.rules_for(scope.dir, dir);
    let visible = |item: io::Result<DirEntry>| {
        let candidate = classify(scope, dir, &item.ok()?)?;
        scope
            .filter
            .entry_visible(&rules, &candidate.name, candidate.kind == Kind::Dir)
            .then_some(candidate)
    };
    if let Some((cache, stamp)) = stamp {
        let mut all = Vec::new();
        let mut small = true;
        for candidate in handle.entries()?.filter_map(visible) {
            if all.len() == MAX_CACHED_DIR {
                small = false;
                break;
            }
            all.push(candidate);
        }
        if small {
            all.sort_unstable();
            let cached = cache.insert(scope.index, dir, stamp, resolve(handle, all));
            return Ok(slice(&cached.entries, after, n));
        }
    }
    scope.uncached.set(true);
    let mut heap: BinaryHeap<Candidate> = BinaryHeap::with_capacity(n.min(4096) + 1);
    for item in handle.entries()? {
        let Ok(item) = item else { continue };
        let name = item.file_name();
        if after.is_some_and(|a| name.as_os_str() <= a) {
            continue;
        }
        if heap.len() == n && heap.peek().is_some_and(|max| name >= max.name) {
            continue;
        }
        let Some(candidate) = visible(Ok(item)) else {
            continue;
        };
        heap.push(candidate);
        if heap.len() > n {
            heap.pop();
        }
    }
    Ok(resolve(handle, heap.into_sorted_vec()))
}

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
                // A directory that vanished (or became unreadable) mid-walk is empty.
                listed => listed.unwrap_or_default(),
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
        examined += 1;
        let path = || frame.dir.join(&entry.name);
        match entry.kind {
            Kind::Dir => {
                let dir = path();
                if select.is_none_or(|sel| (sel.dir)(&dir)) {
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
    use super::*;

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
        let filter =
            Filter::new(&super::super::filter::FilterConfig::standard(), dir.path()).unwrap();
        let cache = DirCache::new(1000, std::time::Duration::from_secs(60));
        for cached in [false, true] {
            let scope = Scope {
                index: 0,
                dir: &handle,
                filter: &filter,
                cache: cached.then_some(&cache),
                cached_only: false,
                scanned: Cell::new(false),
                uncached: Cell::new(false),
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

    #[test]
    fn metadata_read_on_several_threads_stays_with_its_own_entry() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..700 {
            std::fs::write(dir.path().join(format!("f{i:03}")), vec![b'x'; i % 50]).unwrap();
        }
        let handle = Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        let candidates = || -> Vec<Candidate> {
            let mut names: Vec<String> = (0..700).map(|i| format!("f{i:03}")).collect();
            // Gone since the scan: dropped without shifting the others.
            names.insert(350, "f349-gone".to_owned());
            names
                .into_iter()
                .map(|name| Candidate {
                    name: name.into(),
                    kind: Kind::File,
                    source: Source::Entry,
                })
                .collect()
        };
        for threads in [1, 2, 3, 4] {
            let entries = resolve_on(&handle, candidates(), threads);
            assert_eq!(entries.len(), 700, "{threads} threads");
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(
                    *e.name,
                    *OsStr::new(&format!("f{i:03}")),
                    "{threads} threads"
                );
                assert_eq!(e.info.len, (i % 50) as u64, "{threads} threads");
            }
        }
    }
}
