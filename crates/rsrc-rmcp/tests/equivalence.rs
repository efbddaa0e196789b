//! The same requests, sent to rsrc's own server and to the same engine hosted in an rmcp
//! server, give the same results in each revision (2025-06-18, 2025-11-25, 2026-07-28):
//! sealed cursors, templates, reads with format alternatives and collections, errors
//! with their codes and data, completion, `resources/metadata`, subscriptions. Every
//! message of both is validated against the revision's schema.
//!
//! Each holds with rsrc's SEP-2093 extension served on both sides, and switched off on
//! both (`resource_metadata(false)`: exactly the standard shapes).
//!
//! The only differences allowed are the ones `docs/rmcp.md` lists: `serverInfo`, and
//! what rmcp's types have no place for — SEP-2093's `resourceType` and `capabilities`
//! on listed resources, and every member of read contents but `uri`, `mimeType`,
//! `text`, `blob` and `_meta`; and, in a refusal of params rmcp could not decode, the
//! position serde names (the engine decodes them again from the map rmcp kept).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::FakeNotion;
use rsrc::protocol::ProtocolVersion;
use rsrc::protocol::resources::RESOURCE_METADATA_EXTENSION;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

const REVISIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Members of a read's contents that rmcp's `ResourceContents` holds.
const CONTENTS_KEPT: [&str; 5] = ["uri", "mimeType", "text", "blob", "_meta"];

/// The extension served, and switched off.
const METADATA: [bool; 2] = [true, false];

/// rsrc's own server and the rmcp-hosted one, each over its own fake Notion, begun in
/// revision `v`, both serving rsrc's SEP-2093 extension or neither.
async fn both(v: ProtocolVersion, metadata: bool) -> (Peer, Peer) {
    let fake = || Arc::new(FakeNotion::with_latency(Duration::ZERO));
    let own = common::engine_with(&fake(), 2, metadata);
    let (r, w) = tokio::io::split(serve_in_memory(&own, StreamConfig::default()));
    let mut own = Peer::new(r, w);
    own.begin(v).await;
    let hosted = common::peer(common::hosted_with(&fake(), 2, metadata), v).await;
    (own, hosted)
}

/// What rmcp cannot carry, taken out of a response, and `serverInfo`.
fn carried(mut response: Value) -> Value {
    if let Some(Value::String(message)) = response.pointer_mut("/error/message")
        && let Some(at) = message.find(" at line ")
    {
        message.truncate(at);
    }
    if let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) {
        if let Some(Value::Object(meta)) = result.get_mut("_meta") {
            meta.remove(SERVER_INFO);
            if meta.is_empty() {
                result.remove("_meta");
            }
        }
        if let Some(Value::Array(resources)) = result.get_mut("resources") {
            for r in resources.iter_mut().filter_map(Value::as_object_mut) {
                r.remove("resourceType");
                r.remove("capabilities");
            }
        }
        if let Some(Value::Array(contents)) = result.get_mut("contents") {
            for c in contents.iter_mut().filter_map(Value::as_object_mut) {
                c.retain(|k, _| CONTENTS_KEPT.contains(&k.as_str()));
            }
        }
    }
    response
}

/// Sends `method` with `params` to both and asserts the same answer; returns rsrc's.
async fn same(own: &mut Peer, hosted: &mut Peer, method: &str, params: Value) -> Value {
    let a = own.call(method, params.clone()).await;
    let b = hosted.call(method, params.clone()).await;
    assert_eq!(
        carried(a.clone()),
        carried(b.clone()),
        "{} {method} {params}",
        own.revision()
    );
    // rmcp adds nothing of its own to a result.
    if let (Some(a), Some(b)) = (a["result"].as_object(), b["result"].as_object()) {
        for key in b.keys() {
            assert!(a.contains_key(key), "{method}: rmcp added {key}: {b:?}");
        }
    }
    a
}

