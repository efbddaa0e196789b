//! Listing the repository: its refs, and the entries of a tree, each keyset-paginated
//! ([`rsrc::keyset`]) on a name — a ref's full name, an entry's name in bytewise order.
//!
//! Invariant: a page holds each ref or entry once, in order, while refs move and come and
//! go between pages. Under a filter (SEP-2564) a ref or entry is matched by the name and
//! URI it is listed under before anything else is looked up for it (a ref's commit, a
//! blob's size), and a page examines at most [`Filter::scan`] of them.

use gix::bstr::{BStr, BString, ByteSlice};
use rsrc::{Filter, Page, ResourceError, keyset};

use super::locate::Located;
use super::names::{self, RefName};
use super::repo::{self, CommitInfo, Node, Refs, Resolved};
use super::state::{ServedRepo, gix_error};
use crate::kit::blocking::Signal;

/// A served ref: its full name, the short name it is listed under, and what it points at.
type NamedRef<'r, T> = (&'r BString, BString, T);

impl ServedRepo {
    /// A ref with the commit it ends at; `None` when it ends at none.
    /// `stop` is looked at first.
    fn commit_of<'r>(
        &self,
        repo: &gix::Repository,
        (full, short, id): NamedRef<'r, &gix::ObjectId>,
        stop: &dyn Signal,
    ) -> Option<Result<NamedRef<'r, CommitInfo>, ResourceError>> {
        if let Err(e) = repo::check(stop) {
            return Some(Err(gix_error(&self.prefix, &e)));
        }
        match repo::commit(repo, *id) {
            Ok(Some(commit)) => Some(Ok((full, short, commit))),
            Ok(None) => None,
            Err(e) => Some(Err(gix_error(&self.prefix, &e))),
        }
    }

    /// The refs matching `filter`, keyset-paginated on their full names; `stop` is looked
    /// at before each ref.
    pub(super) fn list_refs(
        &self,
        repo: &gix::Repository,
        (after, limit, filter): (Option<&[u8]>, usize, Option<&Filter>),
        stop: &dyn Signal,
    ) -> Result<Page, ResourceError> {
        let refs = Refs::read(repo, self.config.max_refs, stop)
            .map_err(|e| gix_error(&self.prefix, &e))?;
        // The refs after the position with a name to list.
        let named = refs
            .map
            .range::<BStr, _>(keyset::range(after.map(BStr::new)))
            .filter_map(|(full, id)| Some((full, refs.short_name(full.as_bstr(), self.hash)?, id)));
        let page = match filter {
            None => keyset::try_page(
                named.filter_map(|r| self.commit_of(repo, r, stop)),
                limit,
                |(full, _, _)| full.to_vec(),
            )?,
            Some(_) => {
                // Names first; the page's commits then (a ref that ends at none drops out
                // of a page that is then short).
                let page = rsrc::filter::page(
                    filter,
                    named,
                    limit,
                    |f, (_, short, _)| {
                        let name = RefName::Name(short.clone());
                        f.matches(&short.to_str_lossy(), &names::uri(&self.prefix, &name, &[]))
                    },
                    |(full, _, _)| full.to_vec(),
                );
                keyset::Paged {
                    items: page
                        .items
                        .into_iter()
                        .filter_map(|r| self.commit_of(repo, r, stop))
                        .collect::<Result<_, _>>()?,
                    next: page.next,
                }
            }
        };
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

    /// The children of a ref or tree (the refs for the repository) matching `filter`,
    /// keyset-paginated on their names in bytewise order; `stop` is looked at before each
    /// entry.
    pub(super) fn list_children(
        &self,
        repo: &gix::Repository,
        uri: &str,
        (after, limit, filter): (Option<&[u8]>, usize, Option<&Filter>),
        stop: &dyn Signal,
    ) -> Result<Page, ResourceError> {
        let (name, at, path, tree) = match self.locate(repo, uri, stop)? {
            Located::Repo => return self.list_refs(repo, (after, limit, filter), stop),
            Located::File { .. } => return Err(ResourceError::not_a_collection(uri)),
            Located::Tree {
                name,
                at,
                path,
                tree,
            } => (name, at, path, tree),
        };
        let entries = repo::entries(repo, tree, stop).map_err(|e| gix_error(uri, &e))?;
        let rest = keyset::after(&entries, after, |e| e.name.as_slice());
        let mut child = path;
        let page = rsrc::filter::page(
            filter,
            rest,
            limit,
            |f, e| {
                f.matches_name(&e.name.to_str_lossy())
                    && (!f.filters_uris() || {
                        child.push(e.name.clone());
                        let matched = f.matches_uri(&names::uri(&self.prefix, &name, &child));
                        child.pop();
                        matched
                    })
            },
            |e| e.name.to_vec(),
        );
        let mut resources = Vec::with_capacity(page.items.len());
        for e in &page.items {
            repo::check(stop).map_err(|err| gix_error(uri, &err))?;
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
