//! Sorted, resumable walks of a directory tree with memory bounded by the page size.
//!
//! The order is component-wise byte order of paths (a depth-first walk visiting the
//! entries of each directory in name order). A page ends after the last file it returns;
//! that file's path is the keyset position where the next page starts. Because the order
//! is total and positions are paths rather than offsets, a walk that runs while files are
//! created and deleted returns every file that exists throughout exactly once.
//!
//! Invariant: no directory is ever held in memory whole. Reading the next entries of a
//! directory scans it and keeps only the `n` smallest names after the position (a bounded
//! max-heap), so a page costs memory proportional to the page size times the depth, even
//! for a directory of a million files.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_std::fs::{Dir, DirEntry, Metadata};
use rustix::fs::{AtFlags, StatxFlags};

use super::filter::Filter;
use super::path::RelPath;

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
    fn from_statx(st: &rustix::fs::Statx) -> Self {
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
    pub(crate) name: OsString,
    pub(crate) kind: Kind,
    pub(crate) info: Info,
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

/// One root directory: its capability handle and its index among the roots.
#[derive(Debug)]
pub(crate) struct Scope<'a> {
    pub(crate) index: usize,
    pub(crate) dir: &'a Dir,
    pub(crate) filter: &'a Filter,
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
        let md = scope.dir.metadata(dir.join(&name).to_path()).ok()?;
        if !md.is_file() {
            return None;
        }
        (Kind::File, Source::Followed(Info::from(&md)))
    } else {
        return None;
    };
    Some(Candidate { name, kind, source })
}

/// The `n` smallest exposed entries (files and directories) of `dir` whose names are
/// greater than `after`, in order, with their metadata.
pub(crate) fn next_entries(
    scope: &Scope<'_>,
    dir: &RelPath,
    after: Option<&OsStr>,
    n: usize,
) -> io::Result<Vec<Entry>> {
    let opened;
    let handle = if dir.is_root() {
        scope.dir
    } else {
        opened = scope.dir.open_dir(dir.to_path())?;
        &opened
    };
    let read = handle.entries()?;
    let rules = scope.filter.rules_for(scope.index, scope.dir, dir);
    let mut heap: BinaryHeap<Candidate> = BinaryHeap::with_capacity(n.min(4096) + 1);
    for item in read {
        let Ok(item) = item else { continue };
        let name = item.file_name();
        if after.is_some_and(|a| name.as_os_str() <= a) {
            continue;
        }
        if heap.len() == n && heap.peek().is_some_and(|max| name >= max.name) {
            continue;
        }
        let Some(candidate) = classify(scope, dir, &item) else {
            continue;
        };
        if !scope
            .filter
            .entry_visible(&rules, &candidate.name, candidate.kind == Kind::Dir)
        {
            continue;
        }
        heap.push(candidate);
        if heap.len() > n {
            heap.pop();
        }
    }
    Ok(heap
        .into_sorted_vec()
        .into_iter()
        .filter_map(|c| {
            let info = match c.source {
                Source::Entry => {
                    let mask = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::MTIME;
                    let st = rustix::fs::statx(
                        handle,
                        c.name.as_os_str(),
                        AtFlags::SYMLINK_NOFOLLOW,
                        mask,
                    )
                    .ok()?;
                    Info::from_statx(&st)
                }
                Source::Followed(info) => info,
            };
            // Something else may have replaced the entry since the scan.
            (info.is_dir == (c.kind == Kind::Dir)).then_some(Entry {
                name: c.name,
                kind: c.kind,
                info,
            })
        })
        .collect())
}

/// A directory being walked: entries fetched but not yet visited, and where to fetch
/// more (`None` once the directory is exhausted).
struct Frame {
    dir: RelPath,
    pending: VecDeque<Entry>,
    fetch_after: Option<Option<OsString>>,
}

/// Up to `limit` files after `after` in walk order, with their metadata, and whether more
/// may follow.
pub(crate) fn files_after(
    scope: &Scope<'_>,
    after: Option<&RelPath>,
    limit: usize,
) -> io::Result<(Vec<(RelPath, Info)>, bool)> {
    // Resume: one frame per ancestor of the position, the deepest on top, each continuing
    // after the position's component at its level.
    let mut frames: Vec<Frame> = match after {
        None => vec![Frame {
            dir: RelPath::root(),
            pending: VecDeque::new(),
            fetch_after: Some(None),
        }],
        Some(pos) => {
            let comps = pos.components();
            let mut dir = RelPath::root();
            let mut frames = Vec::with_capacity(comps.len());
            for c in comps {
                frames.push(Frame {
                    dir: dir.clone(),
                    pending: VecDeque::new(),
                    fetch_after: Some(Some(c.clone())),
                });
                dir = dir.join(c);
            }
            frames
        }
    };
    let mut out = Vec::new();
    while let Some(frame) = frames.last_mut() {
        if frame.pending.is_empty() {
            let Some(after) = frame.fetch_after.take() else {
                frames.pop();
                continue;
            };
            let want = (limit - out.len()).max(16) + 1;
            // A directory that vanished (or became unreadable) mid-walk is empty.
            let batch = next_entries(scope, &frame.dir, after.as_deref(), want).unwrap_or_default();
            if batch.len() == want {
                frame.fetch_after = batch.last().map(|e| Some(e.name.clone()));
            }
            if batch.is_empty() {
                frames.pop();
                continue;
            }
            frame.pending = batch.into();
        }
        let Some(entry) = frame.pending.pop_front() else {
            continue;
        };
        let path = frame.dir.join(&entry.name);
        match entry.kind {
            Kind::Dir => frames.push(Frame {
                dir: path,
                pending: VecDeque::new(),
                fetch_after: Some(None),
            }),
            Kind::File => {
                if out.len() == limit {
                    return Ok((out, true));
                }
                out.push((path, entry.info));
            }
        }
    }
    Ok((out, false))
}
