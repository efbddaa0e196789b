//! The filesystem provider: one or more directories served as `file:///` resources.
//!
//! With one root a file's URI is `file:///<path>`; with several, `file:///<root name>/<path>`
//! and `file:///` is the collection of roots. Files are documents; directories are
//! collections (`inode/directory`). The default listing is every exposed file, in path
//! order; `resources/list` with a directory's URI lists its direct children.
//!
//! Invariants:
//! - Nothing outside a root is ever opened: every access goes through the root's
//!   capability handle (`cap-std`, which resolves with `openat2(RESOLVE_BENEATH)` where
//!   available), URIs are decoded segment by segment with `..` refused, and only regular
//!   files are read (checked on the open handle).
//! - The same visibility rules (hidden files, ignore files, globs) apply to listing,
//!   reading, metadata and completion.
//! - Reads are capped (default 32 MiB) — also for a file that grows while being read.
//! - Listings are keyset-paginated on the path with memory bounded by the page size.
//! - Whatever scans a directory (listing, search, reading a directory, completion) runs on
//!   a blocking thread ([`off_runtime`]): a directory may hold any number of entries, and the
//!   runtime's other requests must not wait on it. The one exception is a page of the
//!   recursive listing that the listing cache holds whole (`list.rs`). Such work stops
//!   at the next directory or entry once its request goes away ([`crate::kit::blocking`]).
//!   Large files are read on a blocking thread too, and stop between chunks.
//! - Changes are watched through the roots' own directory handles (`watch.rs`, Linux) and
//!   published coalesced: a change to an entry updates it and its parent collection.
//!   Elsewhere the provider declares neither `subscribe` nor `listChanged`.
//! - A cached listing is current while the watcher vouches for its root and has not
//!   dropped it, else while its directory's stamp is unchanged (`fresh.rs`, `cache.rs`):
//!   a listing reflects every change the watcher has delivered, and the watcher drops
//!   what a change touches before publishing it.
//!
//! # Layout
//!
//! This file holds the settings, the roots and how a URI resolves to a path in one;
//! `list.rs` the listings and search, `read.rs` reading files and directories,
//! `complete.rs` completion; `walk.rs` the sorted, resumable walks of a tree, over
//! `scan.rs` (one directory's next entries) and `cache.rs` (the listing cache, with
//! `fresh.rs`: when the watcher's word stands for a stamp), which share `entry.rs` (what
//! a listing knows of an entry); `kept.rs` the recursive listing's pages kept with the
//! listings they were walked from; `ahead.rs` the walk ahead of the next page, `filter.rs` what is exposed, `convert.rs` format conversions, `watch.rs`
//! change notifications. Opening and reading one file safely, work on blocking threads,
//! paths and URI segments, and content types are shared with other providers
//! (`crate::kit`).

mod ahead;
mod cache;
mod complete;
mod convert;
mod entry;
mod error;
mod filter;
mod fresh;
#[cfg(all(test, target_os = "linux"))]
mod freshness;
mod kept;
mod list;
mod read;
#[cfg(test)]
mod relisting;
mod scan;
#[cfg(test)]
mod stopping;
mod walk;
#[cfg(target_os = "linux")]
mod watch;

pub use error::FsError;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rsrc::protocol::{
    CacheHint, Completion, DIRECTORY_MIME_TYPE, Resource, ResourceCapabilities, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError, SearchRequest,
};

#[cfg(feature = "pdf")]
pub use convert::PdfText;
pub use convert::{Converted, Converter, Isolation, Worker, convert_worker, default_converters};
pub use filter::FilterConfig;
#[doc(hidden)]
pub use filter::fuzz_ignore_file;
pub use fresh::{FreshnessFallback, ListingFreshness, ListingTrust};

