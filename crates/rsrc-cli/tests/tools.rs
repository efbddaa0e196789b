//! `rsrc serve --tools`: a served directory reached through tools alone, as a host whose
//! model only calls tools would; without the flag there are no tools.

mod common;

use common::spawn_stdio;
use rsrc::protocol::ProtocolVersion;
use serde_json::json;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/meeting.md"), "# Budget meeting\n").unwrap();
    std::fs::write(
        dir.path().join("report.pdf"),
        rsrc_testkit::fixtures::pdf("Quarterly Report"),
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn a_served_directory_is_searched_and_read_through_tools() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let (_child, mut peer) = spawn_stdio(&["serve", "--tools", "--tools-max-text", "5", root]);
    peer.begin(ProtocolVersion::V2025_11_25).await;
    let tools = peer.call("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 4);

    let found = peer
        .call(
            "tools/call",
            json!({"name": "search_resources", "arguments": {"query": "meeting"}}),
        )
        .await;
    let hits = &found["result"]["structuredContent"]["resources"];
    assert_eq!(hits[0]["uri"], "file:///notes/meeting.md", "{found}");

    let read = peer
        .call(
            "tools/call",
            json!({"name": "read_resource", "arguments": {"uri": "file:///notes/meeting.md"}}),
        )
        .await;
    let result = &read["result"];
    assert_eq!(result["content"][0]["resource"]["text"], "# Bud");
    assert_eq!(result["structuredContent"]["nextOffset"], 5);

    // The PDF's extracted text (from the conversion worker) is what a model reads.
    let pdf = peer
        .call(
            "tools/call",
            json!({"name": "read_resource", "arguments": {"uri": "file:///report.pdf", "length": 5}}),
        )
        .await;
    assert_eq!(
        pdf["result"]["content"][0]["resource"]["mimeType"],
        "text/plain"
    );
    assert_eq!(
        pdf["result"]["structuredContent"]["formats"],
        json!(["application/pdf", "text/plain"])
    );
}

#[tokio::test]
async fn without_the_flag_there_are_no_tools() {
    let dir = tree();
    let (_child, mut peer) = spawn_stdio(&["serve", dir.path().to_str().unwrap()]);
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    assert!(init["capabilities"].get("tools").is_none(), "{init}");
    let tools = peer.call("tools/list", json!({})).await;
    assert_eq!(tools["error"]["code"], -32601);
}

/// The review's reproduction: `tools = false` sources read through the tools with a
/// percent-encoded letter in their name. The resource methods serve those URIs (the
/// providers decode them); the tools answer as for missing resources.
#[tokio::test]
async fn a_source_with_tools_false_is_not_read_through_an_encoded_spelling() {
    let dir = tempfile::tempdir().unwrap();
    for root in ["secret", "open"] {
        std::fs::create_dir(dir.path().join(root)).unwrap();
        std::fs::write(dir.path().join(root).join("key.txt"), root).unwrap();
    }
    for db in ["shop", "other"] {
        rusqlite::Connection::open(dir.path().join(format!("{db}.db")))
            .unwrap()
            .execute_batch(
                "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);
                 INSERT INTO items VALUES (1, 'x');",
            )
            .unwrap();
    }
    let file = dir.path().join("rsrc.toml");
    std::fs::write(
        &file,
        "watch = false\n[tools]\nenabled = true\n\
         [[sources]]\npath = \"secret\"\ntools = false\n\
         [[sources]]\npath = \"open\"\n\
         [[sources]]\nsqlite = \"shop.db\"\ntools = false\n\
         [[sources]]\nsqlite = \"other.db\"\n",
    )
    .unwrap();
    let (_child, mut peer) = spawn_stdio(&["serve", "--config", file.to_str().unwrap()]);
    peer.begin(ProtocolVersion::V2025_11_25).await;
    for uri in ["file:///%73ecret/key.txt", "db://%73hop/items/1"] {
        let direct = peer.call("resources/read", json!({"uri": uri})).await;
        assert!(direct["result"]["contents"].is_array(), "{uri}: {direct}");
        let tool = peer
            .call(
                "tools/call",
                json!({"name": "read_resource", "arguments": {"uri": uri}}),
            )
            .await;
        assert_eq!(tool["result"]["isError"], true, "{uri}: {tool}");
        assert!(
            tool["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("not found"),
            "{tool}"
        );
    }
    for uri in ["file:///open/key.txt", "db://other/items/1"] {
        let tool = peer
            .call(
                "tools/call",
                json!({"name": "read_resource", "arguments": {"uri": uri}}),
            )
            .await;
        assert_ne!(tool["result"]["isError"], true, "{uri}: {tool}");
    }
}
