//! resources/list, read, metadata, templates/list, directory/read and completion, on every
//! revision, with SEP-2093's metadata and multi-content rules.

mod common;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{PNG, connect, server};

/// A peer that speaks `v`, initialized if `v` is legacy.
async fn peer(v: ProtocolVersion) -> Peer {
    let mut peer = connect(&server());
    if v.is_modern() {
        peer.speak(v);
    } else {
        peer.initialize(v).await;
    }
    peer
}

async fn call(peer: &mut Peer, method: &str, params: Value) -> Value {
    if peer.revision().is_modern() {
        peer.modern(method, params).await
    } else {
        peer.request(method, params).await
    }
}

#[tokio::test]
async fn listing_gives_every_resource_with_both_spellings_of_its_kind() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let resp = call(&mut p, "resources/list", json!({})).await;
        let resources = resp["result"]["resources"].as_array().unwrap();
        let uris: Vec<&str> = resources
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert!(uris.contains(&"sample:///README.md"));
        assert!(
            uris.contains(&"sample:///guide/deep/c.md"),
            "the default listing is recursive"
        );
        let guide = resources
            .iter()
            .find(|r| r["uri"] == "sample:///guide")
            .unwrap();
        assert_eq!(guide["resourceType"], "collection");
        assert_eq!(guide["capabilities"]["list"], true);
        assert_eq!(guide["mimeType"], "inode/directory");
        let readme = resources
            .iter()
            .find(|r| r["uri"] == "sample:///README.md")
            .unwrap();
        assert_eq!(readme["resourceType"], "document");
        assert!(
            readme.get("capabilities").is_none(),
            "a document's capabilities say nothing more"
        );
        assert_eq!(readme["size"], 9);
        assert_eq!(
            readme["annotations"]["lastModified"],
            "2025-01-12T15:00:58Z"
        );
        if v.is_modern() {
            assert_eq!(resp["result"]["resultType"], "complete");
            assert_eq!(resp["result"]["ttlMs"], 0);
            assert_eq!(resp["result"]["cacheScope"], "private");
        } else {
            assert!(resp["result"].get("ttlMs").is_none());
        }
    }
}

#[tokio::test]
async fn listing_a_collection_gives_its_direct_children_only() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let resp = call(&mut p, "resources/list", json!({"uri": "sample:///guide"})).await;
        let uris = common::listed_uris(&resp);
        assert_eq!(
            uris,
            [
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep"
            ]
        );
        let empty = call(&mut p, "resources/list", json!({"uri": "sample:///empty"})).await;
        assert_eq!(empty["result"]["resources"], json!([]));
        let dir = call(
            &mut p,
            "resources/directory/read",
            json!({"uri": "sample:///guide/deep"}),
        )
        .await;
        assert_eq!(
            dir["result"]["resources"][0]["uri"],
            "sample:///guide/deep/c.md"
        );
    }
}

#[tokio::test]
async fn listing_a_document_or_a_missing_uri_is_an_error() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let doc = call(
            &mut p,
            "resources/list",
            json!({"uri": "sample:///README.md"}),
        )
        .await;
        assert_eq!(doc["error"]["code"], -32602, "{doc}");
        assert_eq!(doc["error"]["data"]["uri"], "sample:///README.md");
        let missing = call(&mut p, "resources/list", json!({"uri": "sample:///nope"})).await;
        let not_found = if v.is_modern() { -32602 } else { -32002 };
        assert_eq!(missing["error"]["code"], not_found, "{missing}");
        assert_eq!(missing["error"]["data"]["uri"], "sample:///nope");
        let no_uri = call(&mut p, "resources/directory/read", json!({})).await;
        assert_eq!(no_uri["error"]["code"], -32602);
    }
}

#[tokio::test]
async fn reading_text_gives_full_metadata() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let resp = call(
            &mut p,
            "resources/read",
            json!({"uri": "sample:///README.md"}),
        )
        .await;
        let contents = resp["result"]["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1);
        let c = &contents[0];
        assert_eq!(c["uri"], "sample:///README.md");
        assert_eq!(c["name"], "README.md");
        assert_eq!(c["title"], "Read me");
        assert_eq!(c["mimeType"], "text/markdown");
        assert_eq!(c["size"], 9);
        assert_eq!(c["text"], "# Sample\n");
        assert_eq!(c["resourceType"], "document");
        assert_eq!(c["annotations"]["lastModified"], "2025-01-12T15:00:58Z");
    }
}

