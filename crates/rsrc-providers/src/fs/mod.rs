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
//!   a blocking thread (`state::off_runtime`): a directory may hold any number of entries, and the
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
//! This file is a facade. `provider.rs` is the provider, the handle that calls down;
//! `state.rs` what it serves (the roots, the caches, the settings) and how a URI
//! resolves to a path in one root; `config.rs` the settings. The rules take the state:
//! `list.rs` the listings and search, `read.rs` reading files and directories,
//! `complete.rs` completion, `watch.rs` change notifications (Linux). Beneath them,
//! `walk.rs` the sorted, resumable walks of a tree, over `scan.rs` (one directory's next
//! entries) and `cache.rs` (the listing cache, with `fresh.rs`: when the watcher's word
//! stands for a stamp), which share `entry.rs` (what a listing knows of an entry);
//! `kept.rs` the recursive listing's pages kept with the listings they were walked from;
//! `ahead.rs` the walk ahead of the next page, `prefetch.rs` the scans of the next
//! directories ahead of a walk through a cold tree (on other cores), `visibility.rs`
//! what a root exposes at all (hidden files, ignore files, globs — not SEP-2564's
//! filter, which narrows a listing),
//! `convert.rs` format conversions. Opening and reading one file safely, work on blocking
//! threads, paths and URI segments, and content types are shared with other providers
//! (`crate::kit`).

mod ahead;
mod cache;
mod complete;
mod config;
mod convert;
mod entry;
mod error;
mod fresh;
#[cfg(all(test, target_os = "linux"))]
mod freshness;
mod kept;
mod list;
mod prefetch;
mod provider;
mod read;
#[cfg(test)]
mod relisting;
mod scan;
#[cfg(test)]
mod scanning_ahead;
mod state;
#[cfg(test)]
mod stopping;
#[cfg(test)]
mod test_tree;
mod visibility;
mod walk;
#[cfg(target_os = "linux")]
mod watch;

pub use config::{FsConfig, FsRoot, default_root_name};
#[cfg(feature = "pdf")]
pub use convert::PdfText;
pub use convert::{Converted, Converter, Isolation, Worker, convert_worker, default_converters};
pub use error::FsError;
pub use fresh::{FreshnessFallback, ListingFreshness, ListingTrust};
pub use provider::FsProvider;
pub use state::{PREFIX, root_uri};
pub use visibility::VisibilityConfig;
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub use visibility::fuzz_ignore_file;
