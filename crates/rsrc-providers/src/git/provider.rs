//! The git provider itself: [`GitProvider`], the handle an `rsrc::Server` mounts, and
//! its `rsrc::Provider` face. Invariant: it only calls down — every operation runs the
//! rule that answers it on the served repository (`state.rs`), on a blocking thread with
//! a thread-local handle and a stop signal.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rsrc::protocol::{Completion, Resource, ResourceCapabilities, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError,
};

use super::config::{GitConfig, GitError};
use super::repo::Refs;
use super::state::{PREFIX, ServedRepo, display_name};
use super::watch;
use crate::kit::blocking::{self, Stop};
use crate::kit::source_name::is_host_name;
use crate::kit::watch::{DigestWatched, Subscribed};

/// A git repository served as resources. Mount it at its [`GitProvider::prefix`]:
///
/// ```no_run
/// use rsrc_providers::git::{GitConfig, GitProvider};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let git = GitProvider::open("path/to/repo", GitConfig::default())?;
/// let server = rsrc::Server::builder("rsrc", "0.1.0")
///     .mount(git.prefix().to_owned(), git)
///     .build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
pub struct GitProvider {
    pub(super) served: Arc<ServedRepo>,
}

impl std::fmt::Debug for GitProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitProvider")
            .field("prefix", &self.served.prefix)
            .field("git_dir", &self.served.repo.git_dir())
            .finish_non_exhaustive()
    }
}

impl GitProvider {
    /// Serves the repository at `path` (a work tree or a bare repository) at `git:///`.
    ///
    /// The repository is opened in isolation: only its own configuration is read, not the
    /// user's, the system's or the environment's.
    pub fn open(path: impl Into<PathBuf>, config: GitConfig) -> Result<GitProvider, GitError> {
        let path = path.into();
        let name = display_name(&path);
        GitProvider::build(&path, PREFIX.to_owned(), name, config)
    }

    /// Serves the repository at `path` at `git://NAME/`, to mount several repositories on
    /// one server. `name` is lowercase letters, digits, `-`, `.` and `_`.
    pub fn open_named(
        name: &str,
        path: impl Into<PathBuf>,
        config: GitConfig,
    ) -> Result<GitProvider, GitError> {
        if !is_host_name(name) {
            return Err(GitError::BadName(name.to_owned()));
        }
        GitProvider::build(
            &path.into(),
            format!("git://{name}/"),
            name.to_owned(),
            config,
        )
    }

    fn build(
        path: &Path,
        prefix: String,
        name: String,
        config: GitConfig,
    ) -> Result<GitProvider, GitError> {
        let served = ServedRepo::open(path, prefix, name, config)?;
        Ok(GitProvider {
            served: Arc::new(served),
        })
    }

    /// The prefix to mount this provider at: `git:///` or `git://NAME/`.
    pub fn prefix(&self) -> &str {
        &self.served.prefix
    }

    /// The template this provider declares: `{prefix}{ref}/{+path}`.
    pub fn template(&self) -> String {
        self.served.template()
    }

    /// Runs `f` on a blocking thread with a thread-local handle on the repository and a
    /// stop signal, set once the returned future is dropped: the walks `f` runs under it
    /// give up at their next ref, commit or entry ([`crate::kit::blocking`]).
    async fn with_repo<T: Send + 'static>(
        &self,
        f: impl FnOnce(&ServedRepo, &gix::Repository, &Stop) -> Result<T, ResourceError>
        + Send
        + 'static,
    ) -> Result<T, ResourceError> {
        let served = Arc::clone(&self.served);
        blocking::stoppable(move |stop| {
            let repo = served.repo.to_thread_local();
            f(&served, &repo, stop)
        })
        .await
    }
}

impl DigestWatched for GitProvider {
    fn watches(&self) -> bool {
        self.served.config.poll_interval.is_some()
    }

    fn tables(&self) -> impl Iterator<Item = &Subscribed> {
        std::iter::once(&self.served.subscribed)
    }
}

impl Provider for GitProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        let template = ResourceTemplate::new(self.template(), format!("git {}", self.served.name))
            .with_title(format!("Files of the git repository {}", self.served.name))
            .with_description(
                "A tree or a file at a branch, a tag or a commit id ({ref} is one segment: \
                 feature/x is feature%2Fx), by its path in the repository",
            )
            .with_capabilities(ResourceCapabilities {
                list: Some(true),
                subscribe: None,
            });
        vec![template]
    }

    fn capabilities(&self) -> ProviderCapabilities {
        self.watched_capabilities()
    }

    /// Its watcher digests subscribed resources only ([`DigestWatched`]).
    fn hears_every_change(&self) -> bool {
        self.hears_unsubscribed_changes()
    }

    fn armed(&self) -> bool {
        self.watchers_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        if let Some(interval) = self.served.config.poll_interval {
            watch::start(&self.served, &feed, interval);
        }
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let parent = req.parent.map(str::to_owned);
        let after = req.after.map(<[u8]>::to_vec);
        let limit = req.limit.max(1);
        let filter = req.filter.cloned();
        self.with_repo(move |s, repo, stop| {
            let paging = (after.as_deref(), limit, filter.as_ref());
            match parent {
                None => s.list_refs(repo, paging, stop),
                Some(uri) => s.list_children(repo, &uri, paging, stop),
            }
        })
        .await
    }

    /// Checks that `uri` exists (as the default does) and remembers what it resolves to
    /// now, so that the change watcher tells its subscribers exactly when that changes.
    async fn subscribe(&self, _ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.served.subscribed.watching().await;
        let uri = uri.to_owned();
        self.with_repo(move |s, repo, stop| {
            s.metadata(repo, &uri, stop)?;
            if let Ok(refs) = Refs::read(repo, s.config.max_refs, stop)
                && let Some(digest) = s.digest_at(repo, &refs, &uri)
            {
                s.subscribed.remember(&uri, digest);
            }
            Ok(())
        })
        .await
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let uri = uri.to_owned();
        self.with_repo(move |s, repo, stop| s.metadata(repo, &uri, stop))
            .await
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let owned = uri.to_owned();
        let size = match self
            .with_repo(move |s, repo, stop| s.read(repo, &owned, false, stop))
            .await?
        {
            Ok(output) => return Ok(output),
            Err(size) => size,
        };
        ctx.reserve(size).await;
        let owned = uri.to_owned();
        match self
            .with_repo(move |s, repo, stop| s.read(repo, &owned, true, stop))
            .await?
        {
            Ok(output) => Ok(output),
            // A reserved read always reads.
            Err(_) => Err(ResourceError::internal(format!("{uri}: not read"))),
        }
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        if req.template != self.served.template() {
            return Ok(Completion::empty());
        }
        let argument = req.argument.to_owned();
        let value = req.value.to_owned();
        let context_ref = req.context.get("ref").cloned();
        self.with_repo(move |s, repo, stop| {
            s.complete(repo, &argument, &value, context_ref.as_deref(), stop)
        })
        .await
    }
}