use crate::kit::armed::Armed;
use crate::kit::blocking::{Signal, Stop, stoppable};
use crate::kit::content::mime_from_name;
use crate::kit::open::io_error;
use crate::kit::refusal::refused;
use crate::kit::rel_path::RelPath;
use crate::kit::segment::push_path_segment;
use crate::kit::source_name::is_segment_name;
use ahead::Ahead;
use cache::DirCache;
use convert::Conversions;
use entry::Info;
use filter::Filter;
use fresh::Freshness;
use kept::KeptPages;
use scan::Scope;

/// The URI prefix of the filesystem provider.
pub const PREFIX: &str = "file:///";

/// Settings of the filesystem provider.
#[derive(Clone)]
pub struct FsConfig {
    /// What is exposed.
    pub filter: FilterConfig,
    /// Largest file read, in bytes (default 32 MiB).
    pub max_read: u64,
    /// Most bytes of child content returned when a directory is read (default 1 MiB).
    pub collection_budget: u64,
    /// Most children examined when a directory is read (default 256).
    pub collection_max_files: usize,
    /// Files up to this size are read on the calling task; larger ones on a blocking
    /// thread (default 256 KiB). Page-cache reads of small files cost microseconds, less
    /// than a thread hop.
    pub inline_read_limit: u64,
    /// Format converters (default: PDF text extraction).
    pub converters: Vec<Arc<dyn Converter>>,
    /// Time allowed to each conversion, waiting for a slot included (default 10 s).
    pub convert_timeout: Duration,
    /// Where conversions run (default: in this process; `rsrc serve` uses a child
    /// process with memory and CPU limits).
    pub conversion: Isolation,
    /// Most conversions running at once (default 2).
    pub max_conversions: usize,
    /// Caching hint for 2026-07-28 clients (default: the server's).
    pub cache: Option<CacheHint>,
    /// Most directory entries kept in the listing cache (default 65,536, about 20 MiB; 0
    /// disables it).
    /// A cached directory is reused for at most `listing_cache_ttl`, and meanwhile while
    /// it is current by [`listing_freshness`](Self::listing_freshness): until the watcher
    /// reads a change to it, or while its stamp is unchanged (no entry added, removed or
    /// renamed).
    pub listing_cache_entries: usize,
    /// How long a cached listing may be reused; this bounds how stale a listed file's
    /// size and modification time can be (default 2 s).
    pub listing_cache_ttl: Duration,
    /// Whether the recursive listing (`resources/list` without `uri`) carries each file's
    /// `lastModified` (default: no). That listing can hold every file of a large tree, so
    /// by default it carries what picking a file needs — URI, name, type, size — and stays
    /// a third smaller; a directory's listing, `resources/metadata` and reads always carry
    /// the modification time.
    pub modified_in_full_listing: bool,
    /// Whether the provider fills the listing cache on a thread of its own as soon as it
    /// starts (default: no), so that a listing soon after the start is as fast as the next
    /// ones. The thread stops at the cache's budget. Off by default: a cached directory
    /// serves only for `listing_cache_ttl`, so the warmed entries help a listing in the
    /// first seconds only, and they cost memory until replaced (3.3 MiB of the server's
    /// 4.4 MiB of anonymous memory at idle on a tree of 10,000 files).
    pub warm_listing_cache: bool,
    /// Whether the roots are watched for changes (Linux), so that clients may subscribe
    /// and hear of changes to the listing (default: yes).
    pub watch: bool,
    /// Changes to one entry within this window are published as one update (default
    /// 50 ms).
    pub watch_window: Duration,
    /// How a cached listing is known to be current (default: trust the watcher while it
    /// vouches for the root, see [`ListingFreshness`]). [`ListingFreshness::Stamp`] is for
    /// roots on network filesystems whose changes raise no event here; roots on
    /// filesystems known to be such fall back to stamps on their own.
    pub listing_freshness: ListingFreshness,
}

