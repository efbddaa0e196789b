//! What the filesystem provider serves — its roots, the listing cache, the walks ahead,
//! the conversions and the settings — and the rules every operation shares: how a URI
//! resolves to a root and a path, which metadata an exposed path has, and how a path
//! becomes a resource. The provider (`provider.rs`) holds it; the listings
//! (`list.rs`), reads (`read.rs`), completion (`complete.rs`) and the watcher
//! (`watch.rs`) take it.
//!
//! Invariant: every path is resolved inside one root's capability handle and checked
//! against that root's visibility rules before anything of it is served; a URI that
//! does not resolve is refused like a missing one.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, Weak};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rsrc::ResourceError;
use rsrc::protocol::{DIRECTORY_MIME_TYPE, Resource};
use tokio::sync::watch;

use super::ahead::Ahead;
use super::cache::DirCache;
use super::config::{FsConfig, FsRoot};
use super::convert::Conversions;
use super::entry::Info;
use super::error::FsError;
use super::fresh::Freshness;
use super::kept::KeptPages;
use super::prefetch::Prefetch;
use super::scan::Scope;
use super::visibility::Visibility;
use crate::kit::armed::Armed;
use crate::kit::blocking::{Signal, Stop, stoppable};
use crate::kit::content::mime_from_name;
use crate::kit::open::io_error;
use crate::kit::refusal::refused;
use crate::kit::rel_path::RelPath;
use crate::kit::segment::push_path_segment;
use crate::kit::source_name::is_segment_name;

/// The URI prefix of the filesystem provider.
pub const PREFIX: &str = "file:///";

/// The URI of the root named `name` when several roots are served: `file:///NAME`.
pub fn root_uri(name: &str) -> String {
    let mut s = String::from(PREFIX);
    push_path_segment(&mut s, name.as_bytes());
    s
}

#[derive(Debug)]
pub(super) struct Root {
    pub(super) name: String,
    pub(super) dir: Dir,
    /// What this root exposes.
    pub(super) visibility: Visibility,
    /// Largest file read from this root.
    pub(super) max_read: u64,
}

/// What the provider serves: its roots, the listing cache, the conversions and the
/// settings. Shared with the threads that list, walk ahead, warm the listing cache and
/// watch for changes.
pub(super) struct ServedRoots {
    pub(super) roots: Vec<Arc<Root>>,
    pub(super) cache: Option<DirCache>,
    /// The walks ahead of the recursive listing's next pages (with the listing cache only).
    pub(super) ahead: Ahead,
    /// The recursive listing's pages walked through the listing cache (with it only).
    pub(super) kept: KeptPages,
    /// The directories being scanned ahead of the recursive listing's walks.
    pub(super) prefetch: Arc<Prefetch>,
    /// This state itself, for the scans ahead that outlive the walk starting them.
    pub(super) me: Weak<ServedRoots>,
    /// Whether the watcher vouches for the listing cache's listings, root by root.
    pub(super) fresh: Arc<Freshness>,
    pub(super) conversions: Conversions,
    pub(super) config: FsConfig,
    /// Whether every change from now on will be seen: false from the watcher's start
    /// until its watches are placed (`watch.rs`), so a subscription is acknowledged
    /// only once a change to its file cannot be missed.
    pub(super) armed: Armed,
    /// Whether the listing cache's warming is over (at once without one): the recursive
    /// listing waits for it (`list.rs`), as a server that indexes its tree at the start
    /// answers only then, rather than scanning the same directories beside it.
    pub(super) warmed: watch::Sender<bool>,
}

/// Marks the warming over when dropped: when it ends, and if it panics.
struct Warming(Arc<ServedRoots>);

impl Drop for Warming {
    fn drop(&mut self) {
        self.0.warmed.send_replace(true);
    }
}

/// Runs `f` on a blocking thread of the runtime with a stop signal, set once the
/// returned future is dropped: the walks `f` runs under it give up at their next
/// directory or entry.
pub(super) async fn off_runtime<T: Send + 'static>(
    served: &Arc<ServedRoots>,
    f: impl FnOnce(&ServedRoots, &Stop) -> Result<T, ResourceError> + Send + 'static,
) -> Result<T, ResourceError> {
    let served = Arc::clone(served);
    stoppable(move |stop| f(&served, stop)).await
}

pub(super) fn last_modified(info: &Info) -> Option<String> {
    crate::kit::time::rfc3339(info.modified?)
}

/// Where a URI points.
pub(super) enum Target {
    /// `file:///` when several roots are served: the collection of roots.
    Roots,
    /// A path inside one root.
    Path(usize, RelPath),
}

