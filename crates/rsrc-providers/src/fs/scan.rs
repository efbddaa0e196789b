//! Reading one directory: its exposed entries after a name, sorted, with their
//! metadata, from the listing cache when it holds the directory, else by a scan.
//!
//! Invariants:
//! - No directory is ever held in memory whole beyond the cache's bound: a directory the
//!   cache does not take is scanned keeping only the `n` smallest names after the
//!   position (a bounded max-heap), so memory is proportional to `n`, even for a
//!   directory of a million files.
//! - Entries are what the root's visibility rules expose; a symlink counts only if it leads,
//!   inside the root, to an exposed regular file, and is never walked into.
//! - A scan looks at its stop signal before each entry and gives up once it is set; a
//!   directory whose scan gave up is never cached.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::sync::Arc;

use cap_std::fs::{Dir, DirEntry};
use rsrc::keyset;

use super::cache::{CachedDir, DirCache, Lookup, MAX_CACHED_DIR, Stamp};
use super::entry::{Entry, Info, Kind};
use super::fresh::Freshness;
use super::kept::Visits;
use super::prefetch::{AheadDirs, Prefetch};
use super::visibility::Visibility;
use crate::kit::blocking::Signal;
use crate::kit::rel_path::RelPath;

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
/// provider's visibility rules and listing cache.
#[derive(Debug)]
pub(crate) struct Scope<'a> {
    pub(crate) index: usize,
    pub(crate) dir: &'a Dir,
    pub(crate) visibility: &'a Visibility,
    pub(crate) cache: Option<&'a DirCache>,
    /// Whether the watcher vouches for the cache's listings (`fresh.rs`).
    pub(crate) fresh: &'a Freshness,
    /// Read only directories the listing cache holds: the first one it does not ends the
    /// walk with [`io::ErrorKind::WouldBlock`].
    pub(crate) cached_only: bool,
    /// Set when the walk scanned a directory (it was not in the listing cache).
    pub(crate) scanned: Cell<bool>,
    /// Set when the walk scanned a directory without caching it (no cache, or too large
    /// for it).
    pub(crate) uncached: Cell<bool>,
    /// Looked at before each directory and each entry scanned: once it is set (the
    /// request went away), the scan or walk ends with [`Stopped`](crate::kit::blocking::Stopped).
    pub(crate) stop: &'a dyn Signal,
    /// Where a walk whose page may be kept (`kept.rs`) notes the listings it reads.
    pub(crate) visits: Option<&'a RefCell<Visits>>,
    /// The scans ahead a walk that scans (not `cached_only`) waits for (`prefetch.rs`).
    pub(crate) prefetch: Option<&'a Prefetch>,
    /// Starts a scan ahead of a directory the walk will enter next (`prefetch.rs`).
    pub(crate) ahead: Option<AheadDirs<'a>>,
}

impl Scope<'_> {
    /// Notes that the walk read `dir` from the cached `listing`.
    fn read_cached(&self, dir: &RelPath, listing: &Arc<CachedDir>) {
        if let Some(visits) = self.visits {
            visits.borrow_mut().read(self.index, dir, listing);
        }
    }

    /// Notes that the walk failed to read a directory.
    pub(crate) fn missed(&self) {
        if let Some(visits) = self.visits {
            visits.borrow_mut().missed();
        }
    }

    /// Notes that the walk scanned a directory without caching it.
    fn scanned_uncached(&self) {
        self.uncached.set(true);
        self.missed();
    }
}