#[tokio::test]
async fn reading_binary_gives_base64() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let resp = p
        .request("resources/read", json!({"uri": "sample:///logo.png"}))
        .await;
    let c = &resp["result"]["contents"][0];
    assert_eq!(c["mimeType"], "image/png");
    assert!(c.get("text").is_none());
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(c["blob"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, PNG);
    assert_eq!(c["size"], PNG.len());
}

#[tokio::test]
async fn format_alternatives_share_the_uri_and_carry_their_own_size() {
    let mut p = peer(ProtocolVersion::V2026_07_28).await;
    let resp = p
        .modern("resources/read", json!({"uri": "sample:///report.pdf"}))
        .await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2);
    assert!(contents.iter().all(|c| c["uri"] == "sample:///report.pdf"));
    assert!(contents.iter().all(|c| c["name"] == "Quarterly Report"));
    assert_eq!(contents[0]["mimeType"], "application/pdf");
    assert_eq!(contents[0]["size"], 13);
    assert!(contents[0]["blob"].is_string());
    assert_eq!(contents[1]["mimeType"], "text/plain");
    assert_eq!(contents[1]["size"], 14);
    assert_eq!(contents[1]["text"], "Extracted text");
}

#[tokio::test]
async fn reading_a_collection_returns_child_documents() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let resp = p
        .request("resources/read", json!({"uri": "sample:///guide"}))
        .await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    let uris: Vec<&str> = contents
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["sample:///guide/a.md", "sample:///guide/b.md"]);
    assert_eq!(contents[1]["text"], "BB");
    let empty = p
        .request("resources/read", json!({"uri": "sample:///empty"}))
        .await;
    assert_eq!(empty["result"]["contents"], json!([]));
}

#[tokio::test]
async fn reading_a_missing_resource_is_not_found_with_its_uri_never_empty_contents() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        for uri in ["sample:///missing.txt", "other:///unmounted"] {
            let resp = call(&mut p, "resources/read", json!({"uri": uri})).await;
            assert!(resp.get("result").is_none(), "{resp}");
            let code = if v.is_modern() { -32602 } else { -32002 };
            assert_eq!(resp["error"]["code"], code);
            assert_eq!(resp["error"]["data"]["uri"], uri);
        }
    }
}

#[tokio::test]
async fn malformed_uris_and_params_are_invalid_params() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    for params in [
        json!({}),
        json!({"uri": 5}),
        json!({"uri": ""}),
        json!({"uri": "no scheme"}),
        json!({"uri": "sample:///a b"}),
        json!({"uri": "sample:///%zz"}),
        json!({"uri": format!("sample:///{}", "a".repeat(17000))}),
    ] {
        let resp = p.request("resources/read", params.clone()).await;
        assert_eq!(resp["error"]["code"], -32602, "{params}: {resp}");
    }
}

#[tokio::test]
async fn duplicate_params_members_are_invalid_params() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    p.send_raw(br#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"sample:///README.md","uri":"sample:///logo.png"}}
"#)
    .await;
    let resp = p.recv().await;
    assert_eq!(resp["id"], 9);
    assert_eq!(resp["error"]["code"], -32602);
}

#[tokio::test]
async fn metadata_is_the_listing_metadata_without_content() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let resp = call(
            &mut p,
            "resources/metadata",
            json!({"uri": "sample:///logo.png"}),
        )
        .await;
        let r = &resp["result"]["resource"];
        assert_eq!(r["uri"], "sample:///logo.png");
        assert_eq!(r["size"], PNG.len());
        assert_eq!(r["resourceType"], "document");
        assert!(r.get("blob").is_none() && r.get("text").is_none());
        let missing = call(
            &mut p,
            "resources/metadata",
            json!({"uri": "sample:///nope"}),
        )
        .await;
        assert_eq!(missing["error"]["data"]["uri"], "sample:///nope");
    }
}

#[tokio::test]
async fn templates_are_listed_with_caching_hints_on_2026() {
    let mut p = peer(ProtocolVersion::V2026_07_28).await;
    let resp = p.modern("resources/templates/list", json!({})).await;
    assert_eq!(
        resp["result"]["resourceTemplates"][0]["uriTemplate"],
        "num:///{n}"
    );
    assert_eq!(resp["result"]["cacheScope"], "public");
    assert_eq!(resp["result"]["ttlMs"], 300_000);
}

