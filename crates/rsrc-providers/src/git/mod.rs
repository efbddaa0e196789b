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
//! resolution changed: a moved ref (`git:///main`), and each subscribed tree or blob under
//! a ref whose object id (or mode) differs at the new commit — a subscribed file that the
//! new commit did not change hears nothing. A subscribed tree hears of changes anywhere
//! below it.
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
//!   (`gix::ThreadSafeRepository`) and made thread-local per task.

mod names;
mod repo;
mod watch;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::objs::tree::EntryKind;
use rsrc::protocol::{
    Body, CacheHint, CacheScope, Completion, DIRECTORY_MIME_TYPE, Resource, ResourceCapabilities,
    ResourceContents, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError,
};

use crate::fs::read::{mime_for, mime_from_name, text_or_bytes};

/// Blobs from this size on are read only once the server's budget of content in flight
/// has room for them.
const RESERVE_FROM: u64 = 256 * 1024;
use names::{RefName, Target};
use repo::{CommitInfo, GixError, Node, Refs, Resolved};

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
    shared: Arc<Shared>,
}

impl std::fmt::Debug for GitProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitProvider")
            .field("prefix", &self.shared.prefix)
            .field("git_dir", &self.shared.repo.git_dir())
            .finish_non_exhaustive()
    }
}

/// The provider's state, shared with the polling thread.
struct Shared {
    repo: gix::ThreadSafeRepository,
    hash: gix::hash::Kind,
    /// `git:///` or `git://NAME/`.
    prefix: String,
    /// The display name of `git:///`.
    name: String,
    config: GitConfig,
    /// The commits the served refs reach (commit ids outside it are not served).
    reachable: repo::Reachable,
}

/// Whether `name` can be a URI authority naming a repository.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_')
        })
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
        if !valid_name(name) {
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
            shared: Arc::new(Shared {
                repo,
                hash,
                prefix,
                name,
                config,
                reachable: repo::Reachable::default(),
            }),
        })
    }

    /// The prefix to mount this provider at: `git:///` or `git://NAME/`.
    pub fn prefix(&self) -> &str {
        &self.shared.prefix
    }

    /// The template this provider declares: `{prefix}{ref}/{+path}`.
    pub fn template(&self) -> String {
        self.shared.template()
    }

    /// Runs `f` on a blocking thread with a thread-local handle on the repository.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared, &gix::Repository) -> Result<T, ResourceError> + Send + 'static,
    ) -> Result<T, ResourceError> {
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || {
            let repo = shared.repo.to_thread_local();
            f(&shared, &repo)
        })
        .await
        .unwrap_or_else(|e| Err(ResourceError::internal(format!("git task failed: {e}"))))
    }
}

/// A refused URI answers like a missing one; the reason is only logged.
fn refused(uri: &str, reason: &str) -> ResourceError {
    tracing::debug!(%uri, reason, "refused");
    ResourceError::not_found(uri)
}

/// A gix failure: logged, and an internal error (whose details the client never sees).
fn gix_error(uri: &str, e: &GixError) -> ResourceError {
    ResourceError::internal(format!("{uri}: {e}"))
}

/// RFC 3339 (UTC, seconds) for times between 1970 and 9999.
fn rfc3339(seconds: i64) -> Option<String> {
    let secs = u64::try_from(seconds)
        .ok()
        .filter(|&s| s < 253_402_300_800)?;
    let t = UNIX_EPOCH.checked_add(Duration::from_secs(secs))?;
    Some(humantime::format_rfc3339_seconds(t).to_string())
}

/// Where a URI leads in the repository.
enum Located {
    Repo,
    Tree {
        name: RefName,
        at: Resolved,
        path: Vec<BString>,
        tree: ObjectId,
    },
    File {
        name: RefName,
        at: Resolved,
        path: Vec<BString>,
        id: ObjectId,
        kind: EntryKind,
    },
}

impl Shared {
    fn template(&self) -> String {
        format!("{}{{ref}}/{{+path}}", self.prefix)
    }

