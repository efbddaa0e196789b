//! Listing the served directories: the recursive listing of every file (and searching
//! it), a directory's direct children, the collection of roots, and warming the listing
//! cache.
//!
//! Invariants:
//! - Every listing is a keyset walk: the recursive one resumes after the last file's path
//!   (in component-wise byte order, [`walk::files_after`]), a directory's after the last
//!   child's name ([`rsrc::keyset`]), so pages stay correct while files come and go.
//! - Memory per page is bounded by the page size, whatever the tree's size.
//! - A search examines at most [`SEARCH_SCAN`] files per call and says where to go on.
//! - A filtered listing (SEP-2564) applies the filter in its walk: a file's name or URI
//!   is matched before it is listed, a directory none of whose URIs can match is not
//!   entered, and at most [`Filter::scan`] entries are examined per call; the page then
//!   goes on after the last entry examined.
//! - Listings and searches run on blocking threads
//!   ([`off_runtime`](super::state::off_runtime)): a page costs a system call or two per
//!   file, which must not hold up the runtime's other requests.
//!   The one exception costs at most a system call per directory (none while the watcher
//!   vouches for the listings): a page of the recursive listing that the listing cache
//!   holds whole is listed where it is asked for. Each looks at
//!   its stop signal before every directory and entry, and once it is set (the request
//!   went away) gives up with [`cancelled`].
//! - The walks ahead, the scans of directories ahead of a walk (`prefetch.rs`) and the
//!   warming of the cache answer no request: nothing stops them but their own bounds (a
//!   page; one directory; the cache's budget).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use rsrc::{Filter, ListEntry, Page, ResourceError, SearchRequest};

use super::cache::Lookup;
use super::entry::{Entry, Info};
use super::kept::Visits;
use super::prefetch::AheadDirs;
use super::scan::{self, Scope};
use super::state::{ServedRoots, Target, off_runtime};
use super::walk::{self, Select};
use crate::kit::blocking::{Signal, Stop, cancelled, is_stopped};
use crate::kit::open::io_error;
use crate::kit::rel_path::RelPath;

/// Most files one search call examines.
const SEARCH_SCAN: usize = 100_000;
/// Files fetched per step of a search's walk.
const SEARCH_BATCH: usize = 4096;

/// The keyset position of the recursive listing: the root's index, then the path after
/// which the walk goes on (empty: the start of that root).
fn position(root: usize, path: &RelPath) -> Vec<u8> {
    let mut v = u16::try_from(root)
        .unwrap_or(u16::MAX)
        .to_be_bytes()
        .to_vec();
    v.extend(path.to_position());
    v
}

/// A walk of a root that failed while `doing` (listing, searching) it: stopped, or an
/// internal error.
fn walk_failed(doing: &str, root: &str, e: &std::io::Error) -> ResourceError {
    if is_stopped(e) {
        cancelled("")
    } else {
        ResourceError::internal(format!("{doing} {root}: {e}"))
    }
}

