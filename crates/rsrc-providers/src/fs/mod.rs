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
//! - Changes are watched through the roots' own directory handles (`watch.rs`, Linux) and
//!   published coalesced: a change to an entry updates it and its parent collection.

mod cache;
mod convert;
mod filter;
pub(crate) mod path;
pub(crate) mod read;
mod walk;
#[cfg(target_os = "linux")]
mod watch;

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata};
use rsrc::protocol::{
    Body, CacheHint, Completion, DIRECTORY_MIME_TYPE, Resource, ResourceCapabilities,
    ResourceContents, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Listed, Page, Provider, ProviderCapabilities,
    ReadOutput, RequestContext, ResourceError, SearchRequest,
};

#[cfg(feature = "pdf")]
pub use convert::PdfText;
pub use convert::{Converted, Converter, Isolation, Worker, convert_worker, default_converters};
pub use filter::FilterConfig;
#[doc(hidden)]
pub use filter::fuzz_ignore_file;

use cache::DirCache;
use convert::Conversions;
use filter::Filter;
use path::{RelPath, display_name, push_segment};
use read::{
    ReadError, StopOnDrop, mime_for, mime_from_name, open_checked, open_resolved, read_open,
};
use walk::{Info, Kind, Scope};

/// Most files one search call examines.
const SEARCH_SCAN: usize = 100_000;
/// Files fetched per step of a search's walk.
const SEARCH_BATCH: usize = 4096;

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
    /// A cached directory is reused while its stamp is unchanged (no entry added, removed
    /// or renamed) and for at most `listing_cache_ttl`.
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
    /// starts (default: yes), so that the first listing is as fast as the next ones. The
    /// thread stops at the cache's budget.
    pub warm_listing_cache: bool,
    /// Whether the roots are watched for changes (Linux), so that clients may subscribe
    /// and hear of changes to the listing (default: yes).
    pub watch: bool,
    /// Changes to one entry within this window are published as one update (default
    /// 50 ms).
    pub watch_window: Duration,
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
            inline_read_limit: 256 * 1024,
            converters: default_converters(),
            convert_timeout: Duration::from_secs(10),
            conversion: Isolation::InProcess,
            max_conversions: 2,
            cache: None,
            listing_cache_entries: 64 * 1024,
            listing_cache_ttl: Duration::from_secs(2),
            modified_in_full_listing: false,
            warm_listing_cache: true,
            watch: true,
            watch_window: Duration::from_millis(50),
        }
    }
}

/// Why a filesystem provider could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum FsError {
    /// A root could not be opened.
    Open(PathBuf, io::Error),
    /// A root name is empty, reserved, holds `/`, or is used twice.
    BadName(String),
    /// No root was given.
    NoRoot,
    /// An include or exclude glob is invalid.
    BadGlob(String),
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsError::Open(p, e) => write!(f, "cannot open the directory {}: {e}", p.display()),
            FsError::BadName(n) => write!(f, "invalid or duplicate root name {n:?}"),
            FsError::NoRoot => f.write_str("no directory to serve"),
            FsError::BadGlob(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for FsError {}

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
    push_segment(&mut s, OsStr::new(name));
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
    tree: Arc<Tree>,
}

/// The provider's state, shared with the thread that warms the listing cache.
struct Tree {
    roots: Vec<Arc<Root>>,
    cache: Option<DirCache>,
    conversions: Conversions,
    config: FsConfig,
}

