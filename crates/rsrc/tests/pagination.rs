//! Sealed keyset cursors: complete walks without duplicates across providers, and every
//! kind of bad cursor refused with -32602.

mod common;

use std::collections::HashSet;

use rsrc::ServerConfig;
use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{connect, server_with};

async fn small_pages(page_size: usize) -> Peer {
    let mut peer = connect(&server_with(ServerConfig {
        page_size,
        ..ServerConfig::default()
    }));
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

async fn walk(peer: &mut Peer, params: Value) -> (Vec<String>, usize) {
    let mut uris = Vec::new();
    let mut pages = 0;
    let mut params = params;
    loop {
        let resp = peer.request("resources/list", params.clone()).await;
        let result = &resp["result"];
        pages += 1;
        for r in result["resources"].as_array().expect("a page") {
            uris.push(r["uri"].as_str().unwrap().to_owned());
        }
        match result.get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => return (uris, pages),
        }
        assert!(pages < 100, "cursor loop");
    }
}

#[tokio::test]
async fn a_walk_visits_every_resource_of_every_provider_once() {
    let mut peer = small_pages(4).await;
    let (uris, pages) = walk(&mut peer, json!({})).await;
    let unique: HashSet<&String> = uris.iter().collect();
    assert_eq!(unique.len(), uris.len(), "no duplicates");
    // 14 sample resources + 25 numbers, 4 per page, pages filled across providers.
    assert_eq!(uris.len(), 39);
    assert_eq!(pages, 10);
    assert!(uris.iter().take(14).all(|u| u.starts_with("sample:")));
    assert!(uris.iter().skip(14).all(|u| u.starts_with("num:")));
}

#[tokio::test]
async fn a_collection_walk_is_paginated_too() {
    let mut peer = small_pages(2).await;
    let (uris, pages) = walk(&mut peer, json!({"uri": "sample:///guide"})).await;
    assert_eq!(
        uris,
        [
            "sample:///guide/a.md",
            "sample:///guide/b.md",
            "sample:///guide/deep"
        ]
    );
    assert_eq!(pages, 2);
}

#[tokio::test]
async fn forged_truncated_and_foreign_cursors_are_invalid_params() {
    let mut peer = small_pages(2).await;
    let first = peer.request("resources/list", json!({})).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let children = peer
        .request("resources/list", json!({"uri": "sample:///guide"}))
        .await;
    let child_cursor = children["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut flipped = cursor.clone().into_bytes();
    let last = flipped.len() - 3;
    flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
    let other_server = {
        let mut other = small_pages(2).await;
        let r = other.request("resources/list", json!({})).await;
        r["result"]["nextCursor"].as_str().unwrap().to_owned()
    };
    for (what, params) in [
        ("truncated", json!({"cursor": &cursor[..cursor.len() - 4]})),
        (
            "flipped",
            json!({"cursor": String::from_utf8(flipped).unwrap()}),
        ),
        ("garbage", json!({"cursor": "eyJwYWdlIjogMn0="})),
        ("empty", json!({"cursor": ""})),
        ("huge", json!({"cursor": "A".repeat(100_000)})),
        ("other collection", json!({"cursor": &child_cursor})),
        ("other server", json!({"cursor": other_server})),
        (
            "default list cursor on a collection",
            json!({"uri": "sample:///guide", "cursor": &cursor}),
        ),
        ("not a string", json!({"cursor": 5})),
    ] {
        let resp = peer.request("resources/list", params).await;
        assert_eq!(resp["error"]["code"], -32602, "{what}: {resp}");
    }
    let templates = peer
        .request("resources/templates/list", json!({"cursor": &cursor}))
        .await;
    assert_eq!(
        templates["error"]["code"], -32602,
        "a list cursor on templates"
    );
    // The genuine cursor still works.
    let ok = peer
        .request("resources/list", json!({"cursor": cursor}))
        .await;
    assert!(ok["result"]["resources"].is_array());
}
