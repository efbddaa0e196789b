//! [`ServerConfig`]: the limits and defaults of a server.
//!
//! Invariant: a leaf of the engine: the builder checks it (no limit may be zero) and the
//! built server holds it unchanged; its switches (`resource_metadata`) are read through
//! the inside API, never tested field by field in the handlers.

use rsrc_protocol::{CacheHint, CacheScope};

/// Limits and defaults of a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Resources per `resources/list` page and templates per `resources/templates/list`
    /// page (default 1000).
    pub page_size: usize,
    /// Longest URI accepted, in bytes (default 16 KiB: a percent-encoded path of
    /// `PATH_MAX` bytes fits).
    pub max_uri_len: usize,
    /// Caching hint of listings when the provider gives none (default: immediately stale,
    /// private).
    pub list_cache: CacheHint,
    /// Caching hint of reads when the provider gives none (default: immediately stale,
    /// private).
    pub read_cache: CacheHint,
    /// Caching hint of `resources/templates/list` (default: 5 minutes, public).
    pub templates_cache: CacheHint,
    /// Caching hint of `server/discover` (default: 1 hour, public).
    pub discover_cache: CacheHint,
    /// Most resources one session, or one `subscriptions/listen` stream, may subscribe
    /// to (default 4096).
    pub max_subscriptions: usize,
    /// Content bytes all requests together may hold: content read for them and large
    /// responses not yet written out (default 256 MiB). Beyond it, reads wait for room.
    /// See [`RequestContext::reserve`](crate::RequestContext::reserve).
    pub read_budget: u64,
    /// Whether SEP-2093 is served, as the extension `dev.rsrc/resource-metadata`
    /// ([`RESOURCE_METADATA_EXTENSION`]) declared in the capabilities: metadata on read
    /// contents, `resourceType` / `capabilities` on resources and templates,
    /// `resources/metadata`, and `resources/list` with a collection's `uri` (default
    /// `true`). Off, the server serves exactly the standard shapes: none of those
    /// members, `resources/metadata` unknown (`-32601`), and a `uri` on
    /// `resources/list` ignored like any unknown param.
    ///
    /// [`RESOURCE_METADATA_EXTENSION`]: rsrc_protocol::resources::RESOURCE_METADATA_EXTENSION
    pub resource_metadata: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            page_size: 1000,
            max_uri_len: 16 * 1024,
            list_cache: CacheHint::NO_STORE,
            read_cache: CacheHint::NO_STORE,
            templates_cache: CacheHint::new(5 * 60 * 1000, CacheScope::Public),
            discover_cache: CacheHint::new(60 * 60 * 1000, CacheScope::Public),
            max_subscriptions: 4096,
            read_budget: 256 * 1024 * 1024,
            resource_metadata: true,
        }
    }
}
