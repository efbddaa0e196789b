//! The git provider's settings ([`GitConfig`]) and why a provider could not be built
//! ([`GitError`]). Invariant: plain values with their defaults, read when the provider
//! is built; nothing here opens the repository.

use std::path::PathBuf;
use std::time::Duration;

use rsrc::protocol::{CacheHint, CacheScope};

/// Settings of the git provider.
#[derive(Clone, Debug)]
pub struct GitConfig {
    /// How often the references are read to notice a ref moving, created or deleted
    /// (default 500 ms); `None` turns change notifications off (and the server then
    /// declares neither `subscribe` nor `listChanged` for this provider).
    pub poll_interval: Option<Duration>,
    /// Largest blob read, in bytes (default 32 MiB).
    pub max_blob: u64,
    /// Most bytes of child content returned when a tree is read (default 1 MiB).
    pub collection_budget: u64,
    /// Most children examined when a tree is read (default 256).
    pub collection_max_files: usize,
    /// Most references listed, completed and watched (default 65,536): `HEAD`, then the
    /// branches, then the tags, by name. A reference past the cap can still be read by
    /// its name.
    pub max_refs: usize,
    /// Caching hint for 2026-07-28 clients (default: the server's).
    pub cache: Option<CacheHint>,
    /// Caching hint for resources under a commit id, which never change (default: one
    /// hour, private).
    pub commit_cache: Option<CacheHint>,
}

impl Default for GitConfig {
    fn default() -> Self {
        GitConfig {
            poll_interval: Some(Duration::from_millis(500)),
            max_blob: 32 * 1024 * 1024,
            collection_budget: 1024 * 1024,
            collection_max_files: 256,
            max_refs: 64 * 1024,
            cache: None,
            commit_cache: Some(CacheHint::new(60 * 60 * 1000, CacheScope::Private)),
        }
    }
}

/// Why a git provider could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum GitError {
    /// The path is not a git repository (or could not be opened).
    Open(PathBuf, String),
    /// A repository name is empty, too long, or not lowercase letters, digits, `-`, `.`,
    /// `_`.
    BadName(String),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::Open(p, e) => {
                write!(f, "cannot open the git repository {}: {e}", p.display())
            }
            GitError::BadName(n) => write!(
                f,
                "invalid repository name {n:?} (lowercase letters, digits, '-', '.', '_')"
            ),
        }
    }
}

impl std::error::Error for GitError {}
