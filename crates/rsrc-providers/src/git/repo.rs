//! Reading a repository with gix: the served references, commits, trees and blobs.
//!
//! Invariants:
//! - Nothing here builds a filesystem path from a URI. References are looked up by full
//!   names that [`names`](super::names) produced from validated names (so they stay under
//!   `refs/heads/`, `refs/tags/` or are `HEAD`), objects only by id, and tree entries only
//!   by comparing names with the entries of a tree object: there is no way out of the
//!   repository's object graph.
//! - An object's size is read from its header before it is inflated: a blob over the
//!   read cap, or a tree, commit or tag over [`MAX_INFLATE`], is refused without being
//!   loaded.
//! - A commit named by id is served only if a served reference reaches it
//!   ([`Reachable`]): an object left in the store by an amended or deleted commit (and
//!   the secrets it may hold) is not served.
//! - Malformed objects (a tag whose target cannot be read, a tree that does not parse)
//!   fail the request that met them; nothing here panics on repository content.
//! - Long work (reading the references, walking the history, reading a tree's entries)
//!   looks at its request's stop signal ([`crate::kit::blocking`]) between references,
//!   commits and entries, and ends with [`Stopped`] carried as a [`GixError`] once it is
//!   set; a history walk that stopped is never remembered.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;

use super::names::{self, RefName, is_served, resolve_in, valid_component};
use crate::kit::blocking::{Signal, Stopped};

/// A gix failure (I/O, a corrupt object): an internal error for the client.
pub(crate) type GixError = gix::Error;

/// The most annotated tags followed from one reference to its commit.
const MAX_TAG_DEPTH: usize = 16;

/// The largest tree, commit or tag object inflated.
pub(crate) const MAX_INFLATE: u64 = 64 * 1024 * 1024;

/// The most commits remembered as reachable; in a larger history, commit ids beyond the
/// first this many found are not served (by id; the refs still are).
const MAX_REACHABLE: usize = 4_000_000;

/// `Err(Stopped)` as a [`GixError`] once `stop` is set: `check(stop)?` between steps.
pub(crate) fn check(stop: &dyn Signal) -> Result<(), GixError> {
    stop.check().map_err(GixError::from_error)
}

/// Whether `e` is a [`Stopped`] carried as a [`GixError`].
pub(crate) fn is_stopped(e: &GixError) -> bool {
    e.downcast_any_ref::<Stopped>().is_some()
}

/// A tree, commit or tag object, inflated only if its header says it is within
/// [`MAX_INFLATE`]; `None` if there is no such object.
fn find_capped(repo: &gix::Repository, id: ObjectId) -> Result<Option<gix::Object<'_>>, GixError> {
    let Some(header) = repo.try_find_header(id)? else {
        return Ok(None);
    };
    if header.size() > MAX_INFLATE {
        tracing::warn!(%id, size = header.size(), "object too large to inflate: not served");
        return Ok(None);
    }
    repo.try_find_object(id)
}

/// The commits the served references reach, computed once per set of reference tips.
#[derive(Default)]
pub(crate) struct Reachable {
    cached: Mutex<Option<History>>,
}

/// The commits reachable from one set of reference tips.
struct History {
    tips: Vec<ObjectId>,
    commits: Arc<HashSet<ObjectId>>,
}

impl std::fmt::Debug for Reachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reachable").finish_non_exhaustive()
    }
}

impl Reachable {
    /// Whether `id` is a commit some reference in `refs` reaches.
    pub(crate) fn contains(
        &self,
        repo: &gix::Repository,
        refs: &Refs,
        id: ObjectId,
        stop: &dyn Signal,
    ) -> Result<bool, GixError> {
        let mut tips: Vec<ObjectId> = refs.map.values().copied().collect();
        tips.sort_unstable();
        tips.dedup();
        if tips.binary_search(&id).is_ok() {
            return Ok(true);
        }
        let set = {
            let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
            match &*cached {
                Some(h) if h.tips == tips => Some(Arc::clone(&h.commits)),
                _ => None,
            }
        };
        let set = match set {
            Some(set) => set,
            None => {
                let set = Arc::new(walk_history(repo, &tips, stop)?);
                *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = Some(History {
                    tips,
                    commits: Arc::clone(&set),
                });
                set
            }
        };
        Ok(set.contains(&id))
    }
}

/// Every commit reachable from `tips` (at most [`MAX_REACHABLE`]), looking at `stop`
/// before each.
fn walk_history(
    repo: &gix::Repository,
    tips: &[ObjectId],
    stop: &dyn Signal,
) -> Result<HashSet<ObjectId>, GixError> {
    let mut set = HashSet::new();
    // Tips that are not commits (a tag of a tree) have no history to walk.
    let commits: Vec<ObjectId> = tips
        .iter()
        .copied()
        .filter(|t| {
            repo.try_find_header(*t)
                .ok()
                .flatten()
                .is_some_and(|h| h.kind() == gix::objs::Kind::Commit)
        })
        .collect();
    for info in repo.rev_walk(commits).all()? {
        check(stop)?;
        let Ok(info) = info else { break };
        if set.len() >= MAX_REACHABLE {
            tracing::warn!(
                max = MAX_REACHABLE,
                "history too long: older commits are not served by id"
            );
            break;
        }
        set.insert(info.id);
    }
    Ok(set)
}

