//! [`Fit`]: the one step that fits a result to the revision of its request, for every
//! method: typed results, the tools bridge's and extension methods' alike.
//!
//! Invariant: a 2026-07-28 result carries `resultType` and `_meta.serverInfo`, and a
//! cached one its `ttlMs` and `cacheScope`; a result of the 2025 revisions carries none of
//! them (handlers always fill the caching members in from the provider's hint or the
//! server's default, and this step drops them there). The dispatcher applies it to every
//! result, once, before encoding.
//!
//! The second fitting, [`FitExtension`], is of SEP-2093's members to whether the server
//! serves rsrc's extension (`dev.rsrc/resource-metadata`): served, every resource carries
//! both spellings of its kind; not served, none of the extension's members is left, so a
//! result has exactly the standard shape of its revision. It depends on the server, not
//! on the request, so the handlers that build results holding resources apply it
//! (listings, reads, templates, `resources/metadata`), once each.

use rsrc_protocol::meta::SERVER_INFO_KEY;
use rsrc_protocol::{Implementation, ProtocolVersion, ResultMeta, ResultType};
use serde_json::Value;

use crate::extension::ExtensionResult;

/// A result fitted to the revision of its request, in one place for every method: a
/// 2026-07-28 result carries `resultType` and `_meta.serverInfo`; a result of the 2025
/// revisions carries neither, nor the caching members (`ttlMs`, `cacheScope`) that
/// handlers always fill in from the provider's hint or the server's default.
pub(crate) trait Fit {
    fn fit(&mut self, version: ProtocolVersion, server: &Implementation);
}

/// What every typed 2026-07-28 result carries: `resultType` and `_meta.serverInfo`.
fn mark_modern(
    result_type: &mut Option<ResultType>,
    meta: &mut ResultMeta,
    server: &Implementation,
) {
    *result_type = Some(ResultType::COMPLETE);
    meta.server_info = Some(server.clone());
}

macro_rules! fit {
    (@cached $($t:ty),*) => {$(
        impl Fit for $t {
            fn fit(&mut self, version: ProtocolVersion, server: &Implementation) {
                if version.is_modern() {
                    let meta = self.meta.get_or_insert_with(ResultMeta::default);
                    mark_modern(&mut self.result_type, meta, server);
                } else {
                    self.ttl_ms = None;
                    self.cache_scope = None;
                }
            }
        }
    )*};
    (@plain $($t:ty),*) => {$(
        impl Fit for $t {
            fn fit(&mut self, version: ProtocolVersion, server: &Implementation) {
                if version.is_modern() {
                    let meta = self.meta.get_or_insert_with(ResultMeta::default);
                    mark_modern(&mut self.result_type, meta, server);
                }
            }
        }
    )*};
}

fit!(@cached
    rsrc_protocol::lifecycle::DiscoverResult,
    rsrc_protocol::resources::ListResourcesResult<crate::provider::ListEntry>,
    rsrc_protocol::resources::ListResourceTemplatesResult,
    rsrc_protocol::resources::ReadResourceResult
);
fit!(@plain
    rsrc_protocol::lifecycle::EmptyResult,
    rsrc_protocol::resources::ResourceMetadataResult,
    rsrc_protocol::completion::CompleteResult
);

impl Fit for rsrc_protocol::subscriptions::SubscriptionsListenResult {
    fn fit(&mut self, version: ProtocolVersion, server: &Implementation) {
        if version.is_modern() {
            mark_modern(&mut self.result_type, &mut self.meta, server);
        }
    }
}

/// An extension method's or the tools bridge's result: a JSON object its handler built,
/// given in 2026-07-28 what the handler did not set of `resultType`, `_meta.serverInfo`
/// and, for a result with a caching hint, `ttlMs` and `cacheScope`; before 2026-07-28,
/// left as the handler built it.
impl Fit for ExtensionResult {
    fn fit(&mut self, version: ProtocolVersion, server: &Implementation) {
        if !version.is_modern() {
            return;
        }
        let Value::Object(obj) = &mut self.value else {
            return;
        };
        if let Some(hint) = self.cache {
            obj.entry("ttlMs").or_insert_with(|| hint.ttl_ms.into());
            obj.entry("cacheScope")
                .or_insert_with(|| serde_json::to_value(hint.scope).unwrap_or(Value::Null));
        }
        obj.entry("resultType")
            .or_insert_with(|| Value::String(ResultType::COMPLETE.as_str().into()));
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(SERVER_INFO_KEY)
                .or_insert_with(|| serde_json::to_value(server).unwrap_or(Value::Null));
        }
    }
}

/// A result's SEP-2093 members fitted to whether the server serves rsrc's extension
/// (`served`): with it, both spellings of every resource's kind (`resourceType` and
/// `capabilities.list`); without it, no `resourceType` or `capabilities` on resources and
/// templates, and contents with only the standard members (`uri`, `mimeType`, `_meta`
/// and the payload).
pub(crate) trait FitExtension {
    fn fit_extension(&mut self, served: bool);
}

impl FitExtension for rsrc_protocol::resources::ListResourcesResult<crate::provider::ListEntry> {
    fn fit_extension(&mut self, served: bool) {
        for entry in &mut self.resources {
            if served {
                entry.normalize_kind();
            } else {
                entry.strip_sep_2093();
            }
        }
    }
}

impl FitExtension for rsrc_protocol::resources::ReadResourceResult {
    fn fit_extension(&mut self, served: bool) {
        for c in &mut self.contents {
            if served {
                c.resource.normalize_kind();
            } else {
                c.strip_sep_2093();
            }
        }
    }
}

impl FitExtension for rsrc_protocol::resources::ListResourceTemplatesResult {
    fn fit_extension(&mut self, served: bool) {
        if !served {
            self.resource_templates
                .iter_mut()
                .for_each(rsrc_protocol::ResourceTemplate::strip_sep_2093);
        }
    }
}

/// Only answered while the extension is served (the method is unknown otherwise).
impl FitExtension for rsrc_protocol::resources::ResourceMetadataResult {
    fn fit_extension(&mut self, served: bool) {
        if served {
            self.resource.normalize_kind();
        } else {
            self.resource.strip_sep_2093();
        }
    }
}
