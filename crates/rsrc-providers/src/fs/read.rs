//! Reading the served directories: a file as a document (text or a blob, then any
//! converter's format alternative), a directory as its child documents within the
//! collection budget.
//!
//! Invariants:
//! - A file is opened through its root's capability handle, never blocking, checked to be
//!   a regular file on the open handle, and what a followed link resolved to obeys the
//!   visibility rules ([`crate::kit::open`], [`super::visibility`]).
//! - A large file is read on a blocking thread once the server's budget of content in
//!   flight has room for it, and stops between chunks when its request goes away
//!   ([`crate::kit::open::read_file`]).
//! - Reading a directory returns whole files only: possibly a subset, never a truncated
//!   file. The directory is scanned on a blocking thread
//!   ([`off_runtime`](super::state::off_runtime)).

use std::sync::Arc;

use cap_std::fs::Metadata;
use rsrc::protocol::{Body, ResourceContents};
use rsrc::{RequestContext, ResourceError};

use super::entry::{Info, Kind};
use super::scan;
use super::state::{Root, ServedRoots, off_runtime};
use crate::kit::content::{mime_for, text_or_bytes};
use crate::kit::open::{ReadError, io_error, open_checked, open_resolved, read_error, read_file};
use crate::kit::rel_path::RelPath;

impl ServedRoots {
    /// Opens an exposed path: the open handle (none for a root) and its metadata.
    pub(super) fn open(
        &self,
        uri: &str,
        root: usize,
        rel: &RelPath,
    ) -> Result<(Option<cap_std::fs::File>, Metadata), ResourceError> {
        let Root {
            dir, visibility, ..
        } = &*self.roots[root];
        if rel.is_root() {
            return Ok((None, dir.dir_metadata().map_err(|e| io_error(uri, &e))?));
        }
        let (file, md, linked) =
            open_resolved(dir, rel).map_err(|e| self.read_error(uri, root, e))?;
        // Opened without following a link, the path is its own resolution.
        let visible = if linked {
            visibility.resolved_visible(dir, rel, md.is_dir())
        } else {
            visibility.path_visible(dir, rel, md.is_dir())
        };
        if !visible {
            return Err(ResourceError::not_found(uri));
        }
        Ok((Some(file), md))
    }

    fn read_error(&self, uri: &str, root: usize, e: ReadError) -> ResourceError {
        read_error(uri, e, self.roots[root].max_read)
    }

    /// The representations of one open file (with its metadata): itself (text if UTF-8,
    /// else binary), then, if `convert`, any converter's alternative.
    pub(super) async fn document(
        &self,
        ctx: &RequestContext,
        uri: &str,
        (root, rel): (usize, &RelPath),
        (file, md): (cap_std::fs::File, Metadata),
        convert: bool,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        if self.roots[root].visibility.withholds(&md) {
            return Err(ResourceError::not_found(uri));
        }
        let info = Info::from(&md);
        let bytes = read_file(
            ctx,
            file,
            md,
            self.roots[root].max_read,
            self.config.inline_read_limit,
        )
        .await
        .map_err(|e| self.read_error(uri, root, e))?;
        let mut meta = self.resource_at(uri.to_owned(), root, rel, &info);
        meta.size = Some(bytes.len() as u64);
        // A file's resource carries the type its name says, which the content refines.
        let by_name = meta.mime_type.take();
        let (mime, body) = match text_or_bytes(bytes) {
            Ok(text) => (mime_for(by_name, text.as_bytes(), true), Body::Text(text)),
            Err(bytes) => (mime_for(by_name, &bytes, false), Body::Blob(bytes.into())),
        };
        let wanted: Vec<_> = (self.config.converters.iter())
            .filter(|c| convert && c.accepts(&mime))
            .collect();
        meta.mime_type = Some(mime);
        let mut out = vec![ResourceContents {
            resource: meta,
            body,
        }];
        let mut raw = None;
        for c in wanted {
            // Converters see the raw bytes, shared, not copied.
            let raw = raw.get_or_insert_with(|| match &out[0].body {
                Body::Blob(b) => b.clone(),
                Body::Text(t) => t.clone().into_bytes(),
            });
            if let Some(alt) = self.conversions.run(c, raw).await {
                let mut alt_meta = out[0].resource.clone();
                alt_meta.mime_type = Some(alt.mime_type);
                alt_meta.size = Some(alt.text.len() as u64);
                out.push(ResourceContents {
                    resource: alt_meta,
                    body: Body::Text(alt.text.into()),
                });
            }
        }
        Ok(out)
    }

    /// A directory's child documents with their content, whole files only, within the
    /// byte budget: possibly a subset, never a truncated file.
    pub(super) async fn collection(
        self: &Arc<Self>,
        ctx: &RequestContext,
        uri: &str,
        root: usize,
        dir: &RelPath,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let (at, max, at_uri) = (
            dir.clone(),
            self.config.collection_max_files,
            uri.to_owned(),
        );
        let entries = off_runtime(self, move |s, stop| {
            scan::next_entries(&s.scope(root, stop), &at, None, max)
                .map_err(|e| io_error(&at_uri, &e))
        })
        .await?;
        let mut out = Vec::new();
        let mut used = 0u64;
        for e in entries.into_iter().filter(|e| e.kind == Kind::File) {
            if used + e.info.len > self.config.collection_budget {
                continue;
            }
            let path = dir.join(&e.name);
            let child_uri = self.uri(root, &path);
            let Ok((file, md)) = open_checked(&self.roots[root].dir, &path) else {
                continue;
            };
            if let Ok(contents) = self
                .document(ctx, &child_uri, (root, &path), (file, md), false)
                .await
            {
                let size: u64 = contents.iter().map(|c| c.body.len() as u64).sum();
                if used + size <= self.config.collection_budget {
                    used += size;
                    out.extend(contents);
                }
            }
        }
        Ok(out)
    }
}