    fn target(&self, uri: &str) -> Result<Target, ResourceError> {
        let Some(rest) = uri.strip_prefix(self.prefix.as_str()) else {
            return Err(refused(uri, "not under this provider's prefix"));
        };
        names::parse(rest, self.hash).map_err(|reason| refused(uri, &reason))
    }

    fn cache_for(&self, name: Option<&RefName>) -> Option<CacheHint> {
        match name {
            Some(RefName::Id(_)) => self.config.commit_cache.or(self.config.cache),
            _ => self.config.cache,
        }
    }

    fn resolve(
        &self,
        repo: &gix::Repository,
        uri: &str,
        name: &RefName,
    ) -> Result<Resolved, ResourceError> {
        repo::resolve(repo, name, &self.reachable, self.config.max_refs)
            .map_err(|e| gix_error(uri, &e))?
            .ok_or_else(|| refused(uri, "no such ref"))
    }

    fn locate(&self, repo: &gix::Repository, uri: &str) -> Result<Located, ResourceError> {
        let target = self.target(uri)?;
        let Some(name) = target.ref_name() else {
            return Ok(Located::Repo);
        };
        let at = self.resolve(repo, uri, name)?;
        let path = target.path().to_vec();
        let node = repo::walk(repo, at.commit.tree, &path)
            .map_err(|e| gix_error(uri, &e))?
            .ok_or_else(|| refused(uri, "no such path at this ref"))?;
        let name = name.clone();
        Ok(match node {
            Node::Tree(tree) => Located::Tree {
                name,
                at,
                path,
                tree,
            },
            Node::File(id, kind) => Located::File {
                name,
                at,
                path,
                id,
                kind,
            },
        })
    }

    fn git_meta(
        &self,
        commit: &CommitInfo,
        full: Option<&BString>,
        object: Option<(ObjectId, EntryKind)>,
    ) -> rsrc::protocol::Meta {
        let mut git = serde_json::Map::new();
        git.insert("commit".into(), commit.id.to_string().into());
        if let Some(full) = full {
            git.insert("ref".into(), full.to_str_lossy().into_owned().into());
        }
        if let Some((id, kind)) = object {
            git.insert("object".into(), id.to_string().into());
            git.insert("mode".into(), kind.as_octal_str().to_string().into());
        }
        let mut meta = serde_json::Map::new();
        meta.insert(META_KEY.into(), git.into());
        meta
    }

    fn repo_resource(&self) -> Resource {
        Resource::new(self.prefix.clone(), self.name.clone())
            .with_description("A git repository: its branches and tags")
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }

    fn ref_resource(&self, name: &RefName, at: &Resolved, with_meta: bool) -> Resource {
        let display = match name {
            RefName::Id(id) => id.to_string(),
            RefName::Name(n) => n.to_str_lossy().into_owned(),
        };
        let mut r = Resource::new(names::uri(&self.prefix, name, &[]), display)
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection();
        if !at.commit.summary.is_empty() {
            r = r.with_description(at.commit.summary.clone());
        }
        if let Some(t) = rfc3339(at.commit.seconds) {
            r = r.with_last_modified(t);
        }
        if with_meta {
            r = r.with_meta(self.git_meta(&at.commit, at.full.as_ref(), None));
        }
        r
    }

    /// An entry under a ref. `size` is the blob's size for files.
    fn entry_resource(
        &self,
        name: &RefName,
        at: &Resolved,
        path: &[BString],
        node: Node,
        size: Option<u64>,
        with_meta: bool,
    ) -> Resource {
        let file_name = path.last().map(|n| n.to_str_lossy().into_owned());
        let mut r = Resource::new(
            names::uri(&self.prefix, name, path),
            file_name.unwrap_or_default(),
        );
        let object = match node {
            Node::Tree(id) => {
                r = r.with_mime_type(DIRECTORY_MIME_TYPE).collection();
                (id, EntryKind::Tree)
            }
            Node::File(id, kind) => {
                let mime = if kind == EntryKind::Link {
                    Some(SYMLINK_MIME_TYPE.to_owned())
                } else {
                    path.last()
                        .and_then(|n| mime_from_name(OsStr::from_bytes(n)))
                };
                if let Some(m) = mime {
                    r = r.with_mime_type(m);
                }
                if let Some(size) = size {
                    r = r.with_size(size);
                }
                r = r.document();
                (id, kind)
            }
        };
        if let Some(t) = rfc3339(at.commit.seconds) {
            r = r.with_last_modified(t);
        }
        if with_meta {
            r = r.with_meta(self.git_meta(&at.commit, at.full.as_ref(), Some(object)));
        }
        r
    }

