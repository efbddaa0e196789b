//! The git provider: one repository (a work tree or a bare repository) served read-only as
//! `git:` resources, through gix — never the git command.
//!
//! # URIs
//!
//! | URI | what | kind |
//! |---|---|---|
//! | `git:///` | the repository; its children are the refs | collection |
//! | `git:///{ref}` | the tree of the ref's commit | collection |
//! | `git:///{ref}/dir` | a tree at that commit | collection |
//! | `git:///{ref}/dir/file.rs` | a blob at that commit | document |
//!
//! The template `git:///{ref}/{+path}` is declared, with completion of both variables.
//!
//! **Refs.** `{ref}` is ONE percent-encoded segment: RFC 6570 simple expansion encodes `/`,
//! so the branch `feature/x` is `git:///feature%2Fx`. The served references are `HEAD`,
//! the branches (`refs/heads/`) and the tags (`refs/tags/`); remote-tracking branches,
//! notes and other namespaces are not served. A name is looked up as `git rev-parse`
//! would, restricted to those: the name itself if it is `HEAD` or a full name
//! (`refs/heads/main`), then `refs/<name>` (so `heads/main` and `tags/v1` always name one
//! of them), then `refs/tags/<name>`, then `refs/heads/<name>` — a tag shadows a branch of
//! the same name, as in git. Listings name each ref by the shortest name that resolves back
//! to it (`main`, or `heads/main` when a tag `main` exists). A full lowercase hexadecimal
//! commit id is accepted as a ref too (`git:///3f2a…/README.md`): any commit in the object
//! database, as git servers do, even one no served ref reaches. What it names never
//! changes, so its reads carry [`GitConfig::commit_cache`]. A reference whose name has a
//! component starting with `-` or `.` is never served. Annotated tags are peeled to their
//! commit; a ref that does not end at a commit (a tag of a tree or a blob, a dangling
//! branch, an unborn `HEAD`) is not served.
//!
//! **Several repositories.** One provider serves one repository. [`GitProvider::open`]
//! serves it at `git:///`; [`GitProvider::open_named`] at `git://NAME/` (the name as the
//! URI's authority), so several repositories mount side by side, each at its
//! [`GitProvider::prefix`] (a provider parses only URIs under its own prefix), with
//! templates `git://NAME/{ref}/{+path}`.
//!
//! **Entries.** Tree entries are listed bytewise by name (not in git's tree order, where a
//! directory sorts as if its name ended with `/`); the keyset position of a page is the
//! last name. Symbolic links (mode `120000`) are documents of type `inode/symlink` whose
//! content is the link's target as git stores it; they are not followed. Submodules (commit
//! entries) are left out: their content lives in another repository. Names that cannot be
//! a URI segment (empty, `.`, `..`, holding `/` or NUL — only a malformed tree has them) are
//! left out too.
//!
//! **Metadata.** `lastModified` is the committer time of the ref's commit, for the ref and
//! for everything under it: cheap and honest, but not the last commit that changed the
//! file. Reads and `resources/metadata` carry `_meta["dev.rsrc/git"]` with the commit id,
//! the object id and mode, and the full reference name. Content is text when it is UTF-8
//! without NUL and without a binary format's magic number, else a base64 blob, with the
//! MIME type from the name and the content — the filesystem provider's rules. Blobs over
//! [`GitConfig::max_blob`] are refused (`TooLarge`) before they are inflated.
//!
//! **Listing.** `resources/list` without a URI lists the refs (the same page as `git:///`):
//! a repository's files exist once per commit, so a recursive listing of everything would
//! be unbounded; list a ref or a tree for its entries. Reading a tree returns its child
//! documents' contents, whole blobs only, within [`GitConfig::collection_budget`].
//!
//! **Changes.** A thread polls the references (loose and packed) every
//! [`GitConfig::poll_interval`]. When the set of refs changes it publishes `list_changed`;
//! when anything changed, `updated` for `git:///` and for every subscribed URI whose
//! resolution changed since it was subscribed to or last updated: a moved ref
//! (`git:///main`), and each subscribed tree or blob under a ref whose object id (or mode)
//! differs at the new commit — a subscribed file that the new commit did not change hears
//! nothing. A subscribed tree hears of changes anywhere below it.
//!
//! Invariants:
//! - Nothing outside the repository is read because of a URI: ref names are validated
//!   (`gix_validate`, no `-`/`.`-led components) and only looked up among `HEAD`,
//!   `refs/heads/` and `refs/tags/`; paths are decoded once per segment, `.`/`..`/empty/NUL
//!   refused, and looked up by walking tree entries — there is no filesystem access by
//!   path at all. Every refusal answers exactly like a missing resource.
//! - No ref name ever reaches a revision parser or a command line: no `HEAD~1`, `main^`,
//!   `main:path`, `@{-1}`, no options.
//! - All gix work runs on blocking threads; the repository is opened once
//!   (`gix::ThreadSafeRepository`) and made thread-local per task. Work whose request
//!   goes away stops at its next ref, commit or tree entry ([`crate::kit::blocking`]).

