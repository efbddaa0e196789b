//! Version negotiation and the lifecycle gate, on both eras, over raw JSON.

mod common;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::modern_meta;
use serde_json::json;

use common::{connect, server};

#[tokio::test]
async fn initialize_answers_with_the_requested_legacy_revision() {
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let mut peer = connect(&server());
        let result = peer.initialize(v).await;
        assert_eq!(result["protocolVersion"], v.as_str());
        assert_eq!(result["serverInfo"]["name"], "rsrc-test");
        assert_eq!(result["instructions"], "test server");
        assert!(result["capabilities"]["resources"].is_object());
        let pong = peer.request("ping", json!(null)).await;
        assert_eq!(pong["result"], json!({}));
    }
}

#[tokio::test]
async fn initialize_with_an_unknown_or_modern_revision_falls_back_to_the_newest_legacy_one() {
    for requested in ["2024-11-05", "2025-03-26", "2026-07-28", "banana"] {
        let mut peer = connect(&server());
        let resp = peer
            .request(
                "initialize",
                json!({"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
            )
            .await;
        assert_eq!(
            resp["result"]["protocolVersion"], "2025-11-25",
            "{requested}"
        );
    }
}

#[tokio::test]
async fn a_second_initialize_is_refused() {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_06_18).await;
    let resp = peer
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32600);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized")
    );
}

#[tokio::test]
async fn initialize_without_a_protocol_version_is_invalid_params() {
    let mut peer = connect(&server());
    let resp = peer
        .request("initialize", json!({"capabilities": {}}))
        .await;
    assert_eq!(resp["error"]["code"], -32602);
    // And the session is still uninitialized: a proper initialize works.
    peer.initialize(ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn only_ping_is_served_before_initialize() {
    let mut peer = connect(&server());
    let pong = peer.request("ping", json!(null)).await;
    assert_eq!(pong["result"], json!({}));
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "logging/setLevel",
    ] {
        let resp = peer
            .request(
                method,
                json!({"uri": "sample:///README.md", "level": "info"}),
            )
            .await;
        assert_eq!(resp["error"]["code"], -32600, "{method}: {resp}");
        assert!(
            resp["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize")
        );
    }
}

#[tokio::test]
async fn a_modern_request_first_on_the_stream_is_served_statelessly() {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    let resp = peer.modern("server/discover", json!({})).await;
    let result = &resp["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18"])
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "rsrc-test"
    );
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().unwrap() > 0);
    let list = peer.modern("resources/list", json!({})).await;
    assert!(!list["result"]["resources"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn both_eras_are_served_on_one_stream() {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_06_18).await;
    let legacy = peer
        .request("resources/read", json!({"uri": "sample:///clock"}))
        .await;
    assert_eq!(
        legacy["result"]["contents"][0]["text"],
        "revision 2025-06-18"
    );
    assert!(legacy["result"].get("resultType").is_none());
    peer.speak(ProtocolVersion::V2026_07_28);
    let modern = peer
        .modern("resources/read", json!({"uri": "sample:///clock"}))
        .await;
    assert_eq!(
        modern["result"]["contents"][0]["text"],
        "revision 2026-07-28"
    );
    assert_eq!(modern["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_modern_request_without_client_capabilities_is_invalid_params() {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    let resp = peer
        .request(
            "resources/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32602);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    let resp = peer
        .request(
            "resources/list",
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32602);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
}

#[tokio::test]
async fn server_discover_without_meta_is_invalid_params() {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    let resp = peer.request("server/discover", json!({})).await;
    assert_eq!(resp["error"]["code"], -32602);
}

#[tokio::test]
async fn an_unsupported_protocol_version_is_refused_with_the_supported_list() {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let resp = peer.request("resources/list", json!({"_meta": meta})).await;
    assert_eq!(resp["error"]["code"], -32022);
    assert_eq!(resp["error"]["data"]["requested"], "1900-01-01");
    assert!(
        resp["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
}

#[tokio::test]
async fn a_legacy_revision_in_meta_before_initialize_is_refused() {
    let mut peer = connect(&server());
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let resp = peer.request("resources/list", json!({"_meta": meta})).await;
    assert_eq!(resp["error"]["code"], -32600);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
}

#[tokio::test]
async fn methods_removed_in_2026_are_not_found_there() {
    let mut peer = connect(&server());
    peer.speak(ProtocolVersion::V2026_07_28);
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let resp = peer
            .modern(
                method,
                json!({"uri": "sample:///README.md", "level": "info"}),
            )
            .await;
        assert_eq!(resp["error"]["code"], -32601, "{method}: {resp}");
    }
}

#[tokio::test]
async fn modern_only_methods_are_not_found_in_a_legacy_session() {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    for method in ["server/discover", "subscriptions/listen"] {
        let resp = peer.request(method, json!({"notifications": {}})).await;
        assert_eq!(resp["error"]["code"], -32601, "{method}: {resp}");
    }
}

#[tokio::test]
async fn unknown_methods_are_not_found_with_the_request_id_in_every_revision() {
    for v in ProtocolVersion::ALL {
        let mut peer = connect(&server());
        if v.is_modern() {
            peer.speak(v);
            peer.send(json!({"jsonrpc":"2.0","id":"x-1","method":"tools/list","params":{"_meta": modern_meta()}}))
                .await;
        } else {
            peer.initialize(v).await;
            peer.send(json!({"jsonrpc":"2.0","id":"x-1","method":"tools/list"}))
                .await;
        }
        let resp = peer.recv().await;
        assert_eq!(resp["id"], "x-1");
        assert_eq!(resp["error"]["code"], -32601);
    }
}

#[tokio::test]
async fn set_level_is_accepted_and_validated_in_legacy_sessions() {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let ok = peer
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    let bad = peer
        .request("logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn subscriptions_are_refused_while_not_offered() {
    let mut peer = connect(&server());
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    assert!(init["capabilities"]["resources"].get("subscribe").is_none());
    let resp = peer
        .request("resources/subscribe", json!({"uri": "sample:///README.md"}))
        .await;
    assert_eq!(resp["error"]["code"], -32601);
}
