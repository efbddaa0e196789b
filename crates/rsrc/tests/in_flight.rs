//! Requests in flight: cancellation, progress, panics, concurrency and duplicate ids.

mod common;

use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::{Peer, modern_meta};
use serde_json::json;

use common::{connect, server};

async fn ready_peer() -> Peer {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

#[tokio::test]
async fn a_cancelled_request_gets_no_response_and_others_are_unaffected() {
    for modern in [false, true] {
        let mut peer = ready_peer().await;
        let mut params = json!({"uri": "sample:///slow"});
        if modern {
            peer.speak(ProtocolVersion::V2026_07_28);
            params["_meta"] = modern_meta();
        }
        // The cancellation follows the request on the same stream: it finds it running.
        peer.send(json!({"jsonrpc":"2.0","id":"slow-1","method":"resources/read","params":params}))
            .await;
        peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user"}}))
            .await;
        let mut read = json!({"uri": "sample:///README.md"});
        if modern {
            read["_meta"] = modern_meta();
        }
        let resp = peer.request("resources/read", read).await;
        assert_eq!(resp["result"]["contents"][0]["text"], "# Sample\n");
        // The slow read would have finished after ~2 s; nothing about it must arrive.
        peer.expect_silence(Duration::from_millis(2500)).await;
    }
}

#[tokio::test]
async fn the_id_of_a_cancelled_request_can_be_reused() {
    let mut peer = ready_peer().await;
    peer.send(
        json!({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"sample:///slow"}}),
    )
    .await;
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}))
        .await;
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"sample:///README.md"}}))
        .await;
    let resp = peer.recv().await;
    assert_eq!(resp["id"], 1);
    assert_eq!(resp["result"]["contents"][0]["uri"], "sample:///README.md");
}

#[tokio::test]
async fn progress_is_reported_before_the_response_when_a_token_is_given() {
    let mut peer = ready_peer().await;
    let resp = peer
        .request(
            "resources/read",
            json!({"uri": "sample:///progress", "_meta": {"progressToken": "tok"}}),
        )
        .await;
    assert_eq!(resp["result"]["contents"][0]["text"], "ok");
    let notes = peer.take_notifications();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes
            .iter()
            .all(|n| n["method"] == "notifications/progress")
    );
    assert_eq!(notes[0]["params"]["progressToken"], "tok");
    assert_eq!(notes[0]["params"]["progress"], 1.0);
    assert_eq!(notes[1]["params"]["progress"], 2.0);
    assert_eq!(notes[1]["params"]["total"], 2.0);
    assert_eq!(notes[1]["params"]["message"], "done");
    // Without a token: no progress.
    peer.request("resources/read", json!({"uri": "sample:///progress"}))
        .await;
    assert!(peer.take_notifications().is_empty());
}

#[tokio::test]
async fn a_panicking_provider_fails_only_its_request() {
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let mut peer = connect(&server());
        let meta = if v.is_modern() {
            peer.speak(v);
            modern_meta()
        } else {
            peer.initialize(v).await;
            json!({})
        };
        let resp = peer
            .request(
                "resources/read",
                json!({"uri": "sample:///panic", "_meta": meta}),
            )
            .await;
        assert_eq!(resp["error"]["code"], -32603);
        assert!(
            !resp["error"]["message"]
                .as_str()
                .unwrap()
                .contains("provider bug")
        );
        let ok = peer
            .request(
                "resources/read",
                json!({"uri": "sample:///README.md", "_meta": meta}),
            )
            .await;
        assert!(ok["result"].is_object());
    }
}

#[tokio::test]
async fn requests_run_concurrently_and_answer_as_they_finish() {
    let mut peer = ready_peer().await;
    peer.send(json!({"jsonrpc":"2.0","id":"slow","method":"resources/read","params":{"uri":"sample:///slow"}}))
        .await;
    for i in 0..50 {
        peer.send(json!({"jsonrpc":"2.0","id":i,"method":"resources/read","params":{"uri":"sample:///README.md"}}))
            .await;
    }
    for i in 0..50 {
        let resp = peer.recv().await;
        assert_eq!(resp["id"], i, "fast reads are not held behind the slow one");
    }
    let slow = peer.recv().await;
    assert_eq!(slow["id"], "slow");
}

#[tokio::test]
async fn a_duplicate_id_in_flight_is_refused() {
    let mut peer = ready_peer().await;
    peer.send(
        json!({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"sample:///slow"}}),
    )
    .await;
    peer.send(json!({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"sample:///README.md"}}))
        .await;
    let resp = peer.recv().await;
    assert_eq!(resp["id"], 5);
    assert_eq!(resp["error"]["code"], -32600);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in flight")
    );
}

#[tokio::test]
async fn closing_the_input_finishes_what_is_in_flight_then_ends_the_stream() {
    let mut peer = ready_peer().await;
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"sample:///progress"}}))
        .await;
    peer.close().await;
    let resp = peer.recv().await;
    assert_eq!(resp["id"], 1);
    assert_eq!(peer.try_recv(Duration::from_secs(5)).await.unwrap(), None);
}

#[tokio::test]
async fn log_messages_follow_the_level_the_client_asked_for() {
    let mut peer = ready_peer().await;
    peer.request("resources/read", json!({"uri": "sample:///noisy"}))
        .await;
    assert!(
        peer.take_notifications().is_empty(),
        "no level set: no log messages"
    );
    peer.request("logging/setLevel", json!({"level": "warning"}))
        .await;
    peer.request("resources/read", json!({"uri": "sample:///noisy"}))
        .await;
    let notes = peer.take_notifications();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/message");
    assert_eq!(notes[0]["params"]["level"], "error");
    assert_eq!(notes[0]["params"]["logger"], "noisy");

    // 2026-07-28: per request, through _meta.
    peer.speak(ProtocolVersion::V2026_07_28);
    let mut meta = modern_meta();
    peer.request(
        "resources/read",
        json!({"uri": "sample:///noisy", "_meta": meta}),
    )
    .await;
    assert!(peer.take_notifications().is_empty());
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    peer.request(
        "resources/read",
        json!({"uri": "sample:///noisy", "_meta": meta}),
    )
    .await;
    assert_eq!(peer.take_notifications().len(), 2);
}
