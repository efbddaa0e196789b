//! Where a URI leads in the repository: its ref, resolved now among the served refs, and
//! the tree or blob at its path.
//!
//! Invariant: a URI that names nothing served (not under the provider's prefix, a ref
//! that is not served or does not resolve, a path that is not there) is refused exactly
//! like a missing resource.

use gix::ObjectId;
use gix::bstr::BString;
use gix::objs::tree::EntryKind;
use rsrc::ResourceError;
use rsrc::protocol::CacheHint;

use super::names::{self, RefName, Target};
use super::repo::{self, Node, Resolved};
use super::state::{ServedRepo, gix_error};
use crate::kit::blocking::Signal;
use crate::kit::refusal::refused;

/// Where a URI leads in the repository.
pub(super) enum Located {
    /// The repository: the collection of refs.
    Repo,
    /// A tree: a ref's own (`path` empty) or one below it.
    Tree {
        name: RefName,
        at: Resolved,
        path: Vec<BString>,
        tree: ObjectId,
    },
    /// A blob or a symbolic link below a ref.
    File {
        name: RefName,
        at: Resolved,
        path: Vec<BString>,
        id: ObjectId,
        kind: EntryKind,
    },
}

impl ServedRepo {
    /// The template the provider declares: `{prefix}{ref}/{+path}`.
    pub(super) fn template(&self) -> String {
        format!("{}{{ref}}/{{+path}}", self.prefix)
    }

    /// What `uri` names, or a refusal.
    fn target(&self, uri: &str) -> Result<Target, ResourceError> {
        let Some(rest) = uri.strip_prefix(self.prefix.as_str()) else {
            return Err(refused(uri, "not under this provider's prefix"));
        };
        names::parse(rest, self.hash).map_err(|reason| refused(uri, &reason))
    }

    /// The caching hint of what lives under `name`: what a commit id names never changes.
    pub(super) fn cache_for(&self, name: Option<&RefName>) -> Option<CacheHint> {
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
        stop: &dyn Signal,
    ) -> Result<Resolved, ResourceError> {
        repo::resolve(repo, name, &self.reachable, self.config.max_refs, stop)
            .map_err(|e| gix_error(uri, &e))?
            .ok_or_else(|| refused(uri, "no such ref"))
    }

    /// Where `uri` leads now: its ref resolved, and the tree or blob at its path. `stop`
    /// is looked at while the ref is resolved (a commit id walks the history once).
    pub(super) fn locate(
        &self,
        repo: &gix::Repository,
        uri: &str,
        stop: &dyn Signal,
    ) -> Result<Located, ResourceError> {
        let target = self.target(uri)?;
        let Some(name) = target.ref_name() else {
            return Ok(Located::Repo);
        };
        let at = self.resolve(repo, uri, name, stop)?;
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
}