impl std::fmt::Debug for FsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsProvider")
            .field(
                "roots",
                &self.tree.roots.iter().map(|r| &r.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
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

fn last_modified(info: &Info) -> Option<String> {
    Some(humantime::format_rfc3339_seconds(info.modified?).to_string())
}

/// `ELOOP`, `ENAMETOOLONG`, `ENXIO` (opening a socket) and `ENODEV` on Linux.
const ELOOP: i32 = 40;
const ENAMETOOLONG: i32 = 36;
const ENXIO: i32 = 6;
const ENODEV: i32 = 19;

/// A filesystem error as the client sees it. Everything that means "not reachable from
/// this root" — absent, not a directory, an escape refused by the capability handle, a
/// link loop, a name too long, no permission — answers exactly like a missing resource,
/// and no host path ever reaches the client.
fn io_error(uri: &str, e: &io::Error) -> ResourceError {
    let unreachable = matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory | io::ErrorKind::PermissionDenied
    ) || matches!(
        e.raw_os_error(),
        Some(ELOOP | ENAMETOOLONG | ENXIO | ENODEV)
    );
    if unreachable {
        tracing::debug!(%uri, error = %e, "not served");
        ResourceError::not_found(uri)
    } else {
        ResourceError::internal(format!("{uri}: {e}"))
    }
}

/// A refused URI answers like a missing one; the reason is only logged.
fn refused(uri: &str, reason: &str) -> ResourceError {
    tracing::debug!(%uri, reason, "refused");
    ResourceError::not_found(uri)
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
            if !valid_name(&name) || opened.iter().any(|r| r.name == name) {
                return Err(FsError::BadName(name));
            }
            let dir = Dir::open_ambient_dir(&root.path, ambient_authority())
                .map_err(|e| FsError::Open(root.path.clone(), e))?;
            let filter = Filter::new(root.filter.as_ref().unwrap_or(&config.filter))
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
        let tree = Arc::new(Tree {
            roots: opened,
            cache,
            conversions,
            config,
        });
        if warm {
            let warming = Arc::clone(&tree);
            // Best effort: without the thread, the first listing fills the cache instead.
            let _ = std::thread::Builder::new()
                .name("rsrc-fs-warm".into())
                .spawn(move || warming.warm());
        }
        Ok(FsProvider { tree })
    }

    /// Serves one directory.
    pub fn single(path: impl Into<PathBuf>, config: FsConfig) -> Result<FsProvider, FsError> {
        let path = path.into();
        FsProvider::new(vec![(default_root_name(&path), path)], config)
    }
}

impl Tree {
    /// Whether changes are watched (and so notified).
    fn watches(&self) -> bool {
        self.config.watch && cfg!(target_os = "linux")
    }

    fn multi(&self) -> bool {
        self.roots.len() > 1
    }

