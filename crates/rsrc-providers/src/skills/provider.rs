//! The skills provider itself: [`SkillsProvider`], the handle an `rsrc::Server` mounts
//! with the skills extension, and its `rsrc::Provider` face. Invariant: it only calls
//! down — every answer reads one snapshot of the served index (`state.rs`), and a file
//! is read through its root's capability handle, never through a link.

use std::path::PathBuf;
use std::sync::Arc;

use rsrc::protocol::{Body, Resource, ResourceContents};
use rsrc::{
    ChangeFeed, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput, RequestContext,
    ResourceError, ServerBuilder, keyset,
};
use serde_json::json;

use super::config::{SkillsConfig, SkillsError};
use super::extension::{EXTENSION, skills_get, skills_list};
use super::manifest::MAX_BYTES;
use super::resources::{dir_resource, file_resource, resource};
use super::roots::PREFIX;
use super::state::ServedSkills;
use super::watch;
use crate::kit::content::text_or_bytes;
use crate::kit::open::{INLINE_READ, open_resolved, read_error, read_file};
use crate::kit::rel_path::RelPath;

/// Serves the skills of one or more directories (see the module docs).
#[derive(Clone)]
pub struct SkillsProvider {
    served: Arc<ServedSkills>,
}

impl SkillsProvider {
    /// Serves `dirs`: `(name, path)` pairs; a single directory may go unnamed (its skills
    /// are then `skill://<skill>/…`), several need names (`skill://<name>/<skill>/…`).
    pub fn new(
        dirs: Vec<(Option<String>, PathBuf)>,
        config: SkillsConfig,
    ) -> Result<SkillsProvider, SkillsError> {
        ServedSkills::serve(dirs, config).map(|served| SkillsProvider { served })
    }

    /// Mounts this provider on `builder` with the extension: its capability
    /// (`directoryRead: true`), `skills/list` and `skills/get`.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        let (list, get) = (Arc::clone(&self.served), Arc::clone(&self.served));
        builder
            .extension(EXTENSION, json!({"directoryRead": true}))
            .method("skills/list", move |ctx, params| {
                let served = Arc::clone(&list);
                async move { skills_list(&served, &ctx, &params) }
            })
            .method("skills/get", move |ctx, params| {
                let served = Arc::clone(&get);
                async move { skills_get(&served, &ctx, &params) }
            })
            .mount(PREFIX, self)
    }

    /// The names of the skills served, in URI order.
    pub fn skill_uris(&self) -> Vec<String> {
        self.served.index().skills.keys().cloned().collect()
    }
}

impl Provider for SkillsProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        let watched = self.served.config.poll_interval.is_some();
        ProviderCapabilities::default()
            .with_subscribe(watched)
            .with_list_changed(watched)
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
        let index = self.served.index();
        let after = req
            .after
            .map(std::str::from_utf8)
            .transpose()
            .map_err(|_| ResourceError::bad_position(""))?;
        // Keyset pages on the URI, the filter applied to each resource as listed.
        let page = |rest: &mut dyn Iterator<Item = (&String, Resource)>| {
            let page = rsrc::filter::page(
                req.filter,
                rest,
                req.limit,
                |f, (_, r)| f.matches_resource(r),
                |(u, _)| u.as_bytes().to_vec(),
            );
            Page {
                resources: page.items.into_iter().map(|(_, r)| r.into()).collect(),
                next: page.next,
                cache: Some(self.served.config.cache),
            }
        };
        Ok(match req.parent {
            None => page(
                &mut index
                    .files
                    .range::<str, _>(keyset::range(after))
                    .map(|(u, f)| (u, file_resource(u, f))),
            ),
            Some(parent) => {
                let Some(children) = index.dirs.get(parent) else {
                    return Err(if index.files.contains_key(parent) {
                        ResourceError::not_a_collection(parent)
                    } else {
                        ResourceError::not_found(parent)
                    });
                };
                page(
                    &mut children.range::<str, _>(keyset::range(after)).filter_map(
                        |(u, is_dir)| {
                            let r = if *is_dir {
                                dir_resource(u)
                            } else {
                                file_resource(u, index.files.get(u)?)
                            };
                            Some((u, r))
                        },
                    ),
                )
            }
        })
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        resource(&self.served.index(), uri).ok_or_else(|| ResourceError::not_found(uri))
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let index = self.served.index();
        let cache = Some(self.served.config.cache);
        let Some(f) = index.files.get(uri) else {
            return if index.dirs.contains_key(uri) {
                Ok(ReadOutput {
                    contents: Vec::new(),
                    cache,
                })
            } else {
                Err(ResourceError::not_found(uri))
            };
        };
        let dir = &self.served.roots[f.root].dir;
        // A file swapped for a link since the scan is not part of the skill any more.
        let unlinked = |rel: &RelPath| {
            dir.canonicalize(rel.to_path())
                .ok()
                .as_deref()
                .and_then(RelPath::from_canonical)
                .as_ref()
                == Some(rel)
        };
        let (file, md) = match open_resolved(dir, &f.rel) {
            Ok((file, md, linked)) if !linked || unlinked(&f.rel) => (file, md),
            _ => return Err(ResourceError::not_found(uri)),
        };
        let bytes = read_file(ctx, file, md, MAX_BYTES, INLINE_READ)
            .await
            .map_err(|e| read_error(uri, e, MAX_BYTES))?;
        let mut resource = file_resource(uri, f);
        resource.size = Some(bytes.len() as u64);
        let body = match text_or_bytes(bytes) {
            Ok(text) => Body::Text(text),
            Err(bytes) => Body::Blob(bytes.into()),
        };
        Ok(ReadOutput {
            contents: vec![ResourceContents { resource, body }],
            cache,
        })
    }
}

impl std::fmt::Debug for SkillsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsProvider")
            .field(
                "roots",
                &self
                    .served
                    .roots
                    .iter()
                    .map(|r| &r.path)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
