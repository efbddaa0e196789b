//! The filesystem provider's settings: [`FsConfig`] for the provider, [`FsRoot`] for one
//! served directory. Invariant: plain values with their defaults, read once when the
//! provider is built (`state.rs`); nothing here opens a file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rsrc::protocol::CacheHint;

use super::convert::{Converter, Isolation, default_converters};
use super::fresh::ListingFreshness;
use super::visibility::VisibilityConfig;

/// Settings of the filesystem provider.
#[derive(Clone)]
pub struct FsConfig {
    /// What is exposed: hidden files, ignore files, globs, withheld files.
    pub visibility: VisibilityConfig,
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
    /// ones. The thread scans directories and encodes their entries as the recursive
    /// listing shows them, and stops at the cache's budget; the recursive listing waits
    /// for it while it runs. Off by default: a cached
    /// directory serves only for `listing_cache_ttl`, so the warmed entries help a listing
    /// in the first seconds only, and they cost memory from the start until replaced
    /// (4.7 MiB on the benchmark's tree of 10,000 files).
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
            .field("visibility", &self.visibility)
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
            visibility: VisibilityConfig::standard(),
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
    /// What is exposed (default: [`FsConfig::visibility`]).
    pub visibility: Option<VisibilityConfig>,
    /// Largest file read, in bytes (default: [`FsConfig::max_read`]).
    pub max_read: Option<u64>,
}

impl FsRoot {
    /// `path` under `name`, with the provider's settings.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> FsRoot {
        FsRoot {
            name: name.into(),
            path: path.into(),
            visibility: None,
            max_read: None,
        }
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
