//! Listing the repository: its refs, and the entries of a tree, each keyset-paginated
//! ([`rsrc::keyset`]) on a name — a ref's full name, an entry's name in bytewise order.
//!
//! Invariant: a page holds each ref or entry once, in order, while refs move and come and
//! go between pages.

use gix::bstr::{BStr, ByteSlice};
use rsrc::{Page, ResourceError, keyset};

use super::locate::Located;
use super::names::RefName;
use super::repo::{self, Node, Refs, Resolved};
use super::{ServedRepo, gix_error};

impl ServedRepo {
    /// The refs, keyset-paginated on their full names.
    pub(super) fn list_refs(
        &self,
        repo: &gix::Repository,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        let refs =
            Refs::read(repo, self.config.max_refs).map_err(|e| gix_error(&self.prefix, &e))?;
        // The served refs after the position: those with a name to list that end at a
        // commit.
        let served = refs
            .map
            .range::<BStr, _>(keyset::range(after.map(BStr::new)))
            .filter_map(|(full, id)| {
                let short = refs.short_name(full.as_bstr(), self.hash)?;
                match repo::commit(repo, *id) {
                    Ok(Some(commit)) => Some(Ok((full, short, commit))),
                    Ok(None) => None,
                    Err(e) => Some(Err(gix_error(&self.prefix, &e))),
                }
            });
        let page = keyset::try_page(served, limit, |(full, _, _)| full.to_vec())?;
        let resources = page
            .items
            .into_iter()
            .map(|(full, short, commit)| {
                let at = Resolved {
                    full: Some(full.clone()),
                    commit,
                };
                self.ref_resource(&RefName::Name(short), &at, false).into()
            })
            .collect();
        Ok(Page {
            resources,
            next: page.next,
            cache: self.config.cache,
        })
    }

    /// The children of a ref or tree (the refs for the repository), keyset-paginated on
    /// their names in bytewise order.
    pub(super) fn list_children(
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
        let rest = keyset::after(&entries, after, |e| e.name.as_slice());
        let page = keyset::page(rest, limit, |e| e.name.to_vec());
        let mut resources = Vec::with_capacity(page.items.len());
        let mut child = path;
        for e in &page.items {
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
        Ok(Page {
            resources,
            next: page.next,
            cache: self.cache_for(Some(&name)),
        })
    }
}
