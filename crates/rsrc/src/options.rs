//! [`Options`]: how a declared resource is served, as a document or a collection, cached
//! or not. Both `ResourceSet` (a resource with a handler) and `TemplateResource` (the
//! resources a template names) take them.
//!
//! Invariant: a collection is always served as one (its `capabilities.list` is written
//! wherever its metadata is), and a cache policy applies only where it was asked for.

use std::time::Duration;

use rsrc_protocol::{CacheScope, ResourceKind};

use crate::cache::CachePolicy;

/// How a declared resource is served: as a document or a collection, and cached or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    collection: bool,
    cache: Option<CachePolicy>,
    allow_nul: bool,
}

impl Options {
    /// A document, not cached.
    pub fn new() -> Self {
        Options::default()
    }

    /// The resource is a collection: reading it returns its children's contents, and
    /// `resources/list` with its URI lists them (its handler returns `Vec<Child>`).
    #[must_use]
    pub fn collection(mut self) -> Self {
        self.collection = true;
        self
    }

    /// Reads are cached for `ttl` per URI (see [`ReadCache`](crate::ReadCache)), privately
    /// unless [`Options::cache_scope`] says otherwise.
    #[must_use]
    pub fn cache(mut self, ttl: Duration) -> Self {
        let scope = self.cache.map_or(CacheScope::Private, |c| c.scope);
        self.cache = Some(CachePolicy::new(ttl).with_scope(scope));
        self
    }

    /// The `cacheScope` clients are told for cached reads.
    #[must_use]
    pub fn cache_scope(mut self, scope: CacheScope) -> Self {
        if let Some(c) = &mut self.cache {
            c.scope = scope;
        }
        self
    }

    /// Template values holding NUL (`%00` in the URI) reach the handler. By default a URI
    /// whose value holds NUL names no resource: few handlers expect one, and NUL ends a
    /// string wherever it meets C (a file name, most databases' text).
    #[must_use]
    pub fn allow_nul(mut self) -> Self {
        self.allow_nul = true;
        self
    }

    pub(crate) fn allows_nul(self) -> bool {
        self.allow_nul
    }

    pub(crate) fn is_collection(self) -> bool {
        self.collection
    }

    pub(crate) fn kind(self) -> ResourceKind {
        if self.collection {
            ResourceKind::Collection
        } else {
            ResourceKind::Document
        }
    }

    pub(crate) fn cache_policy(self) -> Option<CachePolicy> {
        self.cache
    }
}