mod complete;
mod describe;
mod list;
mod locate;
mod names;
mod read;
mod repo;
#[cfg(test)]
mod stopping;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rsrc::protocol::{
    CacheHint, CacheScope, Completion, Resource, ResourceCapabilities, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError,
};

use crate::kit::blocking::{self, Stop, cancelled};
use crate::kit::source_name::is_host_name;
use crate::kit::watch::Subscribed;
use repo::{GixError, Refs};

/// Blobs from this size on are read only once the server's budget of content in flight
/// has room for them.
const RESERVE_FROM: u64 = 256 * 1024;

/// The URI prefix of a provider made by [`GitProvider::open`].
pub const PREFIX: &str = "git:///";

/// The MIME type of a symbolic link.
pub const SYMLINK_MIME_TYPE: &str = "inode/symlink";

/// The `_meta` key of the git details on a resource.
pub const META_KEY: &str = "dev.rsrc/git";

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
    served: Arc<ServedRepo>,
}

impl std::fmt::Debug for GitProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitProvider")
            .field("prefix", &self.served.prefix)
            .field("git_dir", &self.served.repo.git_dir())
            .finish_non_exhaustive()
    }
}

/// The served repository: the repository, its URIs, settings and what answering needs
/// to remember. Shared by the provider and its change watcher.
struct ServedRepo {
    repo: gix::ThreadSafeRepository,
    hash: gix::hash::Kind,
    /// `git:///` or `git://NAME/`.
    prefix: String,
    /// The display name of `git:///`.
    name: String,
    config: GitConfig,
    /// The commits the served refs reach (commit ids outside it are not served).
    reachable: repo::Reachable,
    /// Subscribed URIs and the digest of what each resolved to, for the change watcher.
    subscribed: Subscribed,
}

/// A display name for the repository at `path`: its directory's name, without `.git`.
fn display_name(path: &Path) -> String {
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
        let repo = gix::open::Options::isolated()
            .open(path)
            .map_err(|e| GitError::Open(path.to_owned(), e.to_string()))?;
        let hash = repo.to_thread_local().object_hash();
        Ok(GitProvider {
            served: Arc::new(ServedRepo {
                repo,
                hash,
                prefix,
                name,
                config,
                reachable: repo::Reachable::default(),
                subscribed: Subscribed::new(watch::MAX_CHECKED),
            }),
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

/// A gix failure: logged, and an internal error (whose details the client never sees);
/// or work stopped because its request went away.
fn gix_error(uri: &str, e: &GixError) -> ResourceError {
    if repo::is_stopped(e) {
        return cancelled(uri);
    }
    ResourceError::internal(format!("{uri}: {e}"))
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
        let watching = self.served.config.poll_interval.is_some();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    /// Its watcher digests subscribed resources only (`kit/watch.rs`): a change to one
    /// not yet subscribed is never published.
    fn hears_every_change(&self) -> bool {
        !self.capabilities().subscribe
    }

    fn armed(&self) -> bool {
        self.served.subscribed.is_armed()
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
