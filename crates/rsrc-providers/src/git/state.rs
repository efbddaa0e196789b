//! What the git provider serves: the repository opened once, its URI prefix, the
//! settings, the commits the served refs reach, and the table of subscribed URIs. The
//! provider (`provider.rs`) holds it; the rules that answer and the watcher take it.
//!
//! Invariant: the repository is opened in isolation (only its own configuration is read),
//! and a gix failure reaches a client as an internal error without its details, or as a
//! cancellation when its request went away.

use std::path::Path;

use rsrc::ResourceError;

use super::config::{GitConfig, GitError};
use super::repo::{self, GixError};
use crate::kit::blocking::cancelled;
use crate::kit::watch::Subscribed;

/// Blobs from this size on are read only once the server's budget of content in flight
/// has room for them.
pub(super) const RESERVE_FROM: u64 = 256 * 1024;

/// The URI prefix of a provider made by [`GitProvider::open`].
pub const PREFIX: &str = "git:///";

/// The MIME type of a symbolic link.
pub const SYMLINK_MIME_TYPE: &str = "inode/symlink";

/// The `_meta` key of the git details on a resource.
pub const META_KEY: &str = "dev.rsrc/git";

/// The most subscribed URIs whose objects are compared per change (`watch.rs`).
pub(super) const MAX_CHECKED: usize = 16 * 1024;

/// The served repository: the repository, its URIs, settings and what answering needs
/// to remember. Shared by the provider, the rules
/// that answer (`list.rs`, `read.rs`, `describe.rs`, `locate.rs`, `complete.rs`) and the
/// change watcher (`watch.rs`).
pub(super) struct ServedRepo {
    pub(super) repo: gix::ThreadSafeRepository,
    pub(super) hash: gix::hash::Kind,
    /// `git:///` or `git://NAME/`.
    pub(super) prefix: String,
    /// The display name of `git:///`.
    pub(super) name: String,
    pub(super) config: GitConfig,
    /// The commits the served refs reach (commit ids outside it are not served).
    pub(super) reachable: repo::Reachable,
    /// Subscribed URIs and the digest of what each resolved to, for the change watcher.
    pub(super) subscribed: Subscribed,
}

impl ServedRepo {
    /// Opens the repository at `path` in isolation, to serve it under `prefix` with
    /// `name` as the display name of its root.
    pub(super) fn open(
        path: &Path,
        prefix: String,
        name: String,
        config: GitConfig,
    ) -> Result<ServedRepo, GitError> {
        let repo = gix::open::Options::isolated()
            .open(path)
            .map_err(|e| GitError::Open(path.to_owned(), e.to_string()))?;
        let hash = repo.to_thread_local().object_hash();
        Ok(ServedRepo {
            repo,
            hash,
            prefix,
            name,
            config,
            reachable: repo::Reachable::default(),
            subscribed: Subscribed::new(MAX_CHECKED),
        })
    }
}

/// A display name for the repository at `path`: its directory's name, without `.git`.
pub(super) fn display_name(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".git").unwrap_or(&name);
    if name.is_empty() {
        "repository".to_owned()
    } else {
        name.to_owned()
    }
}

/// A gix failure: logged, and an internal error (whose details the client never sees);
/// or work stopped because its request went away.
pub(super) fn gix_error(uri: &str, e: &GixError) -> ResourceError {
    if repo::is_stopped(e) {
        return cancelled(uri);
    }
    ResourceError::internal(format!("{uri}: {e}"))
}
