//! The Notion example (`examples/notion.rs`) on the wire, both eras: its three resources,
//! not-found, completion, listing, and the page cache seen from outside (one backend call
//! for concurrent cold reads, hits without waiting, eviction on change). The fake client's
//! latency runs on tokio's paused clock, so the durations asserted are exact and do not
//! depend on the machine.
#![cfg(feature = "macros")]

mod common;

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/notion.rs"]
mod notion;

use std::sync::Arc;
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc::{IntoProvider, Server};
use serde_json::{Value, json};

use notion::FakeNotion;

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];
const LATENCY: Duration = Duration::from_millis(100);

fn setup() -> (Server, Arc<FakeNotion>) {
    let client = Arc::new(FakeNotion::with_latency(LATENCY));
    (notion::server(Arc::clone(&client)).unwrap(), client)
}

fn json_text(resp: &Value) -> Value {
    let c = &resp["result"]["contents"][0];
    assert_eq!(c["mimeType"], "application/json", "{resp}");
    serde_json::from_str(c["text"].as_str().unwrap()).unwrap()
}

#[test]
fn the_declaration_is_valid() {
    let client = Arc::new(FakeNotion::with_latency(LATENCY));
    assert!(notion::Notion { client }.into_provider().is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_workspace_info_is_json() {
    for v in ERAS {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let info = json_text(&common::read(&mut p, "notion://workspace/info").await);
        assert_eq!(info["user"], "Ada Lovelace");
        assert_eq!(info["workspace"], "Analytical Engines");
    }
}

#[tokio::test(start_paused = true)]
async fn a_page_read_mentions_its_title() {
    for v in ERAS {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let page = json_text(&common::read(&mut p, "notion://pages/abc123").await);
        assert_eq!(page["title"], "Project Roadmap");
        assert_eq!(page["id"], "abc123");
    }
}

#[tokio::test(start_paused = true)]
async fn the_database_schema_template_lists_typed_properties() {
    for v in ERAS {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let schema = json_text(&common::read(&mut p, "notion://databases/db1/schema").await);
        assert_eq!(schema["title"], "Tasks");
        assert_eq!(
            schema["properties"][1],
            json!({"name": "Status", "type": "select"})
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_unknown_page_is_not_found_with_its_uri() {
    for (v, code) in [(ERAS[0], -32002), (ERAS[1], -32602)] {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        for uri in ["notion://pages/nope", "notion://databases/nope/schema"] {
            let r = common::read(&mut p, uri).await;
            assert_eq!(r["error"]["code"], code, "{r}");
            assert_eq!(r["error"]["data"]["uri"], uri);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_page_is_fetched_once_then_served_from_the_cache() {
    for v in ERAS {
        let (srv, client) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let start = tokio::time::Instant::now();
        let first = common::read(&mut p, "notion://pages/def456").await;
        assert!(start.elapsed() >= LATENCY, "{:?}", start.elapsed());
        let start = tokio::time::Instant::now();
        let second = common::read(&mut p, "notion://pages/def456").await;
        assert!(start.elapsed() < Duration::from_millis(10));
        assert_eq!(first["result"]["contents"], second["result"]["contents"]);
        assert_eq!(client.calls(), 1);
        if v.is_modern() {
            assert_eq!(first["result"]["ttlMs"], 300_000);
            assert_eq!(first["result"]["cacheScope"], "private");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn concurrent_reads_of_a_cold_page_make_one_backend_call() {
    let (srv, client) = setup();
    let start = tokio::time::Instant::now();
    let reads = (0..20).map(|i| {
        let srv = srv.clone();
        tokio::spawn(async move {
            let mut p = common::connect_as(&srv, ERAS[i % 2]).await;
            common::read(&mut p, "notion://pages/abc123").await
        })
    });
    for r in futures_util::future::join_all(reads).await {
        assert_eq!(json_text(&r.unwrap())["title"], "Project Roadmap");
    }
    assert!(start.elapsed() < Duration::from_millis(300));
    assert_eq!(client.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_update_evicts_the_cached_page() {
    let (srv, client) = setup();
    let mut p = common::connect_as(&srv, ERAS[0]).await;
    common::read(&mut p, "notion://pages/abc123").await;
    common::read(&mut p, "notion://pages/abc123").await;
    assert_eq!(client.calls(), 1);
    srv.changes().updated("notion://pages/abc123");
    let start = tokio::time::Instant::now();
    common::read(&mut p, "notion://pages/abc123").await;
    assert!(start.elapsed() >= LATENCY);
    assert_eq!(client.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn page_ids_complete() {
    for v in ERAS {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let params = |value: &str| json!({"ref": {"type": "ref/resource", "uri": "notion://pages/{pageId}"}, "argument": {"name": "pageId", "value": value}});
        let all = p.call("completion/complete", params("")).await;
        assert_eq!(
            all["result"]["completion"]["values"],
            json!(["abc123", "def456"])
        );
        let some = p.call("completion/complete", params("d")).await;
        assert_eq!(some["result"]["completion"]["values"], json!(["def456"]));
    }
}

#[tokio::test(start_paused = true)]
async fn pages_appear_in_the_listing_with_their_titles() {
    for v in ERAS {
        let (srv, _) = setup();
        let mut p = common::connect_as(&srv, v).await;
        let list = p.call("resources/list", json!({})).await;
        let resources = list["result"]["resources"].as_array().unwrap();
        let pages: Vec<(&str, &str)> = resources
            .iter()
            .filter(|r| r["uri"].as_str().unwrap().starts_with("notion://pages/"))
            .map(|r| (r["uri"].as_str().unwrap(), r["title"].as_str().unwrap()))
            .collect();
        assert_eq!(
            pages,
            [
                ("notion://pages/abc123", "Project Roadmap"),
                ("notion://pages/def456", "Launch Checklist")
            ]
        );
        assert!(
            resources
                .iter()
                .any(|r| r["uri"] == "notion://workspace/info")
        );
        let templates = p.call("resources/templates/list", json!({})).await;
        assert_eq!(
            templates["result"]["resourceTemplates"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}
