//! rmcp's types and the engine's, one into the other, without JSON text between them.
//!
//! - Requests: a request's id, its `_meta` (taken out of rmcp's context, decoded from the
//!   map rmcp holds), and its params, field by field; the handshake rmcp made, once per
//!   connection.
//! - Results: a read's contents handed over (texts moved, blobs base64-encoded once, as
//!   rmcp holds them as strings); completions field by field; the few results that are
//!   read once per connection or less (templates, capabilities, extension methods'
//!   results) through a `serde_json::Value` tree ([`retype`]), as both sides spell them
//!   the same.
//! - Notifications: each of the engine's, field by field, with its subscription id.
//!
//! Invariant: everything rmcp's types have a place for is carried, the rest (SEP-2093's
//! metadata on contents: `name`, `title`, `size`, `annotations`, `resourceType`,
//! `capabilities`) is left out, never put elsewhere; `docs/rmcp.md` lists it.

use base64::Engine as _;
use rmcp::model::{
    CacheScope, ErrorData, MetaObject, NotificationMetaObject, NumberOrString, ProgressToken,
    ReadResourceResult, ResourceContents, ResultType, ServerNotification,
};
use rmcp::service::{RequestContext, RoleServer};
use rsrc::Notification;
use rsrc::protocol::jsonrpc::RequestId;
use rsrc::protocol::meta::{NotificationMeta, RequestMeta};
use rsrc::protocol::{Body, LoggingLevel, resources};
use serde::de::DeserializeOwned;
use serde::{Deserialize as _, Serialize};

/// `value` as the type the other side spells the same way, through a JSON tree (never
/// text): for what is converted once per connection or rarely.
pub(crate) fn retype<A: Serialize, B: DeserializeOwned>(value: &A) -> Result<B, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            ErrorData::internal_error(format!("a value the other side cannot hold: {e}"), None)
        })
}

/// rmcp's request id as the engine's.
pub(crate) fn request_id(id: &NumberOrString) -> RequestId {
    match id {
        NumberOrString::Number(n) => RequestId::Number(*n),
        NumberOrString::String(s) => RequestId::String(s.to_string()),
    }
}

fn number_or_string(id: RequestId) -> NumberOrString {
    match id {
        RequestId::Number(n) => NumberOrString::Number(n),
        RequestId::String(s) => NumberOrString::String(s.into()),
    }
}

/// The request's `_meta`, taken out of rmcp's context. One that does not decode (a
/// revision that is not a string, say) is kept whole under its other keys, where the
/// gate finds no revision in it.
pub(crate) fn take_meta(context: &mut RequestContext<RoleServer>) -> Option<RequestMeta> {
    meta_of(std::mem::take(&mut context.meta.0.0))
}

/// A request's `_meta` as the engine's (see [`take_meta`]).
pub(crate) fn meta_of(map: serde_json::Map<String, serde_json::Value>) -> Option<RequestMeta> {
    if map.is_empty() {
        return None;
    }
    let value = serde_json::Value::Object(map);
    if let Ok(meta) = RequestMeta::deserialize(&value) {
        return Some(meta);
    }
    let serde_json::Value::Object(other) = value else {
        return None;
    };
    Some(RequestMeta {
        other,
        ..RequestMeta::default()
    })
}

/// The handshake rmcp made with a 2025 client, as the engine's `initialize` params.
pub(crate) fn handshake(
    info: &rmcp::model::InitializeRequestParams,
) -> Option<rsrc::protocol::lifecycle::InitializeParams> {
    retype(info)
        .inspect_err(
            |e| tracing::warn!(error = %e.message, "the client's handshake does not decode"),
        )
        .ok()
}

/// A listen stream's filter as the engine's.
pub(crate) fn filter(
    f: &rmcp::model::SubscriptionFilter,
) -> rsrc::protocol::subscriptions::SubscriptionFilter {
    rsrc::protocol::subscriptions::SubscriptionFilter {
        tools_list_changed: f.tools_list_changed,
        prompts_list_changed: f.prompts_list_changed,
        resources_list_changed: f.resources_list_changed,
        resource_subscriptions: f.resource_subscriptions.clone(),
    }
}

/// A completion result as rmcp's.
pub(crate) fn complete_result(
    result: rsrc::protocol::completion::CompleteResult,
) -> rmcp::model::CompleteResult {
    let c = result.completion;
    let mut info = rmcp::model::CompletionInfo::default();
    info.values = c.values;
    info.total = c.total.map(|t| u32::try_from(t).unwrap_or(u32::MAX));
    info.has_more = c.has_more;
    let mut out = rmcp::model::CompleteResult::new(info);
    out.result_type = result.result_type.map(|_| ResultType::COMPLETE);
    out.meta = result_meta(result.meta);
    out
}