/// The listing of `dir` the cache holds, if it is current: on the watcher's word, or by
/// the directory's stamp (one `statx`), which a miss carries for caching a fresh scan.
pub(crate) fn cached_listing(
    root: &Dir,
    cache: &DirCache,
    fresh: &Freshness,
    index: usize,
    dir: &RelPath,
) -> io::Result<Lookup> {
    cache.lookup(fresh, index, dir, || stamp_of(root, dir))
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
        if !md.is_file() || !scope.visibility.resolved_visible(scope.dir, &path, false) {
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
    scope.stop.check()?;
    // The stamp is read by path before the directory is opened and scanned (one system
    // call on a cache hit, none on one the watcher vouches for). Reading it by path cannot
    // expose anything: a stamp is only ever compared with one taken for a listing that was
    // scanned through the capability handle, and a stamp names one inode, so a match
    // means the very directory that was scanned. A change between the stamp and the scan
    // leaves the cached stamp older than the directory's, so the listing is scanned again
    // next time; one the watcher reads during the scan leaves the listing untrusted
    // (`cache.rs`, `Ticket`).
    let stamp = match scope.cache {
        Some(cache) => match cached_listing(scope.dir, cache, scope.fresh, scope.index, dir)? {
            Lookup::Hit(hit) => {
                scope.read_cached(dir, &hit);
                return Ok(slice(&hit.entries, after, n));
            }
            Lookup::Miss(stamp, ticket) => Some((cache, stamp, ticket)),
        },
        None => None,
    };
    if scope.cached_only {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    // A scan ahead of this directory under way: its listing, once it is done.
    let stamp = match stamp {
        Some((cache, ..)) if scope.prefetch.is_some_and(|p| p.wait(scope.index, dir)) => {
            match cached_listing(scope.dir, cache, scope.fresh, scope.index, dir)? {
                Lookup::Hit(hit) => {
                    scope.read_cached(dir, &hit);
                    return Ok(slice(&hit.entries, after, n));
                }
                Lookup::Miss(stamp, ticket) => Some((cache, stamp, ticket)),
            }
        }
        stamp => stamp,
    };
    scope.scanned.set(true);
    let mut opened = None;
    let handle = open_under(scope.dir, dir, &mut opened)?;
    let visible = visible_in(scope, dir);
    if let Some((cache, stamp, ticket)) = stamp
        && let Some((cached, kept)) =
            scan_whole(scope, dir, handle, &visible, cache, (stamp, ticket))?
    {
        if kept {
            scope.read_cached(dir, &cached);
        } else {
            scope.scanned_uncached();
        }
        return Ok(slice(&cached.entries, after, n));
    }
    scope.scanned_uncached();
    let mut heap: BinaryHeap<Candidate> = BinaryHeap::with_capacity(n.min(4096) + 1);
    for item in handle.entries()? {
        scope.stop.check()?;
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

/// `dir` opened under `root` (the root itself is open already); `opened` holds it.
fn open_under<'d>(
    root: &'d Dir,
    dir: &RelPath,
    opened: &'d mut Option<Dir>,
) -> io::Result<&'d Dir> {
    if dir.is_root() {
        return Ok(root);
    }
    Ok(opened.insert(root.open_dir(dir.to_path())?))
}

/// What of `dir`'s entries the root exposes, as candidates for its listing.
fn visible_in<'s>(
    scope: &'s Scope<'_>,
    dir: &'s RelPath,
) -> impl Fn(io::Result<DirEntry>) -> Option<Candidate> + 's {
    let rules = scope.visibility.rules_for(scope.dir, dir);
    move |item| {
        let candidate = classify(scope, dir, &item.ok()?)?;
        scope
            .visibility
            .entry_visible(&rules, &candidate.name, candidate.kind == Kind::Dir)
            .then_some(candidate)
    }
}

/// Lists `dir` (open as `handle`) whole into the listing cache, if it has at most
/// [`MAX_CACHED_DIR`] exposed entries (else `None`): the listing, and whether the cache
/// kept it.
fn scan_whole(
    scope: &Scope<'_>,
    dir: &RelPath,
    handle: &Dir,
    visible: &dyn Fn(io::Result<DirEntry>) -> Option<Candidate>,
    cache: &DirCache,
    (stamp, ticket): (Stamp, super::cache::Ticket),
) -> io::Result<Option<(Arc<CachedDir>, bool)>> {
    let mut all = Vec::new();
    for item in handle.entries()? {
        scope.stop.check()?;
        let Some(candidate) = visible(item) else {
            continue;
        };
        if all.len() == MAX_CACHED_DIR {
            return Ok(None);
        }
        all.push(candidate);
    }
    all.sort_unstable();
    Ok(Some(cache.insert(
        scope.fresh,
        (scope.index, dir),
        (stamp, ticket),
        resolve(handle, all),
    )))
}

/// Scans `dir` into the listing cache ahead of a walk (`prefetch.rs`): nothing if the
/// cache holds it current, or would not take it whole (more than [`MAX_CACHED_DIR`]
/// entries: only what a walk asks for is read of such a directory).
pub(crate) fn scan_ahead(scope: &Scope<'_>, dir: &RelPath) -> io::Result<()> {
    let Some(cache) = scope.cache else {
        return Ok(());
    };
    let Lookup::Miss(stamp, ticket) =
        cached_listing(scope.dir, cache, scope.fresh, scope.index, dir)?
    else {
        return Ok(());
    };
    let mut opened = None;
    let handle = open_under(scope.dir, dir, &mut opened)?;
    let visible = visible_in(scope, dir);
    scan_whole(scope, dir, handle, &visible, cache, (stamp, ticket))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