#[tokio::test]
async fn completion_asks_the_provider_of_the_template_and_caps_values() {
    for v in ProtocolVersion::ALL {
        let mut p = peer(v).await;
        let resp = call(
            &mut p,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "num:///{n}"}, "argument": {"name": "n", "value": "00001"}}),
        )
        .await;
        let c = &resp["result"]["completion"];
        assert_eq!(c["values"].as_array().unwrap().len(), 10);
        assert_eq!(c["total"], 10);
        assert_eq!(c["hasMore"], false);
        let unknown = call(
            &mut p,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "nope:///{x}"}, "argument": {"name": "x", "value": ""}}),
        )
        .await;
        assert_eq!(unknown["error"]["code"], -32602);
        let prompt = call(
            &mut p,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "x", "value": ""}}),
        )
        .await;
        assert_eq!(prompt["error"]["code"], -32602);
    }
}

#[tokio::test]
async fn an_iri_reaches_the_resource_of_its_percent_encoded_uri() {
    let set = rsrc::ResourceSet::new()
        .with_text(
            rsrc::protocol::Resource::new("x:///caf%C3%A9.md", "café.md"),
            "crème",
        )
        .with_subscriptions();
    let srv = rsrc::Server::builder("t", "0")
        .mount("x:", set)
        .build()
        .unwrap();
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut p = common::connect_as(&srv, v).await;
        let by_iri = common::read(&mut p, "x:///café.md").await;
        let by_uri = common::read(&mut p, "x:///caf%C3%A9.md").await;
        assert_eq!(by_iri["result"]["contents"][0]["text"], "crème", "{by_iri}");
        assert_eq!(by_iri["result"]["contents"], by_uri["result"]["contents"]);
        let meta = p
            .call("resources/metadata", json!({"uri": "x:///café.md"}))
            .await;
        assert_eq!(meta["result"]["resource"]["uri"], "x:///caf%C3%A9.md");
        // Characters invalid in both URIs and IRIs stay invalid params: a backslash, a
        // bidirectional override (it would display as another name), a C1 control.
        for bad in ["x:///a\\b.md", "x:///\u{202E}dm.exe", "x:///a\u{85}"] {
            let r = common::read(&mut p, bad).await;
            assert_eq!(r["error"]["code"], -32602, "{bad:?}: {r}");
        }
    }
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let sub = p
        .request("resources/subscribe", json!({"uri": "x:///café.md"}))
        .await;
    assert!(sub["result"].is_object(), "{sub}");
    srv.changes().updated("x:///caf%C3%A9.md");
    let notes = p.drain(std::time::Duration::from_millis(200)).await;
    assert!(
        notes
            .iter()
            .any(|n| n["params"]["uri"] == "x:///caf%C3%A9.md"),
        "the subscription holds the URI, so the provider's change reaches it: {notes:?}"
    );
}

#[tokio::test]
async fn large_texts_stream_whole_on_their_own_lines_between_other_replies() {
    // Over the streaming threshold (1 MiB), with escapes and multi-byte characters that
    // the pieces cut through.
    let big = "line \"one\"\twith déjà vu 東京 \\ and a control \u{1}\n".repeat(40_000);
    let set = rsrc::ResourceSet::new()
        .with_text(
            rsrc::protocol::Resource::new("big:///a.txt", "a.txt"),
            big.clone(),
        )
        .with_text(
            rsrc::protocol::Resource::new("big:///b.txt", "b.txt"),
            "small",
        );
    let server = rsrc::Server::builder("rsrc-test", "0.0.0")
        .mount("big:", set)
        .build()
        .unwrap();
    let mut peer = connect(&server);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    // Sent together, so that the small replies are ready while the large ones stream.
    for (id, uri) in [
        (1, "big:///a.txt"),
        (2, "big:///b.txt"),
        (3, "big:///a.txt"),
        (4, "big:///b.txt"),
    ] {
        peer.send(json!({"jsonrpc":"2.0","id":id,"method":"resources/read","params":{"uri":uri}}))
            .await;
    }
    let mut texts = std::collections::BTreeMap::new();
    for _ in 0..4 {
        let reply = peer.recv().await;
        let id = reply["id"].as_i64().unwrap();
        let text = reply["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        texts.insert(id, text);
    }
    assert_eq!(texts.len(), 4, "one reply per request");
    assert!(
        texts[&1] == big && texts[&3] == big,
        "the large texts arrive whole"
    );
    assert_eq!((texts[&2].as_str(), texts[&4].as_str()), ("small", "small"));
}