/// The served references: full name → the object they point to, symbolic references
/// followed and annotated tags peeled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Refs {
    pub(crate) map: BTreeMap<BString, ObjectId>,
}

impl Refs {
    /// Reads `HEAD`, the branches and the tags (loose and packed), at most `max` of them.
    /// References that cannot be read or peeled (dangling, broken) are left out. `stop`
    /// is looked at before each.
    pub(crate) fn read(
        repo: &gix::Repository,
        max: usize,
        stop: &dyn Signal,
    ) -> Result<Refs, GixError> {
        let mut map = BTreeMap::new();
        if let Ok(id) = repo.head_id() {
            map.insert(BString::from("HEAD"), id.detach());
        }
        let platform = repo.references()?;
        let iters = [platform.local_branches()?, platform.tags()?];
        'all: for iter in iters {
            for r in iter.peeled()? {
                check(stop)?;
                if map.len() >= max {
                    tracing::debug!(max, "more references than served; the rest are left out");
                    break 'all;
                }
                let Ok(r) = r else { continue };
                let name = r.name().as_bstr();
                if let (true, Some(id)) = (is_served(name), r.try_id()) {
                    map.insert(name.to_owned(), id.detach());
                }
            }
        }
        Ok(Refs { map })
    }

    fn exists(&self) -> impl Fn(&BStr) -> bool + '_ {
        |n| self.map.contains_key(n)
    }

    /// The object `name` points to among these references.
    pub(crate) fn resolve(&self, name: &RefName) -> Option<ObjectId> {
        match name {
            RefName::Id(id) => Some(*id),
            RefName::Name(n) => self
                .map
                .get(&resolve_in(n.as_bstr(), self.exists())?)
                .copied(),
        }
    }

    /// The name a listing gives the reference `full`.
    pub(crate) fn short_name(&self, full: &BStr, hash: gix::hash::Kind) -> Option<BString> {
        names::short_name(full, hash, self.exists())
    }
}

/// What a listing or a read says about a commit.
#[derive(Clone, Debug)]
pub(crate) struct CommitInfo {
    pub(crate) id: ObjectId,
    pub(crate) tree: ObjectId,
    /// Committer time, seconds since the Unix epoch.
    pub(crate) seconds: i64,
    /// The first line of the message.
    pub(crate) summary: String,
}