    fn scope(&self, index: usize) -> Scope<'_> {
        Scope {
            index,
            dir: &self.roots[index].dir,
            filter: &self.roots[index].filter,
            cache: self.cache.as_ref(),
        }
    }

    fn uri(&self, root: usize, rel: &RelPath) -> String {
        let mut s = String::from(PREFIX);
        if self.multi() {
            push_segment(&mut s, OsStr::new(&self.roots[root].name));
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
            .resolved_visible(root, dir, rel, md.is_dir())
        {
            return Err(ResourceError::not_found(uri));
        }
        Ok(Info::from(&md))
    }

    fn resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        let mut r = self.compact_resource(root, rel, md);
        if let Some(t) = last_modified(md) {
            r = r.with_last_modified(t);
        }
        r
    }

    /// A resource as the recursive listing shows it: without its modification time, unless
    /// configured otherwise (see [`FsConfig::modified_in_full_listing`]).
    fn compact_resource(&self, root: usize, rel: &RelPath, md: &Info) -> Resource {
        let name = match rel.name() {
            Some(n) => display_name(n),
            None => self.roots[root].name.clone(),
        };
        let mut r = Resource::new(self.uri(root, rel), name);
        if md.is_dir {
            r = r.with_mime_type(DIRECTORY_MIME_TYPE).collection();
        } else {
            if let Some(m) = rel.name().and_then(mime_from_name) {
                r = r.with_mime_type(m);
            }
            r = r.with_size(md.len).document();
        }
        r
    }

    /// A file as the recursive listing shows it, encoded once per cached entry.
    fn listed(&self, root: usize, dir: &RelPath, e: &walk::Entry) -> Listed {
        e.listed
            .get_or_init(|| {
                let path = dir.join(&e.name);
                Listed::encoded(if self.config.modified_in_full_listing {
                    self.resource(root, &path, &e.info)
                } else {
                    self.compact_resource(root, &path, &e.info)
                })
            })
            .clone()
    }

    fn roots_collection(&self) -> Resource {
        Resource::new(PREFIX, "roots")
            .with_title("Served directories")
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }

    /// The default listing: every exposed file of every root, in order.
    /// Where a walk of every file resumes: the root, and the path after which it goes on
    /// (none: the start of that root).
    fn walk_position(after: Option<&[u8]>) -> Result<(usize, Option<RelPath>), ResourceError> {
        match after {
            None => Ok((0, None)),
            Some(bytes) if bytes.len() >= 2 => {
                let root = usize::from(u16::from_be_bytes([bytes[0], bytes[1]]));
                let pos = RelPath::from_position(&bytes[2..])
                    .ok_or_else(|| ResourceError::internal("bad position"))?;
                // An empty path is "the start of this root".
                Ok((root, Some(pos).filter(|p| !p.is_root())))
            }
            Some(_) => Err(ResourceError::internal("bad position")),
        }
    }

    fn list_files(&self, after: Option<&[u8]>, limit: usize) -> Result<Page, ResourceError> {
        let (mut root, mut pos) = Self::walk_position(after)?;
        let mut resources = Vec::with_capacity(limit.min(4096));
        while root < self.roots.len() {
            let want = limit - resources.len();
            let (paths, more) =
                walk::files_after(&self.scope(root), pos.as_ref(), want).map_err(|e| {
                    ResourceError::internal(format!("listing {}: {e}", self.roots[root].name))
                })?;
            resources.extend(paths.iter().map(|(dir, e)| self.listed(root, dir, e)));
            let last = paths.last().map(|(dir, e)| dir.join(&e.name));
            if more || (resources.len() >= limit && root + 1 < self.roots.len()) {
                let next = match last {
                    Some(last) if more => position(root, &last),
                    _ => position(root + 1, &RelPath::root()),
                };
                return Ok(Page {
                    resources,
                    next: Some(next),
                    cache: self.config.cache,
                });
            }
            root += 1;
            pos = None;
        }
        Ok(Page {
            resources,
            next: None,
            cache: self.config.cache,
        })
    }

    /// The files whose path (from the root, with the root's name when several are
    /// served) contains every word, in walk order, from the listing cache where it holds
    /// them; at most `SEARCH_SCAN` files examined per call, the page then says where to go
    /// on.
    fn search_files(&self, req: &SearchRequest<'_>) -> Result<Page, ResourceError> {
        let (mut root, mut pos) = Self::walk_position(req.after)?;
        let mut found = Vec::new();
        let mut examined = 0usize;
        let page = |found, next| Page {
            resources: found,
            next,
            cache: self.config.cache,
        };
        while root < self.roots.len() {
            let (paths, more) = walk::files_after(&self.scope(root), pos.as_ref(), SEARCH_BATCH)
                .map_err(|e| {
                    ResourceError::internal(format!("searching {}: {e}", self.roots[root].name))
                })?;
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

    fn list_children(
        &self,
        uri: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        let (root, dir) = match self.resolve(uri)? {
            Target::Roots => {
                let start = match after {
                    None => 0,
                    Some(&[hi, lo]) => usize::from(u16::from_be_bytes([hi, lo])) + 1,
                    Some(_) => return Err(ResourceError::internal("bad position")),
                };
                let end = self.roots.len().min(start + limit);
                let resources = (start..end)
                    .filter_map(|i| {
                        let md = self.roots[i].dir.dir_metadata().ok()?;
                        Some(self.resource(i, &RelPath::root(), &Info::from(&md)).into())
                    })
                    .collect();
                let next = (end < self.roots.len()).then(|| {
                    u16::try_from(end - 1)
                        .unwrap_or(u16::MAX)
                        .to_be_bytes()
                        .to_vec()
                });
                return Ok(Page {
                    resources,
                    next,
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
        let entries = walk::next_entries(&self.scope(root), &dir, after_name, limit + 1)
            .map_err(|e| io_error(uri, &e))?;
        let more = entries.len() > limit;
        let mut resources = Vec::with_capacity(limit.min(entries.len()));
        for e in entries.iter().take(limit) {
            resources.push(self.resource(root, &dir.join(&e.name), &e.info).into());
        }
        let next = more.then(|| entries[limit - 1].name.as_bytes().to_vec());
        Ok(Page {
            resources,
            next,
            cache: self.config.cache,
        })
    }

    /// Reads an open file, on the calling task if it is small, else on a blocking thread
    /// once the server's budget of content in flight has room for it; the blocking read
    /// stops between chunks when this future is dropped (the request was cancelled or
    /// its client went away).
    async fn read_file(
        &self,
        ctx: &RequestContext,
        root: usize,
        file: cap_std::fs::File,
        md: Metadata,
    ) -> Result<Vec<u8>, ReadError> {
        let cap = self.roots[root].max_read;
        if md.len() <= self.config.inline_read_limit {
            return read_open(file, &md, cap, &AtomicBool::new(false));
        }
        if md.len() <= cap {
            ctx.reserve(md.len()).await;
        }
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let flag = Arc::clone(&stop.0);
        tokio::task::spawn_blocking(move || read_open(file, &md, cap, &flag))
            .await
            .unwrap_or_else(|e| Err(ReadError::Io(io::Error::other(e))))
    }

    /// Opens an exposed path: the open handle (none for a root) and its metadata.
    fn open(
        &self,
        uri: &str,
        root: usize,
        rel: &RelPath,
    ) -> Result<(Option<cap_std::fs::File>, Metadata), ResourceError> {
        let Root { dir, filter, .. } = &*self.roots[root];
        if rel.is_root() {
            return Ok((None, dir.dir_metadata().map_err(|e| io_error(uri, &e))?));
        }
        let (file, md, linked) =
            open_resolved(dir, rel).map_err(|e| self.read_error(uri, root, e))?;
        // Opened without following a link, the path is its own resolution.
        let visible = if linked {
            filter.resolved_visible(root, dir, rel, md.is_dir())
        } else {
            filter.path_visible(root, dir, rel, md.is_dir())
        };
        if !visible {
            return Err(ResourceError::not_found(uri));
        }
        Ok((Some(file), md))
    }

    fn read_error(&self, uri: &str, root: usize, e: ReadError) -> ResourceError {
        match e {
            ReadError::NotRegular => refused(uri, "not a regular file"),
            ReadError::Cancelled => ResourceError::unavailable(uri, "the read was cancelled"),
            ReadError::TooLarge { size } => {
                ResourceError::too_large(uri.to_owned(), size, self.roots[root].max_read)
            }
            ReadError::Io(e) => io_error(uri, &e),
        }
    }

    /// The representations of one open file (with its metadata): itself (text if UTF-8,
    /// else binary), then, if `convert`, any converter's alternative.
    async fn document(
        &self,
        ctx: &RequestContext,
        uri: &str,
        (root, rel): (usize, &RelPath),
        (file, md): (cap_std::fs::File, Metadata),
        convert: bool,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let info = Info::from(&md);
        let bytes = self
            .read_file(ctx, root, file, md)
            .await
            .map_err(|e| self.read_error(uri, root, e))?;
        let md = &info;
        let name = rel.name().unwrap_or_default();
        let mut meta = self.resource(root, rel, md);
        meta.uri = uri.to_owned();
        meta.size = Some(bytes.len() as u64);
        let bytes = read::text_or_bytes(bytes);
        let (mime, body) = match bytes {
            Ok(text) => (mime_for(name, text.as_bytes(), true), Body::Text(text)),
            Err(bytes) => (mime_for(name, &bytes, false), Body::Blob(bytes.into())),
        };
        meta.mime_type = Some(mime.clone());
        let mut out = vec![ResourceContents {
            resource: meta,
            body,
        }];
        let mut raw = None;
        for c in self
            .config
            .converters
            .iter()
            .filter(|c| convert && c.accepts(&mime))
        {
            // Converters see the raw bytes; a blob's are shared, not copied.
            let raw = raw.get_or_insert_with(|| match &out[0].body {
                Body::Blob(b) => b.clone(),
                Body::Text(t) => bytes::Bytes::copy_from_slice(t.as_bytes()),
            });
            if let Some(alt) = self.conversions.run(c, raw).await {
                let mut alt_meta = out[0].resource.clone();
                alt_meta.mime_type = Some(alt.mime_type);
                alt_meta.size = Some(alt.text.len() as u64);
                out.push(ResourceContents {
                    resource: alt_meta,
                    body: Body::Text(alt.text),
                });
            }
        }
        Ok(out)
    }

    /// A directory's child documents with their content, whole files only, within the
    /// byte budget: possibly a subset, never a truncated file.
    async fn collection(
        &self,
        ctx: &RequestContext,
        uri: &str,
        root: usize,
        dir: &RelPath,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let entries = walk::next_entries(
            &self.scope(root),
            dir,
            None,
            self.config.collection_max_files,
        )
        .map_err(|e| io_error(uri, &e))?;
        let mut out = Vec::new();
        let mut used = 0u64;
        for e in entries.into_iter().filter(|e| e.kind == Kind::File) {
            if used + e.info.len > self.config.collection_budget {
                continue;
            }
            let path = dir.join(&e.name);
            let child_uri = self.uri(root, &path);
            let Ok((file, md)) = open_checked(&self.roots[root].dir, &path) else {
                continue;
            };
            if let Ok(contents) = self
                .document(ctx, &child_uri, (root, &path), (file, md), false)
                .await
            {
                let size: u64 = contents.iter().map(|c| c.body.len() as u64).sum();
                if used + size <= self.config.collection_budget {
                    used += size;
                    out.extend(contents);
                }
            }
        }
        Ok(out)
    }

    fn template_root(&self, template: &str) -> Option<usize> {
        (0..self.roots.len()).find(|&i| self.template_for(i) == template)
    }

    fn template_for(&self, root: usize) -> String {
        if self.multi() {
            format!("{}/{{+path}}", self.uri(root, &RelPath::root()))
        } else {
            format!("{PREFIX}{{+path}}")
        }
    }

    /// Completes a path: the entries of the typed directory whose names start with the
    /// typed rest; directories end with `/`.
    fn complete_path(&self, root: usize, value: &str) -> Completion {
        let (dir_part, prefix) = value.rsplit_once('/').unwrap_or(("", value));
        let Ok(dir) = RelPath::decode(dir_part) else {
            return Completion::empty();
        };
        let Ok(md) = self.stat("", root, &dir) else {
            return Completion::empty();
        };
        if !md.is_dir {
            return Completion::empty();
        }
        // Bounded: at most 10,000 entries are considered.
        let Ok(entries) = walk::next_entries(&self.scope(root), &dir, None, 10_000) else {
            return Completion::empty();
        };
        let values = entries
            .into_iter()
            .filter(|e| e.name.as_bytes().starts_with(prefix.as_bytes()))
            .filter_map(|e| {
                let name = e.name.to_str()?;
                let mut v = if dir_part.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir_part}/{name}")
                };
                if e.kind == Kind::Dir {
                    v.push('/');
                }
                Some(v)
            })
            .collect();
        Completion::from_matches(values)
    }
}

fn position(root: usize, path: &RelPath) -> Vec<u8> {
    let mut v = u16::try_from(root)
        .unwrap_or(u16::MAX)
        .to_be_bytes()
        .to_vec();
    v.extend(path.to_position());
    v
}

impl Tree {
    /// Fills the listing cache ahead of the first listing, up to its budget (run on a
    /// thread of its own when the provider starts).
    fn warm(&self) {
        let budget = self.config.listing_cache_entries;
        let mut warmed = 0;
        for root in 0..self.roots.len() {
            let mut after: Option<RelPath> = None;
            while warmed < budget {
                let Ok((files, more)) = walk::files_after(&self.scope(root), after.as_ref(), 1000)
                else {
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

impl Provider for FsProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        (0..self.tree.roots.len())
            .map(|i| {
                let name = if self.tree.multi() {
                    format!("files of {}", self.tree.roots[i].name)
                } else {
                    "files".to_owned()
                };
                ResourceTemplate::new(self.tree.template_for(i), name)
                    .with_title(format!("Files in {}", self.tree.roots[i].name))
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
        let watching = self.tree.watches();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    fn attach(&self, feed: ChangeFeed) {
        #[cfg(target_os = "linux")]
        if self.tree.watches() {
            watch::start(&self.tree, feed, self.tree.config.watch_window);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = feed;
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        match req.parent {
            None => self.tree.list_files(req.after, req.limit),
            Some(uri) => self.tree.list_children(uri, req.after, req.limit),
        }
    }

    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        self.tree.search_files(&req).map(Some)
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        match self.tree.resolve(uri)? {
            Target::Roots => Ok(self.tree.roots_collection()),
            Target::Path(root, rel) => {
                let md = self.tree.stat(uri, root, &rel)?;
                let mut r = self.tree.resource(root, &rel, &md);
                r.uri = uri.to_owned();
                Ok(r)
            }
        }
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let contents = match self.tree.resolve(uri)? {
            Target::Roots => Vec::new(),
            Target::Path(root, rel) => match self.tree.open(uri, root, &rel)? {
                (Some(file), md) if md.is_file() => {
                    self.tree
                        .document(ctx, uri, (root, &rel), (file, md), true)
                        .await?
                }
                _ => self.tree.collection(ctx, uri, root, &rel).await?,
            },
        };
        Ok(ReadOutput {
            contents,
            cache: self.tree.config.cache,
        })
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let Some(root) = self.tree.template_root(req.template) else {
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
        Ok(self.tree.complete_path(root, req.value))
    }
}
