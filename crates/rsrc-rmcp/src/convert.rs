//! The engine's typed read result as rmcp's, without re-encoding the contents: texts are
//! handed over, blobs base64-encoded once (rmcp holds them as strings).
//!
//! Invariant: everything rmcp's types have a place for is carried, the rest (SEP-2093's
//! metadata on contents: `name`, `title`, `size`, `annotations`, `resourceType`,
//! `capabilities`) is left out, never put elsewhere; `docs/rmcp.md` lists it.

use base64::Engine as _;
use rmcp::model::{CacheScope, MetaObject, ReadResourceResult, ResourceContents, ResultType};
use rsrc::protocol::{Body, resources};

/// The key of the server's name and version in a 2026-07-28 result's `_meta`.
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A read result (already fitted to its revision by the engine) as rmcp's, with
/// `server_info` as the serverInfo of a 2026-07-28 result.
pub(crate) fn read_result(
    result: resources::ReadResourceResult,
    server_info: Option<&serde_json::Value>,
) -> ReadResourceResult {
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
    out.meta = result_meta(meta, server_info);
    out
}

/// A cache scope as rmcp's.
pub(crate) fn cache_scope_of(scope: rsrc::protocol::CacheScope) -> CacheScope {
    match scope {
        rsrc::protocol::CacheScope::Public => CacheScope::Public,
        rsrc::protocol::CacheScope::Private => CacheScope::Private,
    }
}

/// A result's `_meta` as rmcp's, with `server_info` as the serverInfo of a 2026-07-28
/// result.
pub(crate) fn result_meta(
    meta: Option<rsrc::protocol::ResultMeta>,
    server_info: Option<&serde_json::Value>,
) -> Option<MetaObject> {
    meta.and_then(|m| match serde_json::to_value(m) {
        Ok(serde_json::Value::Object(map)) => {
            let mut meta = MetaObject(map);
            set_server_info(&mut meta, server_info);
            Some(meta)
        }
        _ => None,
    })
}

/// Replaces the serverInfo the engine wrote (the rsrc `Server`'s name) with the rmcp
/// server's, when it is known.
pub(crate) fn set_server_info(meta: &mut MetaObject, server_info: Option<&serde_json::Value>) {
    if let Some(info) = server_info
        && meta.0.contains_key(SERVER_INFO)
    {
        meta.0.insert(SERVER_INFO.to_owned(), info.clone());
    }
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
        let out = serde_json::to_value(read_result(result, None)).unwrap();
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