impl ServedRoots {
    /// Serves `roots` under `config`: opens each root's directory handle and visibility
    /// rules, the listing cache, the conversions. Starts warming the listing cache if
    /// configured to. Refuses an empty list, a name that is no URI segment or is taken twice, a
    /// directory that cannot be opened and a glob that does not compile.
    pub(super) fn serve(roots: Vec<FsRoot>, config: FsConfig) -> Result<Arc<ServedRoots>, FsError> {
        if roots.is_empty() {
            return Err(FsError::NoRoot);
        }
        let mut opened: Vec<Arc<Root>> = Vec::with_capacity(roots.len());
        for root in roots {
            let name = root.name;
            if !is_segment_name(&name) || opened.iter().any(|r| r.name == name) {
                return Err(FsError::BadName(name));
            }
            let dir = Dir::open_ambient_dir(&root.path, ambient_authority())
                .map_err(|e| FsError::Open(root.path.clone(), e))?;
            let rules = root.visibility.as_ref().unwrap_or(&config.visibility);
            let visibility = Visibility::new(rules, &root.path).map_err(FsError::BadGlob)?;
            let max_read = root.max_read.unwrap_or(config.max_read);
            opened.push(Arc::new(Root {
                name,
                dir,
                visibility,
                max_read,
            }));
        }
        let cache = (config.listing_cache_entries > 0)
            .then(|| DirCache::new(config.listing_cache_entries, config.listing_cache_ttl));
        let warm = cache.is_some() && config.warm_listing_cache;
        let conversions = Conversions::new(
            config.conversion.clone(),
            config.max_conversions,
            config.convert_timeout,
            config.max_read,
        );
        let served = Arc::new_cyclic(|me| ServedRoots {
            fresh: Arc::new(Freshness::new(config.listing_freshness, opened.len())),
            roots: opened,
            kept: KeptPages::new(config.listing_cache_entries),
            cache,
            ahead: Ahead::default(),
            prefetch: Arc::default(),
            me: me.clone(),
            conversions,
            config,
            armed: Armed::default(),
            warmed: watch::Sender::new(!warm),
        });
        if warm {
            let warming = Warming(Arc::clone(&served));
            // Best effort: without the thread (its closure, and so the marker, dropped),
            // the first listing fills the cache instead.
            let _ = std::thread::Builder::new()
                .name("rsrc-fs-warm".into())
                .spawn(move || warming.0.warm());
        }
        Ok(served)
    }

    /// Whether changes are watched (and so notified).
    pub(super) fn watches(&self) -> bool {
        self.config.watch && cfg!(target_os = "linux")
    }

    pub(super) fn multi(&self) -> bool {
        self.roots.len() > 1
    }

    /// The root `index` for a walk that looks at `stop`.
    pub(super) fn scope<'a>(&'a self, index: usize, stop: &'a dyn Signal) -> Scope<'a> {
        Scope {
            index,
            dir: &self.roots[index].dir,
            visibility: &self.roots[index].visibility,
            cache: self.cache.as_ref(),
            fresh: &self.fresh,
            cached_only: false,
            scanned: std::cell::Cell::new(false),
            uncached: std::cell::Cell::new(false),
            stop,
            visits: None,
            prefetch: None,
            ahead: None,
        }
    }

    pub(super) fn uri(&self, root: usize, rel: &RelPath) -> String {
        let mut s = String::from(PREFIX);
        if self.multi() {
            push_path_segment(&mut s, self.roots[root].name.as_bytes());
            if !rel.is_root() {
                s.push('/');
            }
        }
        s.push_str(&rel.encode());
        s
    }

    pub(super) fn resolve(&self, uri: &str) -> Result<Target, ResourceError> {
        let Some(rest) = uri.strip_prefix(PREFIX) else {
            return Err(refused(uri, "not a file:/// URI"));
        };
        if !self.multi() {
            return RelPath::decode(rest)
                .map(|p| Target::Path(0, p))
                .map_err(|reason| refused(uri, &reason));
        }
        if rest.is_empty() {
            return Ok(Target::Roots);
        }
        let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let name = RelPath::decode(first).map_err(|reason| refused(uri, &reason))?;
        let index = self
            .roots
            .iter()
            .position(|r| name.components() == [OsStr::new(&r.name)])
            .ok_or_else(|| refused(uri, "no such root"))?;
        RelPath::decode(tail)
            .map(|p| Target::Path(index, p))
            .map_err(|reason| refused(uri, &reason))
    }

    /// The metadata of an exposed path, or not-found.
    pub(super) fn stat(
        &self,
        uri: &str,
        root: usize,
        rel: &RelPath,
    ) -> Result<Info, ResourceError> {
        let dir = &self.roots[root].dir;
        let md = if rel.is_root() {
            dir.dir_metadata()
        } else {
            dir.metadata(rel.to_path())
        }
        .map_err(|e| io_error(uri, &e))?;
        if !(md.is_file() || md.is_dir()) {
            return Err(refused(uri, "not a regular file or directory"));
        }
        if !self.roots[root]
            .visibility
            .resolved_visible(dir, rel, md.is_dir())
        {
            return Err(ResourceError::not_found(uri));
        }
        Ok(Info::from(&md))
    }

    pub(super) fn resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        self.resource_at(self.uri(root, rel), root, rel, md)
    }

    /// [`ServedRoots::resource`] under `uri`, already known (a request's own spelling, or
    /// made by the caller).
    pub(super) fn resource_at(
        &self,
        uri: String,
        root: usize,
        rel: &RelPath,
        md: &Info,
    ) -> Resource {
        let mut r = self.compact_at(uri, root, rel, md);
        if let Some(t) = last_modified(md) {
            r = r.with_last_modified(t);
        }
        r
    }

    /// A resource as the recursive listing shows it: without its modification time, unless
    /// configured otherwise (see [`FsConfig::modified_in_full_listing`]).
    pub(super) fn compact_resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        self.compact_at(self.uri(root, rel), root, rel, md)
    }

    pub(super) fn compact_at(
        &self,
        uri: String,
        root: usize,
        rel: &RelPath,
        md: &Info,
    ) -> Resource {
        let name = match rel.name() {
            Some(n) => n.to_string_lossy().into_owned(),
            None => self.roots[root].name.clone(),
        };
        let mut r = Resource::new(uri, name);
        if md.is_dir {
            r = r.with_mime_type(DIRECTORY_MIME_TYPE).collection();
        } else {
            if let Some(m) = rel.name().and_then(|n| mime_from_name(n.as_bytes())) {
                r = r.with_mime_type(m);
            }
            r = r.with_size(md.len).document();
        }
        r
    }

    pub(super) fn roots_collection(&self) -> Resource {
        Resource::new(PREFIX, "roots")
            .with_title("Served directories")
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }
}