/// What a URI is followed by for the URIs below it: `/`, unless it ends with one.
fn below(mut uri: String) -> String {
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

impl ServedRoots {
    /// The default listing ([`list_files`](Self::list_files)), once the warming of the
    /// listing cache (if any) and the walk ahead for this page (if any) are done: on this
    /// thread if the listing cache holds the whole page, else on a blocking thread. Then
    /// the next page is walked ahead (see [`super::ahead`]) if this page's walk, or the
    /// walk ahead of it, found it worth it, and the walk ahead of this page (if any) was of
    /// use: through a tree the cache holds, nothing is walked twice, and a cache that
    /// cannot keep what is walked ahead stops it.
    pub(super) async fn list_files_ahead(
        self: &Arc<Self>,
        after: Option<Vec<u8>>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        // While the cache is being warmed, its scan is this listing's (at most the cache's
        // budget of entries): waited for, not done again beside it.
        let _ = self.warmed.subscribe().wait_for(|over| *over).await;
        let walked_ahead = self.ahead.wait(after.as_deref(), limit).await;
        // From the cache on this thread when it holds the whole page (no hop), else on a
        // blocking thread. The walks ahead go on while they are of use: while they find
        // directories to scan, and the cache keeps what they found (it does not if the
        // client is slower than the cache's time to live, or the cache is too small).
        let (page, walk_next) = match self.list_files(after.as_deref(), limit, None)? {
            Some((page, _)) => (page, walked_ahead),
            None => {
                let (page, worth) = off_runtime(self, move |s, stop| {
                    s.list_files(after.as_deref(), limit, Some(stop))?
                        .ok_or_else(|| ResourceError::internal("listing: the walk stopped"))
                })
                .await?;
                (page, worth && !walked_ahead)
            }
        };
        if walk_next && let Some(next) = &page.next {
            let (served, from) = (Arc::clone(self), next.clone());
            self.ahead.start(next.clone(), limit, move || {
                matches!(
                    served.list_files(Some(&from), limit, Some(&Stop::default())),
                    Ok(Some((_, true)))
                )
            });
        }
        Ok(page)
    }

    /// Scans `dir` of root `root` into the listing cache on a blocking thread of the
    /// current runtime, unless a scan of it is under way already or there is no runtime
    /// (`prefetch.rs`).
    fn scan_ahead(&self, root: usize, dir: &RelPath) {
        let (Some(served), Ok(runtime)) =
            (self.me.upgrade(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let Some(claim) = self.prefetch.claim(root, dir) else {
            return;
        };
        let dir = dir.clone();
        runtime.spawn_blocking(move || {
            claim.start();
            let unstopped = Stop::default();
            // Best effort: a directory that cannot be read is left to the walk.
            let _ = scan::scan_ahead(&served.scope(root, &unstopped), &dir);
            drop(claim);
        });
    }

    /// A file as the recursive listing shows it, encoded once per cached entry.
    pub(super) fn listed(&self, root: usize, dir: &RelPath, e: &Entry) -> ListEntry {
        e.listed
            .get_or_init(|| {
                let path = dir.join(&e.name);
                ListEntry::encoded(if self.config.modified_in_full_listing {
                    self.resource(root, &path, &e.info)
                } else {
                    self.compact_resource(root, &path, &e.info)
                })
            })
            .clone()
    }

    /// Where a walk of every file resumes: the root, and the path after which it goes on
    /// (none: the start of that root).
    fn walk_position(after: Option<&[u8]>) -> Result<(usize, Option<RelPath>), ResourceError> {
        match after {
            None => Ok((0, None)),
            Some(bytes) if bytes.len() >= 2 => {
                let root = usize::from(u16::from_be_bytes([bytes[0], bytes[1]]));
                let pos = RelPath::from_position(&bytes[2..])
                    .ok_or_else(|| ResourceError::bad_position(""))?;
                // An empty path is "the start of this root".
                Ok((root, Some(pos).filter(|p| !p.is_root())))
            }
            Some(_) => Err(ResourceError::bad_position("")),
        }
    }

    /// The default listing: every exposed file of every root, in walk order; and whether
    /// walking the next page ahead is worth it: this page had to scan directories (a walk
    /// through cached ones costs little), and each is in the listing cache now (else the
    /// walk ahead would be done again when the page is asked for). The walk looks at
    /// `stop`; without one it reads only directories the listing cache holds, and is
    /// `None` as soon as a directory is not there. A page walked through cached listings
    /// only is kept, and answered again while they stay current (`kept.rs`).
    pub(super) fn list_files(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        stop: Option<&dyn Signal>,
    ) -> Result<Option<(Page, bool)>, ResourceError> {
        if let Some(cache) = &self.cache
            && let Some((resources, next)) = self.kept.get(after, limit, |root, dir| {
                match scan::cached_listing(&self.roots[root].dir, cache, &self.fresh, root, dir) {
                    Ok(Lookup::Hit(listing)) => Some(listing),
                    _ => None,
                }
            })
        {
            let page = Page {
                resources,
                next,
                cache: self.config.cache,
            };
            return Ok(Some((page, false)));
        }
        let cached_only = stop.is_none();
        let unstopped = Stop::default();
        let visits = Visits::new();
        let (mut root, mut pos) = Self::walk_position(after)?;
        let mut resources = Vec::with_capacity(limit.min(4096));
        let (mut scanned, mut uncached) = (false, self.cache.is_none());
        let mut next = None;
        while root < self.roots.len() {
            let want = limit - resources.len();
            let scan_ahead = |dir: &RelPath| self.scan_ahead(root, dir);
            let scope = Scope {
                cached_only,
                visits: Some(&visits),
                prefetch: Some(&self.prefetch),
                ahead: (!cached_only).then_some(AheadDirs(&scan_ahead)),
                ..self.scope(root, stop.unwrap_or(&unstopped))
            };
            let (paths, more) = match walk::files_after(&scope, pos.as_ref(), want) {
                Ok(walked) => walked,
                Err(e) if cached_only && e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Ok(None);
                }
                Err(e) => return Err(walk_failed("listing", &self.roots[root].name, &e)),
            };
            scanned |= scope.scanned.get();
            uncached |= scope.uncached.get();
            resources.extend(paths.iter().map(|(dir, e)| self.listed(root, dir, e)));
            let last = paths.last().map(|(dir, e)| dir.join(&e.name));
            if more || (resources.len() >= limit && root + 1 < self.roots.len()) {
                next = Some(match last {
                    Some(last) if more => position(root, &last),
                    _ => position(root + 1, &RelPath::root()),
                });
                break;
            }
            root += 1;
            pos = None;
        }
        // Kept only if the walk read cached listings alone (`Visits`).
        self.kept
            .keep(after, limit, &resources, next.as_deref(), visits);
        let page = Page {
            resources,
            next,
            cache: self.config.cache,
        };
        Ok(Some((page, scanned && !uncached)))
    }

    /// The default listing under `filter`: every exposed file of every root whose name
    /// and URI match, in walk order, examining at most [`Filter::scan`] entries in all.
    pub(super) fn list_selected(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        filter: &Filter,
        stop: &dyn Signal,
    ) -> Result<Page, ResourceError> {
        let (mut root, mut pos) = Self::walk_position(after)?;
        let mut resources = Vec::new();
        let mut examined = 0;
        let page = |resources, next| Page {
            resources,
            next,
            cache: self.config.cache,
        };
        while root < self.roots.len() {
            if filter.may_match_below(&below(self.uri(root, &RelPath::root()))) {
                let file = |dir: &RelPath, e: &Entry| self.selected(root, dir, e, filter);
                let dir = |dir: &RelPath| filter.may_match_below(&below(self.uri(root, dir)));
                let select = Select {
                    file: &file,
                    dir: &dir,
                    scan: filter.scan().saturating_sub(examined),
                };
                let walked = walk::select_files_after(
                    &self.scope(root, stop),
                    pos.as_ref(),
                    limit - resources.len(),
                    Some(&select),
                )
                .map_err(|e| walk_failed("listing", &self.roots[root].name, &e))?;
                examined += walked.examined;
                resources.extend(
                    walked
                        .files
                        .iter()
                        .map(|(dir, e)| self.listed(root, dir, e)),
                );
                if let Some(next) = walked.next {
                    return Ok(page(resources, Some(position(root, &next))));
                }
            }
            root += 1;
            pos = None;
            if (resources.len() >= limit || examined >= filter.scan()) && root < self.roots.len() {
                return Ok(page(resources, Some(position(root, &RelPath::root()))));
            }
        }
        Ok(page(resources, None))
    }

    /// Whether the entry `e` of `dir` matches `filter`, by the name and URI it is listed
    /// under (each made only when the filter looks at it).
    fn selected(&self, root: usize, dir: &RelPath, e: &Entry, filter: &Filter) -> bool {
        (!filter.filters_names() || filter.matches_name(&e.name.to_string_lossy()))
            && (!filter.filters_uris() || filter.matches_uri(&self.uri(root, &dir.join(&e.name))))
    }

    /// The files whose path (from the root, with the root's name when several are
    /// served) contains every word, in walk order, from the listing cache where it holds
    /// them; at most `SEARCH_SCAN` files examined per call, the page then says where to go
    /// on.
    pub(super) fn search_files(
        &self,
        req: &SearchRequest<'_>,
        stop: &dyn Signal,
    ) -> Result<Page, ResourceError> {
        let (mut root, mut pos) = Self::walk_position(req.after)?;
        let mut found = Vec::new();
        let mut examined = 0usize;
        let page = |found, next| Page {
            resources: found,
            next,
            cache: self.config.cache,
        };
        while root < self.roots.len() {
            let (paths, more) =
                walk::files_after(&self.scope(root, stop), pos.as_ref(), SEARCH_BATCH)
                    .map_err(|e| walk_failed("searching", &self.roots[root].name, &e))?;
            examined += paths.len();
            for (i, (dir, e)) in paths.iter().enumerate() {
                let path = dir.join(&e.name);
                let shown = path.to_path().to_string_lossy().into_owned();
                let text = if self.multi() {
                    format!("{}/{shown}", self.roots[root].name)
                } else {
                    shown
                };
                if !req.matches(&text) {
                    continue;
                }
                found.push(self.listed(root, dir, e));
                if found.len() >= req.limit {
                    let next = if more || i + 1 < paths.len() {
                        Some(position(root, &path))
                    } else {
                        (root + 1 < self.roots.len()).then(|| position(root + 1, &RelPath::root()))
                    };
                    return Ok(page(found, next));
                }
            }
            match paths.last() {
                Some((dir, e)) if more => {
                    let last = dir.join(&e.name);
                    if examined >= SEARCH_SCAN {
                        return Ok(page(found, Some(position(root, &last))));
                    }
                    pos = Some(last);
                }
                _ => {
                    root += 1;
                    pos = None;
                    if examined >= SEARCH_SCAN && root < self.roots.len() {
                        return Ok(page(found, Some(position(root, &RelPath::root()))));
                    }
                }
            }
        }
        Ok(page(found, None))
    }

    /// A directory's (or the roots collection's) direct children that match `filter`,
    /// keyset-paginated on their names (on the roots' indexes); a filtered page examines
    /// at most [`Filter::scan`] children.
    pub(super) fn list_children(
        &self,
        uri: &str,
        after: Option<&[u8]>,
        limit: usize,
        filter: Option<&Filter>,
        stop: &dyn Signal,
    ) -> Result<Page, ResourceError> {
        let (root, dir) = match self.resolve(uri)? {
            Target::Roots => {
                let start = match after {
                    None => 0,
                    Some(&[hi, lo]) => usize::from(u16::from_be_bytes([hi, lo])) + 1,
                    Some(_) => return Err(ResourceError::bad_position(uri)),
                };
                let page = rsrc::filter::page(
                    filter,
                    start..self.roots.len(),
                    limit,
                    |f, &i| f.matches(&self.roots[i].name, &self.uri(i, &RelPath::root())),
                    |&i| u16::try_from(i).unwrap_or(u16::MAX).to_be_bytes().to_vec(),
                );
                let resources = page
                    .items
                    .into_iter()
                    .filter_map(|i| {
                        let md = self.roots[i].dir.dir_metadata().ok()?;
                        Some(self.resource(i, &RelPath::root(), &Info::from(&md)).into())
                    })
                    .collect();
                return Ok(Page {
                    resources,
                    next: page.next,
                    cache: self.config.cache,
                });
            }
            Target::Path(root, rel) => (root, rel),
        };
        let md = self.stat(uri, root, &dir)?;
        if !md.is_dir {
            return Err(ResourceError::not_a_collection(uri));
        }
        let after_name = after.map(OsStr::from_bytes);
        // The directory's entries are read sorted and already after the position: the
        // page is cut from the first `limit + 1` of them, or under a filter from the
        // first `scan + 1` (enough to tell whether more follow the last one examined).
        let n = filter.map_or(limit.max(1), Filter::scan) + 1;
        let entries = scan::next_entries(&self.scope(root, stop), &dir, after_name, n)
            .map_err(|e| io_error(uri, &e))?;
        let page = rsrc::filter::page(
            filter,
            entries,
            limit,
            |f, e| self.selected(root, &dir, e, f),
            |e| e.name.as_bytes().to_vec(),
        );
        let resources = page
            .items
            .iter()
            .map(|e| self.resource(root, &dir.join(&e.name), &e.info).into())
            .collect();
        Ok(Page {
            resources,
            next: page.next,
            cache: self.config.cache,
        })
    }

    /// Fills the listing cache ahead of the first listing, up to its budget, each entry
    /// encoded as the recursive listing shows it (run on a thread of its own when the
    /// provider starts): the first listing then costs what the next ones do.
    pub(super) fn warm(&self) {
        let budget = self.config.listing_cache_entries;
        let unstopped = Stop::default();
        let mut warmed = 0;
        for root in 0..self.roots.len() {
            let scope = self.scope(root, &unstopped);
            let mut after: Option<RelPath> = None;
            while warmed < budget {
                let Ok((files, more)) = walk::files_after(&scope, after.as_ref(), 1000) else {
                    break;
                };
                for (dir, e) in &files {
                    self.listed(root, dir, e);
                }
                warmed += files.len();
                match files.last() {
                    Some((dir, e)) if more => after = Some(dir.join(&e.name)),
                    _ => break,
                }
            }
        }
        tracing::debug!(files = warmed, "listing cache warmed");
    }
}