#[tokio::test]
async fn listings_with_cursors_templates_and_reads_are_the_same() {
    for (v, metadata) in REVISIONS.into_iter().flat_map(|v| METADATA.map(|m| (v, m))) {
        let (mut own, mut hosted) = both(v, metadata).await;
        let mut cursor: Option<Value> = None;
        let mut uris = Vec::new();
        loop {
            let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let page = same(&mut own, &mut hosted, "resources/list", params).await;
            for r in page["result"]["resources"].as_array().unwrap() {
                uris.push(r["uri"].as_str().unwrap().to_owned());
            }
            cursor = page["result"].get("nextCursor").cloned();
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(uris.len(), 9, "{v}");
        same(
            &mut own,
            &mut hosted,
            "resources/list",
            json!({"cursor": "forged"}),
        )
        .await;
        same(&mut own, &mut hosted, "resources/templates/list", json!({})).await;
        for uri in uris.iter().map(String::as_str).chain([
            "sample:///nope",
            "notion://pages/nope",
            "notion://databases/db1/schema",
            "no scheme",
        ]) {
            same(
                &mut own,
                &mut hosted,
                "resources/read",
                json!({ "uri": uri }),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn metadata_completion_and_errors_are_the_same() {
    for (v, metadata) in REVISIONS.into_iter().flat_map(|v| METADATA.map(|m| (v, m))) {
        let (mut own, mut hosted) = both(v, metadata).await;
        for uri in ["sample:///guide", "sample:///report.pdf", "sample:///nope"] {
            let params = json!({ "uri": uri });
            if !metadata {
                // Unknown without the extension: the engine's -32601 on one side, the
                // rmcp handler's own (the engine hands it the method) on the other.
                let a = own.call("resources/metadata", params.clone()).await;
                let b = hosted.call("resources/metadata", params).await;
                assert_eq!(a["error"]["code"], -32601, "{a}");
                assert_eq!(b["error"]["code"], -32601, "{b}");
                continue;
            }
            let m = same(
                &mut own,
                &mut hosted,
                "resources/metadata",
                json!({ "uri": uri }),
            )
            .await;
            if uri == "sample:///guide" {
                assert_eq!(m["result"]["resource"]["resourceType"], "collection");
            }
        }
        let complete = |template: &str, value: &str| {
            json!({
                "ref": {"type": "ref/resource", "uri": template},
                "argument": {"name": "pageId", "value": value}
            })
        };
        for (template, value) in [
            ("notion://pages/{pageId}", ""),
            ("notion://pages/{pageId}", "d"),
            ("notion://unknown/{pageId}", "d"),
        ] {
            same(
                &mut own,
                &mut hosted,
                "completion/complete",
                complete(template, value),
            )
            .await;
        }
        // Params the engine refuses (rmcp could not decode them into its type either).
        same(&mut own, &mut hosted, "resources/read", json!({"uri": 5})).await;
    }
}

#[tokio::test]
async fn subscriptions_and_levels_are_the_same_in_2025() {
    for (v, metadata) in REVISIONS[..2].iter().flat_map(|v| METADATA.map(|m| (v, m))) {
        let (mut own, mut hosted) = both(*v, metadata).await;
        for uri in [
            "notion://pages/abc123",
            "notion://pages/nope",
            "sample:///README.md",
        ] {
            same(
                &mut own,
                &mut hosted,
                "resources/subscribe",
                json!({ "uri": uri }),
            )
            .await;
            same(
                &mut own,
                &mut hosted,
                "resources/unsubscribe",
                json!({ "uri": uri }),
            )
            .await;
        }
        same(
            &mut own,
            &mut hosted,
            "logging/setLevel",
            json!({"level": "info"}),
        )
        .await;
    }
}

#[tokio::test]
async fn the_resource_capabilities_are_the_same() {
    // rmcp's ResourcesCapability has no `filtering` (SEP-2564), and its list params no
    // `filter`: docs/rmcp.md names it among what rmcp cannot carry. rsrc's extension is
    // where the revision declares one (`experimental` before 2026-07-28, `extensions`
    // from it); the adapter, which answers every revision with one declaration, declares
    // it in both.
    let caps = |c: &Value, place: &str| {
        assert!(c["resources"].is_object(), "{c}");
        let mut resources = c["resources"].clone();
        if let Some(r) = resources.as_object_mut() {
            r.remove("filtering");
        }
        let extension = c[place][RESOURCE_METADATA_EXTENSION].clone();
        json!([resources, c["completions"], c["logging"], extension])
    };
    for metadata in METADATA {
        for v in &REVISIONS[..2] {
            let fake = Arc::new(FakeNotion::with_latency(Duration::ZERO));
            let (r, w) = tokio::io::split(serve_in_memory(
                &common::engine_with(&fake, 2, metadata),
                StreamConfig::default(),
            ));
            let a = Peer::new(r, w).initialize(*v).await;
            let (r, w) = tokio::io::split(common::serve_in_memory(common::hosted_with(
                &fake, 2, metadata,
            )));
            let b = Peer::new(r, w).initialize(*v).await;
            let (ca, cb) = (&a["capabilities"], &b["capabilities"]);
            assert_eq!(caps(ca, "experimental"), caps(cb, "experimental"), "{v}");
            assert_eq!(
                ca["experimental"][RESOURCE_METADATA_EXTENSION].is_object(),
                metadata
            );
            assert_eq!(a["protocolVersion"], b["protocolVersion"]);
        }
        let (mut own, mut hosted) = both(ProtocolVersion::V2026_07_28, metadata).await;
        let a = own.call("server/discover", json!({})).await;
        let b = hosted.call("server/discover", json!({})).await;
        let (ca, cb) = (&a["result"]["capabilities"], &b["result"]["capabilities"]);
        assert_eq!(caps(ca, "extensions"), caps(cb, "extensions"));
        assert_eq!(
            ca["extensions"][RESOURCE_METADATA_EXTENSION].is_object(),
            metadata
        );
        for key in ["supportedVersions", "ttlMs", "cacheScope", "resultType"] {
            assert_eq!(a["result"][key], b["result"][key], "{key}");
        }
    }
}