/// One of the engine's notifications as rmcp's (logging is deprecated in rmcp, after
/// SEP-2577; the engine still sends it to clients that ask) (`None` for an acknowledgement, which
/// rmcp sends itself).
#[allow(deprecated)]
pub(crate) fn notification(n: Notification) -> Option<ServerNotification> {
    use rmcp::model as m;
    Some(match n {
        Notification::Progress(p) => {
            let mut out = m::ProgressNotificationParam::new(
                ProgressToken(number_or_string(p.progress_token)),
                p.progress,
            );
            out.total = p.total;
            out.message = p.message;
            out.meta = notification_meta(p.meta);
            ServerNotification::ProgressNotification(m::Notification::new(out))
        }
        Notification::Log(p) => {
            let mut out = m::LoggingMessageNotificationParam::new(level(p.level), p.data);
            out.logger = p.logger;
            out.meta = notification_meta(p.meta);
            ServerNotification::LoggingMessageNotification(m::Notification::new(out))
        }
        Notification::Updated(p) => {
            let mut out = m::ResourceUpdatedNotificationParam::new(p.uri);
            out.meta = notification_meta(p.meta);
            ServerNotification::ResourceUpdatedNotification(m::Notification::new(out))
        }
        Notification::ListChanged(p) => {
            let mut out = m::ResourceListChangedNotification::default();
            if let Some(meta) = notification_meta(p.meta) {
                out.extensions.insert(meta);
            }
            ServerNotification::ResourceListChangedNotification(out)
        }
        _ => return None,
    })
}

fn notification_meta(meta: Option<NotificationMeta>) -> Option<NotificationMetaObject> {
    let NotificationMeta {
        subscription_id,
        other,
    } = meta?;
    let mut out = NotificationMetaObject(MetaObject(other));
    if let Some(id) = subscription_id {
        out.set_subscription_id(number_or_string(id));
    }
    Some(out)
}

#[allow(deprecated)]
fn level(l: LoggingLevel) -> rmcp::model::LoggingLevel {
    use rmcp::model::LoggingLevel as R;
    match l {
        LoggingLevel::Debug => R::Debug,
        LoggingLevel::Info => R::Info,
        LoggingLevel::Notice => R::Notice,
        LoggingLevel::Warning => R::Warning,
        LoggingLevel::Error => R::Error,
        LoggingLevel::Critical => R::Critical,
        LoggingLevel::Alert => R::Alert,
        LoggingLevel::Emergency => R::Emergency,
    }
}

/// A read result (already fitted to its revision, and stamped with the rmcp server's
/// name, by the engine) as rmcp's.
pub(crate) fn read_result(result: resources::ReadResourceResult) -> ReadResourceResult {
    let resources::ReadResourceResult {
        contents,
        result_type,
        ttl_ms,
        cache_scope,
        meta,
    } = result;
    let mut out = ReadResourceResult::new(contents.into_iter().map(contents_of).collect());
    out.result_type = result_type.map(|_| ResultType::COMPLETE);
    out.ttl_ms = ttl_ms;
    out.cache_scope = cache_scope.map(cache_scope_of);
    out.meta = result_meta(meta);
    out
}

/// A cache scope as rmcp's.
pub(crate) fn cache_scope_of(scope: rsrc::protocol::CacheScope) -> CacheScope {
    match scope {
        rsrc::protocol::CacheScope::Public => CacheScope::Public,
        rsrc::protocol::CacheScope::Private => CacheScope::Private,
    }
}

/// A result's `_meta` as rmcp's.
pub(crate) fn result_meta(meta: Option<rsrc::protocol::ResultMeta>) -> Option<MetaObject> {
    meta.and_then(|m| match serde_json::to_value(m) {
        Ok(serde_json::Value::Object(map)) => Some(MetaObject(map)),
        _ => None,
    })
}

fn contents_of(c: resources::ResourceContents) -> ResourceContents {
    let resources::ResourceContents { resource, body } = c;
    let meta = resource.meta.and_then(|m| match serde_json::to_value(m) {
        Ok(serde_json::Value::Object(map)) => Some(MetaObject(map)),
        _ => None,
    });
    let uri = resource.uri;
    let mime_type = resource.mime_type;
    match body {
        Body::Text(text) => ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: text.as_str().to_owned(),
            meta,
        },
        Body::Blob(bytes) => ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob: base64::engine::general_purpose::STANDARD.encode(&bytes),
            meta,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsrc::protocol::{Resource, ResourceKind};

    #[test]
    fn contents_keep_what_rmcp_holds_and_leave_out_the_rest() {
        let doc = Resource::new("t:///a", "a")
            .with_title("A")
            .with_mime_type("text/plain")
            .with_kind(ResourceKind::Document);
        let result = resources::ReadResourceResult {
            contents: vec![
                resources::ResourceContents::text(doc.clone(), "hé \"x\""),
                resources::ResourceContents::blob(
                    doc.with_mime_type("application/octet-stream"),
                    b"\x00\x01".to_vec(),
                ),
            ],
            ..Default::default()
        };
        let out = serde_json::to_value(read_result(result)).unwrap();
        assert_eq!(
            out["contents"],
            serde_json::json!([
                {"uri": "t:///a", "mimeType": "text/plain", "text": "hé \"x\""},
                {"uri": "t:///a", "mimeType": "application/octet-stream", "blob": "AAE="}
            ])
        );
        assert!(out.get("ttlMs").is_none(), "{out}");
    }
}
