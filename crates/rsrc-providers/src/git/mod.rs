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
//!
//! # Layout
//!
//! This file is a facade. `provider.rs` is the provider, the handle that calls down;
//! `state.rs` the served repository; `config.rs` the settings and the build error. The
//! rules take the served repository: `list.rs` listings, `read.rs` reads, `describe.rs`
//! the resources and their metadata, `locate.rs` what a URI names, `complete.rs`
//! completion, `watch.rs` change notifications; beneath them `repo.rs` (gix work, bounded
//! and stoppable) and `names.rs` (ref names and URIs).

mod complete;
mod config;
mod describe;
mod list;
mod locate;
mod names;
mod provider;
mod read;
mod repo;
mod state;
#[cfg(test)]
mod stopping;
mod watch;

pub use config::{GitConfig, GitError};
pub use provider::GitProvider;
pub use state::{META_KEY, PREFIX, SYMLINK_MIME_TYPE};