impl std::fmt::Debug for FsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsConfig")
            .field("filter", &self.filter)
            .field("max_read", &self.max_read)
            .field("collection_budget", &self.collection_budget)
            .field(
                "converters",
                &self.converters.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            filter: FilterConfig::standard(),
            max_read: 32 * 1024 * 1024,
            collection_budget: 1024 * 1024,
            collection_max_files: 256,
            inline_read_limit: crate::kit::open::INLINE_READ,
            converters: default_converters(),
            convert_timeout: Duration::from_secs(10),
            conversion: Isolation::InProcess,
            max_conversions: 2,
            cache: None,
            listing_cache_entries: 64 * 1024,
            listing_cache_ttl: Duration::from_secs(2),
            modified_in_full_listing: false,
            warm_listing_cache: false,
            watch: true,
            watch_window: Duration::from_millis(50),
            listing_freshness: ListingFreshness::Watch,
        }
    }
}

/// One directory to serve, with what it exposes when that differs from the provider's
/// settings.
#[derive(Debug, Clone)]
pub struct FsRoot {
    /// The root's name: its URI segment when several roots are served.
    pub name: String,
    /// The directory.
    pub path: PathBuf,
    /// What is exposed (default: [`FsConfig::filter`]).
    pub filter: Option<FilterConfig>,
    /// Largest file read, in bytes (default: [`FsConfig::max_read`]).
    pub max_read: Option<u64>,
}

impl FsRoot {
    /// `path` under `name`, with the provider's settings.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> FsRoot {
        FsRoot {
            name: name.into(),
            path: path.into(),
            filter: None,
            max_read: None,
        }
    }
}

/// The URI of the root named `name` when several roots are served: `file:///NAME`.
pub fn root_uri(name: &str) -> String {
    let mut s = String::from(PREFIX);
    push_path_segment(&mut s, name.as_bytes());
    s
}

#[derive(Debug)]
struct Root {
    name: String,
    dir: Dir,
    /// What this root exposes.
    filter: Filter,
    /// Largest file read from this root.
    max_read: u64,
}

/// Directories served as resources.
pub struct FsProvider {
    served: Arc<ServedRoots>,
}

/// What the provider serves: its roots, the listing cache, the conversions and the
/// settings. Shared with the threads that list, walk ahead, warm the listing cache and
/// watch for changes.
struct ServedRoots {
    roots: Vec<Arc<Root>>,
    cache: Option<DirCache>,
    /// The walks ahead of the recursive listing's next pages (with the listing cache only).
    ahead: Ahead,
    /// The recursive listing's pages walked through the listing cache (with it only).
    kept: KeptPages,
    /// Whether the watcher vouches for the listing cache's listings, root by root.
    fresh: Arc<Freshness>,
    conversions: Conversions,
    config: FsConfig,
    /// Whether every change from now on will be seen: false from the watcher's start
    /// until its watches are placed (`watch::start`), so a subscription is acknowledged
    /// only once a change to its file cannot be missed.
    armed: Armed,
}

impl std::fmt::Debug for FsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsProvider")
            .field(
                "roots",
                &self
                    .served
                    .roots
                    .iter()
                    .map(|r| &r.name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// A root name for `path`: its last component.
pub fn default_root_name(path: &Path) -> String {
    path.canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| path.file_name())
        .map_or_else(|| "root".to_owned(), |n| n.to_string_lossy().into_owned())
}

/// Runs `f` on a blocking thread of the runtime with a stop signal, set once the
/// returned future is dropped: the walks `f` runs under it give up at their next
/// directory or entry.
async fn off_runtime<T: Send + 'static>(
    served: &Arc<ServedRoots>,
    f: impl FnOnce(&ServedRoots, &Stop) -> Result<T, ResourceError> + Send + 'static,
) -> Result<T, ResourceError> {
    let served = Arc::clone(served);
    stoppable(move |stop| f(&served, stop)).await
}

fn last_modified(info: &Info) -> Option<String> {
    crate::kit::time::rfc3339(info.modified?)
}

/// Where a URI points.
enum Target {
    /// `file:///` when several roots are served: the collection of roots.
    Roots,
    /// A path inside one root.
    Path(usize, RelPath),
}