/// The commit `id` is or (through annotated tags) points to; `None` if there is no such
/// object or it does not end at a commit.
pub(crate) fn commit(repo: &gix::Repository, id: ObjectId) -> Result<Option<CommitInfo>, GixError> {
    let mut id = id;
    for _ in 0..=MAX_TAG_DEPTH {
        let Some(obj) = find_capped(repo, id)? else {
            return Ok(None);
        };
        match obj.kind {
            gix::objs::Kind::Tag => {
                let target = gix::objs::TagRefIter::from_bytes(&obj.data, id.kind()).target_id();
                match target {
                    Ok(t) => id = t,
                    Err(_) => return Ok(None),
                }
            }
            gix::objs::Kind::Commit => {
                let c = obj.into_commit();
                let tree = c.tree_id()?.detach();
                let seconds = c.time().map(|t| t.seconds).unwrap_or(0);
                let summary = c
                    .message()
                    .map(|m| m.summary().to_str_lossy().chars().take(200).collect())
                    .unwrap_or_default();
                return Ok(Some(CommitInfo {
                    id,
                    tree,
                    seconds,
                    summary,
                }));
            }
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// A ref from a URI, resolved now: its full name (none for a commit id) and its commit.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) full: Option<BString>,
    pub(crate) commit: CommitInfo,
}

/// Resolves `name` against the repository as it is now, looking up at most the four
/// candidate full names (no iteration of all references); `None` if it names nothing
/// served.
pub(crate) fn resolve(
    repo: &gix::Repository,
    name: &RefName,
    reachable: &Reachable,
    max_refs: usize,
    stop: &dyn Signal,
) -> Result<Option<Resolved>, GixError> {
    let (full, id) = match name {
        RefName::Id(id) => {
            let refs = Refs::read(repo, max_refs, stop)?;
            if !reachable.contains(repo, &refs, *id, stop)? {
                return Ok(None);
            }
            (None, *id)
        }
        RefName::Name(n) => {
            let mut found = None;
            // Fast path: gix's own lookup tries git's order (`refs/<name>`, tags, heads,
            // remotes), of which the served candidates are a subsequence. If it finds a
            // served candidate that peels, no earlier candidate exists; if it finds
            // nothing, none does. Anything else (an unserved or dangling reference, a
            // pseudo-ref file gix cannot parse) takes the exact path below.
            match repo.try_find_reference(n.as_bstr()) {
                Ok(None) => return Ok(None),
                Err(_) => {}
                Ok(Some(mut r)) => {
                    let name = r.name().as_bstr().to_owned();
                    if is_served(name.as_bstr())
                        && names::candidates(n.as_bstr()).contains(&name)
                        && let Ok(id) = r.peel_to_id()
                    {
                        found = Some((Some(name), id.detach()));
                    }
                }
            }
            for c in names::candidates(n.as_bstr()) {
                if found.is_some() {
                    break;
                }
                if !is_served(c.as_bstr()) {
                    continue;
                }
                let Some(mut r) = repo.try_find_reference(c.as_bstr())? else {
                    continue;
                };
                // gix also tries a few spellings of its own: only the exact name counts.
                if r.name().as_bstr() != c {
                    continue;
                }
                // A dangling reference (an unborn HEAD) is not served, as in a listing: the
                // next candidate may be.
                let Ok(id) = r.peel_to_id() else {
                    continue;
                };
                found = Some((Some(c), id.detach()));
                break;
            }
            match found {
                Some(f) => f,
                None => return Ok(None),
            }
        }
    };
    Ok(commit(repo, id)?.map(|commit| Resolved { full, commit }))
}

/// What a path below a tree is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    /// A directory.
    Tree(ObjectId),
    /// A file (`Blob`, `BlobExecutable`) or a symbolic link (`Link`).
    File(ObjectId, EntryKind),
}

impl Node {
    /// The object id and mode, to tell whether it changed.
    pub(crate) fn identity(&self) -> (ObjectId, u16) {
        match *self {
            Node::Tree(id) => (id, EntryKind::Tree as u16),
            Node::File(id, kind) => (id, kind as u16),
        }
    }
}

/// Walks `path` from the tree `root` by entry names; `None` if some component is missing,
/// goes through a file, or ends at a submodule.
pub(crate) fn walk(
    repo: &gix::Repository,
    root: ObjectId,
    path: &[BString],
) -> Result<Option<Node>, GixError> {
    let mut node = Node::Tree(root);
    for component in path {
        let Node::Tree(tree) = node else {
            return Ok(None);
        };
        let Some(obj) = find_capped(repo, tree)? else {
            return Ok(None);
        };
        if obj.kind != gix::objs::Kind::Tree {
            return Ok(None);
        }
        let mut next = None;
        for e in gix::objs::TreeRefIter::from_bytes(&obj.data, tree.kind()) {
            let e = e?;
            if e.filename == component.as_bstr() {
                next = match e.mode.kind() {
                    EntryKind::Tree => Some(Node::Tree(e.oid.to_owned())),
                    EntryKind::Commit => None,
                    kind => Some(Node::File(e.oid.to_owned(), kind)),
                };
                break;
            }
        }
        match next {
            Some(n) => node = n,
            None => return Ok(None),
        }
    }
    Ok(Some(node))
}

/// One entry of a tree.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: BString,
    pub(crate) node: Node,
}

/// The entries of a tree, bytewise by name: submodules (commits) and names that cannot be
/// a path component are left out. `stop` is looked at before each entry.
pub(crate) fn entries(
    repo: &gix::Repository,
    tree: ObjectId,
    stop: &dyn Signal,
) -> Result<Vec<Entry>, GixError> {
    let Some(obj) = find_capped(repo, tree)? else {
        return Ok(Vec::new());
    };
    if obj.kind != gix::objs::Kind::Tree {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for e in gix::objs::TreeRefIter::from_bytes(&obj.data, tree.kind()) {
        check(stop)?;
        let e = e?;
        if !valid_component(e.filename) {
            continue;
        }
        let node = match e.mode.kind() {
            EntryKind::Tree => Node::Tree(e.oid.to_owned()),
            EntryKind::Commit => continue,
            kind => Node::File(e.oid.to_owned(), kind),
        };
        out.push(Entry {
            name: e.filename.to_owned(),
            node,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    // A malformed tree may repeat a name: keep the first, so that names are a strict order.
    out.dedup_by(|b, a| a.name == b.name);
    Ok(out)
}

/// The size of an object from its header, without inflating it.
pub(crate) fn size(repo: &gix::Repository, id: ObjectId) -> Result<u64, GixError> {
    Ok(repo.find_header(id)?.size())
}

/// A blob's bytes, or `Err(size)` if it is larger than `max`.
pub(crate) fn blob(
    repo: &gix::Repository,
    id: ObjectId,
    max: u64,
) -> Result<Result<Vec<u8>, u64>, GixError> {
    let size = size(repo, id)?;
    if size > max {
        return Ok(Err(size));
    }
    let obj = repo.find_object(id)?;
    if obj.data.len() as u64 > max {
        return Ok(Err(obj.data.len() as u64));
    }
    Ok(Ok(obj.detach().data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dangling_tag_chain_ends_in_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let missing = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        assert!(commit(&repo, missing).unwrap().is_none());
        let blob = repo.write_blob(b"not a commit").unwrap().detach();
        assert!(commit(&repo, blob).unwrap().is_none());
    }
}
