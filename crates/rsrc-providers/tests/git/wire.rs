//! Completion and the 2026-07-28 wire: full metadata and raw JSON lines.
//!
//! Invariant: every message the server sends validates against the official schema.

use super::*;

#[tokio::test]
async fn refs_and_paths_complete() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let templates = peer.request("resources/templates/list", json!({})).await;
    let t = &templates["result"]["resourceTemplates"][0];
    assert_eq!(t["uriTemplate"], "git:///{ref}/{+path}");
    let complete = |arg: &str, value: &str, context: Value| {
        json!({"ref": {"type": "ref/resource", "uri": "git:///{ref}/{+path}"},
               "argument": {"name": arg, "value": value},
               "context": {"arguments": context}})
    };
    let values = |resp: &Value| resp["result"]["completion"]["values"].clone();
    let r = peer
        .request("completion/complete", complete("ref", "", json!({})))
        .await;
    assert_eq!(
        values(&r),
        json!(["HEAD", "feature/x", "main", "v1", "v1-annotated"])
    );
    let r = peer
        .request("completion/complete", complete("ref", "v", json!({})))
        .await;
    assert_eq!(values(&r), json!(["v1", "v1-annotated"]));
    let r = peer
        .request(
            "completion/complete",
            complete("path", "", json!({"ref": "main"})),
        )
        .await;
    assert_eq!(
        values(&r),
        json!([
            "README.md",
            "a/",
            "a-b.txt",
            "data/",
            "escape",
            "link-to-readme",
            "run.sh",
            "src/"
        ])
    );
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/", json!({"ref": "main"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/lib/", "src/main.rs"]));
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/m", json!({"ref": "feature/x"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/main.rs"]));
    // At the tag, src/lib does not exist yet.
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/", json!({"ref": "v1"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/main.rs"]));
    // Without a ref in the context, HEAD.
    let r = peer
        .request("completion/complete", complete("path", "d", json!({})))
        .await;
    assert_eq!(values(&r), json!(["data/"]));
    for (ctx, value) in [("--output=x", ""), ("main", "../"), ("HEAD~1", "")] {
        let r = peer
            .request(
                "completion/complete",
                complete("path", value, json!({"ref": ctx})),
            )
            .await;
        assert_eq!(values(&r), json!([]), "{ctx} {value}");
    }
}

#[tokio::test]
async fn metadata_on_the_2026_wire_is_full_and_validated() {
    let (f, first, second) = sample();
    let server = server_with(vec![GitProvider::open(f.path(), quiet()).unwrap()], 1000);
    let mut peer = modern_peer(&server).await;
    let meta = peer
        .modern(
            "resources/metadata",
            json!({"uri": "git:///main/src/main.rs"}),
        )
        .await;
    let r = &meta["result"]["resource"];
    assert_eq!(r["uri"], "git:///main/src/main.rs", "{meta}");
    assert_eq!(r["name"], "main.rs");
    assert_eq!(r["mimeType"], "text/x-rust");
    assert_eq!(r["size"], 13);
    assert_eq!(r["resourceType"], "document");
    assert_eq!(r["annotations"]["lastModified"], "2024-01-02T03:05:05Z");
    assert_eq!(r["_meta"][META_KEY]["commit"], second.to_string());
    assert_eq!(r["_meta"][META_KEY]["mode"], "100644");
    assert!(r["_meta"][META_KEY]["object"].as_str().unwrap().len() == 40);
    let branch = peer
        .modern("resources/metadata", json!({"uri": "git:///feature%2Fx"}))
        .await;
    let r = &branch["result"]["resource"];
    assert_eq!(r["resourceType"], "collection");
    assert_eq!(r["capabilities"]["list"], true);
    assert_eq!(r["name"], "feature/x");
    assert_eq!(r["description"], "first");
    assert_eq!(r["_meta"][META_KEY]["ref"], "refs/heads/feature/x");
    assert_eq!(r["_meta"][META_KEY]["commit"], first.to_string());
    let repo = peer
        .modern("resources/metadata", json!({"uri": "git:///"}))
        .await;
    assert_eq!(repo["result"]["resource"]["name"], "repo");
    assert_eq!(repo["result"]["resource"]["resourceType"], "collection");
    // A missing resource is a result error of its own kind on this revision.
    let missing = peer
        .modern(
            "resources/read",
            json!({"uri": "git:///--output=x/README.md"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(
        missing["error"]["data"]["uri"],
        "git:///--output=x/README.md"
    );
    // What a commit id names never changes: its reads may be cached.
    let pinned = peer
        .modern(
            "resources/read",
            json!({"uri": format!("git:///{first}/README.md")}),
        )
        .await;
    assert_eq!(pinned["result"]["ttlMs"], 3_600_000, "{pinned}");
    let moving = peer
        .modern("resources/read", json!({"uri": "git:///main/README.md"}))
        .await;
    assert_eq!(moving["result"]["ttlMs"], 0);
    let _ = FIRST_COMMIT_TIME;
}

#[tokio::test]
async fn raw_json_lines_get_schema_valid_answers() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    peer.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"resources/read\",\"params\":{\"uri\":\"git:///v1/README.md\"}}\n\
          {\"jsonrpc\":\"2.0\",\"id\":\"r2\",\"method\":\"resources/read\",\"params\":{\"uri\":\"git:///-c/README.md\"}}\n\
          {\"jsonrpc\":\"2.0\",\"id\":\"r3\",\"method\":\"resources/list\",\"params\":{\"uri\":\"git:///main/data\"}}\n",
    )
    .await;
    let mut got = std::collections::HashMap::new();
    for _ in 0..3 {
        let m = peer.recv().await;
        got.insert(m["id"].as_str().unwrap().to_owned(), m);
    }
    assert_eq!(got["r1"]["result"]["contents"][0]["text"], "# Project v1\n");
    assert!(is_not_found(&got["r2"], "git:///-c/README.md"));
    assert_eq!(
        uris(&got["r3"]),
        [
            "git:///main/data/blob.bin",
            "git:///main/data/image.png",
            "git:///main/data/nul.txt"
        ]
    );
}
