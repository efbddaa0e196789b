//! Reading the repository: a blob as a document (text or a blob, with its type from the
//! name and the content), a tree as its child documents within the collection budget.
//!
//! Invariants:
//! - A blob over [`GitConfig::max_blob`](super::GitConfig::max_blob) is refused before it
//!   is inflated, and one large enough to count against the server's budget of content
//!   in flight is read only once the budget has room (the caller reserves first).
//! - Reading a tree returns whole blobs only: possibly a subset, never a truncated one.

use gix::ObjectId;
use gix::bstr::BString;
use gix::objs::tree::EntryKind;
use rsrc::protocol::{Body, ResourceContents};
use rsrc::{ReadOutput, ResourceError};

use super::locate::Located;
use super::names::{self, RefName};
use super::repo::{self, Node, Resolved};
use super::state::{RESERVE_FROM, ServedRepo, gix_error};
use crate::kit::blocking::Signal;
use crate::kit::content::{mime_for, mime_from_name, text_or_bytes};

impl ServedRepo {
    /// Reads `uri`; or, for a blob large enough to count against the server's budget of
    /// content in flight and not `reserved` yet, only its size (`Err`): the caller
    /// reserves that much and asks again. `stop` is looked at between a tree's blobs.
    pub(super) fn read(
        &self,
        repo: &gix::Repository,
        uri: &str,
        reserved: bool,
        stop: &dyn Signal,
    ) -> Result<Result<ReadOutput, u64>, ResourceError> {
        let located = self.locate(repo, uri, stop)?;
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
                self.collection(repo, uri, (&name, &at, &path, tree), stop)?,
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
        let file_name = path.last().map_or(&[][..], |n| n.as_slice());
        let mut meta = self.entry_resource(
            name,
            at,
            path,
            Node::File(id, kind),
            Some(bytes.len() as u64),
            true,
        );
        meta.uri = uri.to_owned();
        let by_name = mime_from_name(file_name);
        let (mime, body) = match text_or_bytes(bytes) {
            Ok(text) => (mime_for(by_name, text.as_bytes(), true), Body::Text(text)),
            Err(bytes) => (mime_for(by_name, &bytes, false), Body::Blob(bytes.into())),
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
        (name, at, path, tree): (&RefName, &Resolved, &[BString], ObjectId),
        stop: &dyn Signal,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let entries = repo::entries(repo, tree, stop).map_err(|e| gix_error(uri, &e))?;
        let budget = self.config.collection_budget;
        let mut out = Vec::new();
        let mut used = 0u64;
        let mut child = path.to_vec();
        for e in entries.iter().take(self.config.collection_max_files) {
            let Node::File(id, kind) = e.node else {
                continue;
            };
            repo::check(stop).map_err(|err| gix_error(uri, &err))?;
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
}