impl FsProvider {
    /// Serves `roots` (name, directory). With one root the name is used only as the
    /// root collection's display name.
    pub fn new(roots: Vec<(String, PathBuf)>, config: FsConfig) -> Result<FsProvider, FsError> {
        let roots = roots
            .into_iter()
            .map(|(name, path)| FsRoot::new(name, path))
            .collect();
        FsProvider::with_roots(roots, config)
    }

    /// Serves `roots`, each with its own filter and read limit where it sets them.
    pub fn with_roots(roots: Vec<FsRoot>, config: FsConfig) -> Result<FsProvider, FsError> {
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
            let filter = Filter::new(root.filter.as_ref().unwrap_or(&config.filter), &root.path)
                .map_err(FsError::BadGlob)?;
            let max_read = root.max_read.unwrap_or(config.max_read);
            opened.push(Arc::new(Root {
                name,
                dir,
                filter,
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
        let served = Arc::new(ServedRoots {
            fresh: Arc::new(Freshness::new(config.listing_freshness, opened.len())),
            roots: opened,
            kept: KeptPages::new(config.listing_cache_entries),
            cache,
            ahead: Ahead::default(),
            conversions,
            config,
            armed: Armed::default(),
        });
        if warm {
            let warming = Arc::clone(&served);
            // Best effort: without the thread, the first listing fills the cache instead.
            let _ = std::thread::Builder::new()
                .name("rsrc-fs-warm".into())
                .spawn(move || warming.warm());
        }
        Ok(FsProvider { served })
    }

    /// Serves one directory.
    pub fn single(path: impl Into<PathBuf>, config: FsConfig) -> Result<FsProvider, FsError> {
        let path = path.into();
        FsProvider::new(vec![(default_root_name(&path), path)], config)
    }

    /// What its listings rest on: whether the watcher vouches for them now, and how often
    /// they fell back to stamps (see [`ListingFreshness`]). Valid after the provider is
    /// mounted.
    pub fn listing_trust(&self) -> ListingTrust {
        ListingTrust(Arc::clone(&self.served.fresh))
    }
}

impl ServedRoots {
    /// Whether changes are watched (and so notified).
    fn watches(&self) -> bool {
        self.config.watch && cfg!(target_os = "linux")
    }

    fn multi(&self) -> bool {
        self.roots.len() > 1
    }

    /// The root `index` for a walk that looks at `stop`.
    fn scope<'a>(&'a self, index: usize, stop: &'a dyn Signal) -> Scope<'a> {
        Scope {
            index,
            dir: &self.roots[index].dir,
            filter: &self.roots[index].filter,
            cache: self.cache.as_ref(),
            fresh: &self.fresh,
            cached_only: false,
            scanned: std::cell::Cell::new(false),
            uncached: std::cell::Cell::new(false),
            stop,
            visits: None,
        }
    }

    fn uri(&self, root: usize, rel: &RelPath) -> String {
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

    fn resolve(&self, uri: &str) -> Result<Target, ResourceError> {
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
    fn stat(&self, uri: &str, root: usize, rel: &RelPath) -> Result<Info, ResourceError> {
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
            .filter
            .resolved_visible(dir, rel, md.is_dir())
        {
            return Err(ResourceError::not_found(uri));
        }
        Ok(Info::from(&md))
    }

    fn resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        self.resource_at(self.uri(root, rel), root, rel, md)
    }

    /// [`ServedRoots::resource`] under `uri`, already known (a request's own spelling, or
    /// made by the caller).
    fn resource_at(&self, uri: String, root: usize, rel: &RelPath, md: &Info) -> Resource {
        let mut r = self.compact_at(uri, root, rel, md);
        if let Some(t) = last_modified(md) {
            r = r.with_last_modified(t);
        }
        r
    }

    /// A resource as the recursive listing shows it: without its modification time, unless
    /// configured otherwise (see [`FsConfig::modified_in_full_listing`]).
    fn compact_resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        self.compact_at(self.uri(root, rel), root, rel, md)
    }

    fn compact_at(&self, uri: String, root: usize, rel: &RelPath, md: &Info) -> Resource {
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

    fn roots_collection(&self) -> Resource {
        Resource::new(PREFIX, "roots")
            .with_title("Served directories")
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }
}

impl Provider for FsProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        (0..self.served.roots.len())
            .map(|i| {
                let name = if self.served.multi() {
                    format!("files of {}", self.served.roots[i].name)
                } else {
                    "files".to_owned()
                };
                ResourceTemplate::new(self.served.template_for(i), name)
                    .with_title(format!("Files in {}", self.served.roots[i].name))
                    .with_description(
                        "Any file or directory under the served directory, by its relative path",
                    )
                    .with_capabilities(ResourceCapabilities {
                        list: Some(true),
                        subscribe: None,
                    })
            })
            .collect()
    }

    fn capabilities(&self) -> ProviderCapabilities {
        let watching = self.served.watches();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    fn hears_every_change(&self) -> bool {
        self.served.armed.is_armed()
    }

    fn armed(&self) -> bool {
        self.served.armed.is_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        #[cfg(target_os = "linux")]
        if self.served.watches() {
            watch::start(&self.served, feed, self.served.config.watch_window);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = feed;
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let (after, limit) = (req.after.map(<[u8]>::to_vec), req.limit);
        let filter = req.filter.cloned();
        match (req.parent, filter) {
            (None, None) => self.served.list_files_ahead(after, limit).await,
            (None, Some(filter)) => {
                off_runtime(&self.served, move |s, stop| {
                    s.list_selected(after.as_deref(), limit, &filter, stop)
                })
                .await
            }
            (Some(uri), filter) => {
                let uri = uri.to_owned();
                off_runtime(&self.served, move |s, stop| {
                    s.list_children(&uri, after.as_deref(), limit, filter.as_ref(), stop)
                })
                .await
            }
        }
    }

    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        let (words, after, limit) = (req.words.to_vec(), req.after.map(<[u8]>::to_vec), req.limit);
        off_runtime(&self.served, move |s, stop| {
            s.search_files(&SearchRequest::new(&words, after.as_deref(), limit), stop)
        })
        .await
        .map(Some)
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        match self.served.resolve(uri)? {
            Target::Roots => Ok(self.served.roots_collection()),
            Target::Path(root, rel) => {
                let md = self.served.stat(uri, root, &rel)?;
                Ok(self.served.resource_at(uri.to_owned(), root, &rel, &md))
            }
        }
    }

    /// Accepted where a read would be, and acknowledged once the watcher's watches are
    /// placed, so a change made right after the acknowledgement is heard. A tree too large
    /// to watch within [`ARMING_WAIT`](crate::kit::armed::ARMING_WAIT) is acknowledged
    /// then, while the watches go on.
    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.metadata(ctx, uri).await?;
        self.served.armed.wait().await;
        Ok(())
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let contents = match self.served.resolve(uri)? {
            Target::Roots => Vec::new(),
            Target::Path(root, rel) => match self.served.open(uri, root, &rel)? {
                (Some(file), md) if md.is_file() => {
                    self.served
                        .document(ctx, uri, (root, &rel), (file, md), true)
                        .await?
                }
                _ => self.served.collection(ctx, uri, root, &rel).await?,
            },
        };
        Ok(ReadOutput {
            contents,
            cache: self.served.config.cache,
        })
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let Some(root) = self.served.template_root(req.template) else {
            return Ok(Completion::empty());
        };
        if req.argument != "path" {
            return Err(ResourceError::invalid(
                "",
                format!(
                    "the template {} has no variable {:?}",
                    req.template, req.argument
                ),
            ));
        }
        let value = req.value.to_owned();
        off_runtime(&self.served, move |s, stop| {
            s.complete_path(root, &value, stop)
        })
        .await
    }
}