    fn metadata(&self, repo: &gix::Repository, uri: &str) -> Result<Resource, ResourceError> {
        let mut r = match self.locate(repo, uri)? {
            Located::Repo => self.repo_resource(),
            Located::Tree {
                name,
                at,
                path,
                tree,
            } => {
                if path.is_empty() {
                    self.ref_resource(&name, &at, true)
                } else {
                    self.entry_resource(&name, &at, &path, Node::Tree(tree), None, true)
                }
            }
            Located::File {
                name,
                at,
                path,
                id,
                kind,
            } => {
                let size = repo::size(repo, id).map_err(|e| gix_error(uri, &e))?;
                self.entry_resource(&name, &at, &path, Node::File(id, kind), Some(size), true)
            }
        };
        r.uri = uri.to_owned();
        Ok(r)
    }

    /// The refs, keyset-paginated on their full names.
    fn list_refs(
        &self,
        repo: &gix::Repository,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        let refs =
            Refs::read(repo, self.config.max_refs).map_err(|e| gix_error(&self.prefix, &e))?;
        let start = match after {
            Some(a) => std::ops::Bound::Excluded(BString::from(a)),
            None => std::ops::Bound::Unbounded,
        };
        let mut resources = Vec::new();
        let mut next = None;
        let mut range = refs
            .map
            .range((start, std::ops::Bound::Unbounded))
            .peekable();
        while let Some((full, id)) = range.next() {
            let Some(short) = refs.short_name(full.as_bstr(), self.hash) else {
                continue;
            };
            let Some(commit) = repo::commit(repo, *id).map_err(|e| gix_error(&self.prefix, &e))?
            else {
                continue;
            };
            let at = Resolved {
                full: Some(full.clone()),
                commit,
            };
            resources.push(self.ref_resource(&RefName::Name(short), &at, false).into());
            if resources.len() >= limit {
                if range.peek().is_some() {
                    next = Some(full.to_vec());
                }
                break;
            }
        }
        Ok(Page {
            resources,
            next,
            cache: self.config.cache,
        })
    }

    fn list_children(
        &self,
        repo: &gix::Repository,
        uri: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        let (name, at, path, tree) = match self.locate(repo, uri)? {
            Located::Repo => return self.list_refs(repo, after, limit),
            Located::File { .. } => return Err(ResourceError::not_a_collection(uri)),
            Located::Tree {
                name,
                at,
                path,
                tree,
            } => (name, at, path, tree),
        };
        let entries = repo::entries(repo, tree).map_err(|e| gix_error(uri, &e))?;
        let start = after.map_or(0, |a| entries.partition_point(|e| e.name.as_slice() <= a));
        let page = &entries[start.min(entries.len())..];
        let mut resources = Vec::with_capacity(limit.min(page.len()));
        let mut child = path;
        for e in page.iter().take(limit) {
            child.push(e.name.clone());
            let size = match e.node {
                Node::File(id, _) => {
                    Some(repo::size(repo, id).map_err(|err| gix_error(uri, &err))?)
                }
                Node::Tree(_) => None,
            };
            resources.push(
                self.entry_resource(&name, &at, &child, e.node, size, false)
                    .into(),
            );
            child.pop();
        }
        let next = (page.len() > limit).then(|| page[limit - 1].name.to_vec());
        Ok(Page {
            resources,
            next,
            cache: self.cache_for(Some(&name)),
        })
    }

