//! The repository's resources as the client sees them: the repository, a ref, a tree or
//! blob under a ref, with their git details (`_meta["dev.rsrc/git"]`).
//!
//! Invariant: every URI written here is built by [`names::uri`], so it parses back to the
//! resource it names; a type is given from the name only, never against the content.

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::objs::tree::EntryKind;
use rsrc::ResourceError;
use rsrc::protocol::{DIRECTORY_MIME_TYPE, Resource};

use super::locate::Located;
use super::names::{self, RefName};
use super::repo::{self, CommitInfo, Node, Resolved};
use super::state::{META_KEY, SYMLINK_MIME_TYPE, ServedRepo, gix_error};
use crate::kit::blocking::Signal;
use crate::kit::content::mime_from_name;
use crate::kit::time::rfc3339_seconds;

impl ServedRepo {
    /// `_meta["dev.rsrc/git"]`: the commit, the full ref name, the object and its mode.
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

    /// The repository: the collection of its refs.
    pub(super) fn repo_resource(&self) -> Resource {
        Resource::new(self.prefix.clone(), self.name.clone())
            .with_description("A git repository: its branches and tags")
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }

    /// A ref: the collection of its commit's tree.
    pub(super) fn ref_resource(&self, name: &RefName, at: &Resolved, with_meta: bool) -> Resource {
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
        if let Some(t) = rfc3339_seconds(at.commit.seconds) {
            r = r.with_last_modified(t);
        }
        if with_meta {
            r = r.with_meta(self.git_meta(&at.commit, at.full.as_ref(), None));
        }
        r
    }

    /// An entry under a ref. `size` is the blob's size for files.
    pub(super) fn entry_resource(
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
                    path.last().and_then(|n| mime_from_name(n))
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
        if let Some(t) = rfc3339_seconds(at.commit.seconds) {
            r = r.with_last_modified(t);
        }
        if with_meta {
            r = r.with_meta(self.git_meta(&at.commit, at.full.as_ref(), Some(object)));
        }
        r
    }

    /// The metadata of what `uri` names (`resources/metadata`).
    pub(super) fn metadata(
        &self,
        repo: &gix::Repository,
        uri: &str,
        stop: &dyn Signal,
    ) -> Result<Resource, ResourceError> {
        let mut r = match self.locate(repo, uri, stop)? {
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
}
