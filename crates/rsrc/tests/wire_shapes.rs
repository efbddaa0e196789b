//! The shape of every kind of result and error on the wire, in each era, as snapshots:
//! what a client sees, member for member. Each message is validated against the official
//! schema of its revision by the peer before it is snapshotted; the server's version is
//! redacted so a release does not change the snapshots.

mod common;

use insta::assert_json_snapshot;
use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{connect, server};

async fn legacy() -> (Peer, Value) {
    let mut peer = connect(&server());
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    (peer, init)
}

fn modern() -> Peer {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    peer
}

#[tokio::test]
async fn initialize_result() {
    let (_, init) = legacy().await;
    assert_json_snapshot!(init, {".result.serverInfo.version" => "[version]"});
}

#[tokio::test]
async fn discover_result() {
    let mut peer = modern();
    let resp = peer.modern("server/discover", json!({})).await;
    assert_json_snapshot!(resp, {".result._meta.*.version" => "[version]"});
}

#[tokio::test]
async fn a_page_of_children_in_both_eras() {
    let (mut old, _) = legacy().await;
    let resp = old
        .request("resources/list", json!({"uri": "sample:///guide"}))
        .await;
    assert_json_snapshot!("children_2025", resp);
    let mut new = modern();
    let resp = new
        .modern("resources/list", json!({"uri": "sample:///guide"}))
        .await;
    assert_json_snapshot!("children_2026", resp, {".result._meta.*.version" => "[version]"});
}

#[tokio::test]
async fn reads_of_text_blob_and_format_alternatives() {
    let (mut peer, _) = legacy().await;
    for (name, uri) in [
        ("read_text", "sample:///README.md"),
        ("read_blob", "sample:///logo.png"),
        ("read_alternatives", "sample:///report.pdf"),
    ] {
        let resp = peer.request("resources/read", json!({"uri": uri})).await;
        assert_json_snapshot!(name, resp);
    }
    let mut new = modern();
    let resp = new
        .modern("resources/read", json!({"uri": "sample:///README.md"}))
        .await;
    assert_json_snapshot!("read_text_2026", resp, {".result._meta.*.version" => "[version]"});
}

#[tokio::test]
async fn metadata_and_templates() {
    let mut peer = modern();
    let resp = peer
        .modern("resources/metadata", json!({"uri": "sample:///guide"}))
        .await;
    assert_json_snapshot!("metadata_2026", resp, {".result._meta.*.version" => "[version]"});
    let (mut old, _) = legacy().await;
    let resp = old.request("resources/templates/list", json!({})).await;
    assert_json_snapshot!("templates_2025", resp);
}

#[tokio::test]
async fn not_found_in_both_eras() {
    let (mut old, _) = legacy().await;
    let resp = old
        .request("resources/read", json!({"uri": "sample:///missing"}))
        .await;
    assert_json_snapshot!("not_found_2025", resp);
    let mut new = modern();
    let resp = new
        .modern("resources/read", json!({"uri": "sample:///missing"}))
        .await;
    assert_json_snapshot!("not_found_2026", resp);
}
