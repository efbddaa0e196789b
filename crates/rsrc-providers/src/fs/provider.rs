//! The filesystem provider itself: [`FsProvider`], the handle an `rsrc::Server` mounts,
//! and its `rsrc::Provider` face. Invariant: it only calls down — each operation hands
//! the served state (`state.rs`) to the rule that does the work (`list.rs`, `read.rs`,
//! `complete.rs`, `watch.rs`), on a blocking thread where it scans a directory.

use std::path::PathBuf;
use std::sync::Arc;

use rsrc::protocol::{Completion, Resource, ResourceCapabilities, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError, SearchRequest,
};

use super::config::{FsConfig, FsRoot, default_root_name};
use super::error::FsError;
use super::fresh::ListingTrust;
use super::state::{ServedRoots, Target, off_runtime};
#[cfg(target_os = "linux")]
use super::watch;

/// Directories served as resources.
pub struct FsProvider {
    pub(super) served: Arc<ServedRoots>,
}

impl std::fmt::Debug for FsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsProvider")
            .field(
                "roots",
                &self
                    .served
                    .roots
                    .iter()
                    .map(|r| &r.name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl FsProvider {
    /// Serves `roots` (name, directory). With one root the name is used only as the
    /// root collection's display name.
    pub fn new(roots: Vec<(String, PathBuf)>, config: FsConfig) -> Result<FsProvider, FsError> {
        let roots = roots
            .into_iter()
            .map(|(name, path)| FsRoot::new(name, path))
            .collect();
        FsProvider::with_roots(roots, config)
    }

    /// Serves `roots`, each with its own visibility rules and read limit where it sets
    /// them.
    pub fn with_roots(roots: Vec<FsRoot>, config: FsConfig) -> Result<FsProvider, FsError> {
        ServedRoots::serve(roots, config).map(|served| FsProvider { served })
    }

    /// Serves one directory.
    pub fn single(path: impl Into<PathBuf>, config: FsConfig) -> Result<FsProvider, FsError> {
        let path = path.into();
        FsProvider::new(vec![(default_root_name(&path), path)], config)
    }

    /// What its listings rest on: whether the watcher vouches for them now, and how often
    /// they fell back to stamps (see [`ListingFreshness`](super::fresh::ListingFreshness)).
    /// Valid after the provider is mounted.
    pub fn listing_trust(&self) -> ListingTrust {
        ListingTrust(Arc::clone(&self.served.fresh))
    }
}

impl Provider for FsProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        (0..self.served.roots.len())
            .map(|i| {
                let name = if self.served.multi() {
                    format!("files of {}", self.served.roots[i].name)
                } else {
                    "files".to_owned()
                };
                ResourceTemplate::new(self.served.template_for(i), name)
                    .with_title(format!("Files in {}", self.served.roots[i].name))
                    .with_description(
                        "Any file or directory under the served directory, by its relative path",
                    )
                    .with_capabilities(ResourceCapabilities {
                        list: Some(true),
                        subscribe: None,
                    })
            })
            .collect()
    }

    fn capabilities(&self) -> ProviderCapabilities {
        let watching = self.served.watches();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    fn hears_every_change(&self) -> bool {
        self.served.armed.is_armed()
    }

    fn armed(&self) -> bool {
        self.served.armed.is_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        #[cfg(target_os = "linux")]
        if self.served.watches() {
            watch::start(&self.served, feed, self.served.config.watch_window);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = feed;
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let (after, limit) = (req.after.map(<[u8]>::to_vec), req.limit);
        let filter = req.filter.cloned();
        match (req.parent, filter) {
            (None, None) => self.served.list_files_ahead(after, limit).await,
            (None, Some(filter)) => {
                off_runtime(&self.served, move |s, stop| {
                    s.list_selected(after.as_deref(), limit, &filter, stop)
                })
                .await
            }
            (Some(uri), filter) => {
                let uri = uri.to_owned();
                off_runtime(&self.served, move |s, stop| {
                    s.list_children(&uri, after.as_deref(), limit, filter.as_ref(), stop)
                })
                .await
            }
        }
    }

    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        let (words, after, limit) = (req.words.to_vec(), req.after.map(<[u8]>::to_vec), req.limit);
        off_runtime(&self.served, move |s, stop| {
            s.search_files(&SearchRequest::new(&words, after.as_deref(), limit), stop)
        })
        .await
        .map(Some)
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        match self.served.resolve(uri)? {
            Target::Roots => Ok(self.served.roots_collection()),
            Target::Path(root, rel) => {
                let md = self.served.stat(uri, root, &rel)?;
                Ok(self.served.resource_at(uri.to_owned(), root, &rel, &md))
            }
        }
    }

    /// Accepted where a read would be, and acknowledged once the watcher's watches are
    /// placed, so a change made right after the acknowledgement is heard. A tree too large
    /// to watch within [`ARMING_WAIT`](crate::kit::armed::ARMING_WAIT) is acknowledged
    /// then, while the watches go on.
    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.metadata(ctx, uri).await?;
        self.served.armed.wait().await;
        Ok(())
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let contents = match self.served.resolve(uri)? {
            Target::Roots => Vec::new(),
            Target::Path(root, rel) => match self.served.open(uri, root, &rel)? {
                (Some(file), md) if md.is_file() => {
                    self.served
                        .document(ctx, uri, (root, &rel), (file, md), true)
                        .await?
                }
                _ => self.served.collection(ctx, uri, root, &rel).await?,
            },
        };
        Ok(ReadOutput {
            contents,
            cache: self.served.config.cache,
        })
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let Some(root) = self.served.template_root(req.template) else {
            return Ok(Completion::empty());
        };
        if req.argument != "path" {
            return Err(ResourceError::invalid(
                "",
                format!(
                    "the template {} has no variable {:?}",
                    req.template, req.argument
                ),
            ));
        }
        let value = req.value.to_owned();
        off_runtime(&self.served, move |s, stop| {
            s.complete_path(root, &value, stop)
        })
        .await
    }
}
