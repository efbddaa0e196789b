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

use cap_std::fs::Dir;

use super::filter::Filter;
use super::path::RelPath;

/// What an entry is, after following a symlink that stays inside the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: OsString,
    pub(crate) kind: Kind,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name.cmp(&other.name)
    }
}

impl PartialOrd for Entry {
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

/// The kind of `name` in `dir`, following a symlink only to a file or directory inside the
/// root; `None` for anything else (sockets, devices, broken or escaping links).
pub(crate) fn kind_of(
    scope: &Scope<'_>,
    dir: &RelPath,
    name: &OsStr,
    file_type: cap_std::fs::FileType,
) -> Option<Kind> {
    if file_type.is_file() {
        return Some(Kind::File);
    }
    if file_type.is_dir() {
        return Some(Kind::Dir);
    }
    if file_type.is_symlink() {
        // Directories reached through a link are listed as files would be (not descended),
        // which keeps link cycles from making a walk infinite.
        let md = scope.dir.metadata(dir.join(name).to_path()).ok()?;
        if md.is_file() {
            return Some(Kind::File);
        }
    }
    None
}

/// The `n` smallest exposed entries (files and directories) of `dir` whose names are
/// greater than `after`, in order.
pub(crate) fn next_entries(
    scope: &Scope<'_>,
    dir: &RelPath,
    after: Option<&OsStr>,
    n: usize,
) -> io::Result<Vec<Entry>> {
    let read = if dir.is_root() {
        scope.dir.entries()?
    } else {
        scope.dir.read_dir(dir.to_path())?
    };
    let mut heap: BinaryHeap<Entry> = BinaryHeap::with_capacity(n.min(4096) + 1);
    for item in read {
        let Ok(item) = item else { continue };
        let name = item.file_name();
        if after.is_some_and(|a| name.as_os_str() <= a) {
            continue;
        }
        if heap.len() == n && heap.peek().is_some_and(|max| name >= max.name) {
            continue;
        }
        let Ok(file_type) = item.file_type() else {
            continue;
        };
        let Some(kind) = kind_of(scope, dir, &name, file_type) else {
            continue;
        };
        if !scope
            .filter
            .entry_visible(scope.index, scope.dir, dir, &name, kind == Kind::Dir)
        {
            continue;
        }
        heap.push(Entry { name, kind });
        if heap.len() > n {
            heap.pop();
        }
    }
    Ok(heap.into_sorted_vec())
}

/// A directory being walked: entries fetched but not yet visited, and where to fetch
/// more (`None` once the directory is exhausted).
struct Frame {
    dir: RelPath,
    pending: VecDeque<Entry>,
    fetch_after: Option<Option<OsString>>,
}

/// Up to `limit` files after `after` in walk order, and whether more may follow.
pub(crate) fn files_after(
    scope: &Scope<'_>,
    after: Option<&RelPath>,
    limit: usize,
) -> io::Result<(Vec<RelPath>, bool)> {
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
                out.push(path);
            }
        }
    }
    Ok((out, false))
}