    /// Reads `uri`; or, for a blob large enough to count against the server's budget of
    /// content in flight and not `reserved` yet, only its size (`Err`): the caller
    /// reserves that much and asks again.
    fn read(
        &self,
        repo: &gix::Repository,
        uri: &str,
        reserved: bool,
    ) -> Result<Result<ReadOutput, u64>, ResourceError> {
        let located = self.locate(repo, uri)?;
        if let Located::File { id, .. } = &located
            && !reserved
        {
            let size = repo::size(repo, *id).map_err(|e| gix_error(uri, &e))?;
            if (RESERVE_FROM..=self.config.max_blob).contains(&size) {
                return Ok(Err(size));
            }
        }
        let (contents, name) = match located {
            Located::Repo => (Vec::new(), None),
            Located::Tree {
                name,
                at,
                path,
                tree,
            } => (
                self.collection(repo, uri, &name, &at, &path, tree)?,
                Some(name),
            ),
            Located::File {
                name,
                at,
                path,
                id,
                kind,
            } => {
                let doc = self
                    .document(repo, uri, &name, &at, &path, id, kind)?
                    .map_err(|size| {
                        ResourceError::too_large(uri.to_owned(), size, self.config.max_blob)
                    })?;
                (vec![doc], Some(name))
            }
        };
        Ok(Ok(ReadOutput {
            contents,
            cache: self.cache_for(name.as_ref()),
        }))
    }

    /// One blob as a document (`Err(size)` if it is over `max`, or the cap).
    #[allow(clippy::too_many_arguments)]
    fn document(
        &self,
        repo: &gix::Repository,
        uri: &str,
        name: &RefName,
        at: &Resolved,
        path: &[BString],
        id: ObjectId,
        kind: EntryKind,
    ) -> Result<Result<ResourceContents, u64>, ResourceError> {
        let bytes =
            match repo::blob(repo, id, self.config.max_blob).map_err(|e| gix_error(uri, &e))? {
                Ok(bytes) => bytes,
                Err(size) => return Ok(Err(size)),
            };
        let file_name = OsStr::from_bytes(path.last().map_or(&[][..], |n| n.as_slice()));
        let mut meta = self.entry_resource(
            name,
            at,
            path,
            Node::File(id, kind),
            Some(bytes.len() as u64),
            true,
        );
        meta.uri = uri.to_owned();
        let (mime, body) = match text_or_bytes(bytes) {
            Ok(text) => (mime_for(file_name, text.as_bytes(), true), Body::Text(text)),
            Err(bytes) => (mime_for(file_name, &bytes, false), Body::Blob(bytes.into())),
        };
        if kind != EntryKind::Link {
            meta.mime_type = Some(mime);
        }
        Ok(Ok(ResourceContents {
            resource: meta,
            body,
        }))
    }

    /// A tree's child documents with their content, whole blobs only, within the budget:
    /// possibly a subset, never a truncated blob.
    fn collection(
        &self,
        repo: &gix::Repository,
        uri: &str,
        name: &RefName,
        at: &Resolved,
        path: &[BString],
        tree: ObjectId,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let entries = repo::entries(repo, tree).map_err(|e| gix_error(uri, &e))?;
        let budget = self.config.collection_budget;
        let mut out = Vec::new();
        let mut used = 0u64;
        let mut child = path.to_vec();
        for e in entries.iter().take(self.config.collection_max_files) {
            let Node::File(id, kind) = e.node else {
                continue;
            };
            let size = repo::size(repo, id).map_err(|err| gix_error(uri, &err))?;
            if used + size > budget {
                continue;
            }
            child.push(e.name.clone());
            let child_uri = names::uri(&self.prefix, name, &child);
            let doc = self.document(repo, &child_uri, name, at, &child, id, kind)?;
            child.pop();
            if let Ok(doc) = doc {
                let len = doc.body.len() as u64;
                if used + len <= budget {
                    used += len;
                    out.push(doc);
                }
            }
        }
        Ok(out)
    }

    fn complete(
        &self,
        repo: &gix::Repository,
        argument: &str,
        value: &str,
        context_ref: Option<&str>,
    ) -> Result<Completion, ResourceError> {
        match argument {
            "ref" => {
                let refs = Refs::read(repo, self.config.max_refs)
                    .map_err(|e| gix_error(&self.prefix, &e))?;
                let mut values: Vec<String> = refs
                    .map
                    .keys()
                    .filter_map(|full| refs.short_name(full.as_bstr(), self.hash))
                    .filter_map(|short| String::from_utf8(short.into()).ok())
                    .filter(|short| short.starts_with(value))
                    .collect();
                values.sort();
                Ok(Completion::from_matches(values))
            }
            "path" => Ok(self.complete_path(repo, value, context_ref.unwrap_or("HEAD"))),
            other => Err(ResourceError::invalid(
                "",
                format!("the template {} has no variable {other:?}", self.template()),
            )),
        }
    }

    /// Completes a path: the entries of the typed directory at the ref whose names start
    /// with the typed rest; directories end with `/`.
    fn complete_path(&self, repo: &gix::Repository, value: &str, ref_name: &str) -> Completion {
        let Some(name) = names::raw_ref(ref_name, self.hash) else {
            return Completion::empty();
        };
        let Ok(Some(at)) = repo::resolve(repo, &name, &self.reachable, self.config.max_refs) else {
            return Completion::empty();
        };
        let (dir_part, prefix) = value.rsplit_once('/').unwrap_or(("", value));
        let dir = if dir_part.is_empty() {
            Vec::new()
        } else {
            match names::decode_path(dir_part) {
                Ok(d) => d,
                Err(_) => return Completion::empty(),
            }
        };
        let Ok(Some(Node::Tree(tree))) = repo::walk(repo, at.commit.tree, &dir) else {
            return Completion::empty();
        };
        let Ok(entries) = repo::entries(repo, tree) else {
            return Completion::empty();
        };
        let values = entries
            .iter()
            .take(10_000)
            .filter(|e| e.name.starts_with(prefix.as_bytes()))
            .filter_map(|e| {
                let n = e.name.to_str().ok()?;
                let mut v = if dir_part.is_empty() {
                    n.to_owned()
                } else {
                    format!("{dir_part}/{n}")
                };
                if matches!(e.node, Node::Tree(_)) {
                    v.push('/');
                }
                Some(v)
            })
            .collect();
        Completion::from_matches(values)
    }
}

impl Provider for GitProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        let template = ResourceTemplate::new(self.template(), format!("git {}", self.shared.name))
            .with_title(format!("Files of the git repository {}", self.shared.name))
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
        let watching = self.shared.config.poll_interval.is_some();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    fn attach(&self, feed: ChangeFeed) {
        if let Some(interval) = self.shared.config.poll_interval {
            watch::start(&self.shared, &feed, interval);
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
        self.blocking(move |s, repo| match parent {
            None => s.list_refs(repo, after.as_deref(), limit),
            Some(uri) => s.list_children(repo, &uri, after.as_deref(), limit),
        })
        .await
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let uri = uri.to_owned();
        self.blocking(move |s, repo| s.metadata(repo, &uri)).await
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let owned = uri.to_owned();
        let size = match self
            .blocking(move |s, repo| s.read(repo, &owned, false))
            .await?
        {
            Ok(output) => return Ok(output),
            Err(size) => size,
        };
        ctx.reserve(size).await;
        let owned = uri.to_owned();
        match self
            .blocking(move |s, repo| s.read(repo, &owned, true))
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
        if req.template != self.shared.template() {
            return Ok(Completion::empty());
        }
        let argument = req.argument.to_owned();
        let value = req.value.to_owned();
        let context_ref = req.context.get("ref").cloned();
        self.blocking(move |s, repo| s.complete(repo, &argument, &value, context_ref.as_deref()))
            .await
    }
}
