//! Streamable HTTP over real loopback sockets, 2026-07-28: requests without sessions,
//! mirrored headers, version and method errors, cancellation by closing a stream, and
//! subscriptions (listen streams, and a legacy session's GET stream). Every JSON-RPC
//! message the server sends is validated against the official schema by the `HttpPeer`.

#[path = "../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "common/http.rs"]
mod harness;

use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine as _;
use rsrc_http::HttpConfig;
use serde_json::{Value, json};

use harness::{CANCELLED, modern, read, standard, start, start_with, watched};

// ----- 2026-07-28: stateless -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_requests_need_no_session_and_get_none() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let discover = peer.modern_request("server/discover", json!({}));
    let res = peer.post(&discover).await;
    assert_eq!(res.status, 200);
    assert!(res.header("mcp-session-id").is_none());
    assert_eq!(res.json()["result"]["supportedVersions"][0], "2026-07-28");
    // A stray session header is ignored.
    peer.always("mcp-session-id", "whatever");
    let msg = read(&mut peer, "sample:///README.md");
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["result"]["contents"][0]["text"], "# Sample\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_headers_must_be_present_and_match_the_body() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let host = peer.host();
    let msg = read(&mut peer, "sample:///README.md");
    let body = serde_json::to_vec(&msg).unwrap();
    let id = msg["id"].clone();
    let base = || {
        let mut h = standard(&host);
        h.push(("mcp-protocol-version", "2026-07-28"));
        h
    };
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (base(), "missing Mcp-Method"),
        (
            [
                base(),
                vec![
                    ("mcp-method", "resources/list"),
                    ("mcp-name", "sample:///README.md"),
                ],
            ]
            .concat(),
            "method mismatch",
        ),
        (
            [base(), vec![("mcp-method", "resources/read")]].concat(),
            "missing Mcp-Name",
        ),
        (
            [
                base(),
                vec![
                    ("mcp-method", "resources/read"),
                    ("mcp-name", "sample:///other"),
                ],
            ]
            .concat(),
            "name mismatch",
        ),
    ];
    for (h, what) in cases {
        let res = peer.send("POST", &h, &body).await;
        assert_eq!(res.status, 400, "{what}");
        assert_eq!(res.error_code(), Some(-32020), "{what}");
        assert_eq!(res.json()["id"], id, "{what}: the error names the request");
    }
    let encoded = format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode("sample:///README.md")
    );
    let h = [
        base(),
        vec![
            ("mcp-method", "resources/read"),
            ("mcp-name", encoded.as_str()),
        ],
    ]
    .concat();
    let res = peer.send("POST", &h, &body).await;
    assert_eq!(res.status, 200, "base64 sentinel decoded first");
    // The header's version against the body's.
    let mut older = msg.clone();
    older["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let h = [
        base(),
        vec![
            ("mcp-method", "resources/read"),
            ("mcp-name", "sample:///README.md"),
        ],
    ]
    .concat();
    let res = peer
        .send("POST", &h, &serde_json::to_vec(&older).unwrap())
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.error_code(), Some(-32020));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_version_is_400_with_the_supported_list() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let host = peer.host();
    let mut msg = peer.modern_request("server/discover", json!({}));
    msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut h = standard(&host);
    h.extend([
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "server/discover"),
    ]);
    let res = peer
        .send("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(res.status, 400);
    let e = &res.json()["error"];
    assert_eq!(e["code"], -32022);
    assert_eq!(
        e["data"]["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18"])
    );
    assert_eq!(res.json()["id"], msg["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_removed_methods_are_404_with_32601() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    for method in [
        "tools/call",
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let msg = peer.modern_request(method, json!({"name": "x", "uri": "sample:///README.md"}));
        let res = peer.post(&msg).await;
        assert_eq!(res.status, 404, "{method}");
        assert_eq!(res.error_code(), Some(-32601), "{method}");
    }
    let mut bad = peer.modern_request("server/discover", json!({}));
    bad["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let res = peer.post(&bad).await;
    assert_eq!(res.status, 400, "a malformed request");
    assert_eq!(res.error_code(), Some(-32602));
    // An error from serving the request is a result of the request: 200.
    let missing = read(&mut peer, "sample:///nope");
    let res = peer.post(&missing).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.error_code(), Some(-32602));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_and_delete_are_405_in_the_stateless_revision() {
    let srv = start(HttpConfig::default()).await;
    let peer = modern(&srv);
    let host = peer.host();
    for method in ["GET", "DELETE"] {
        let res = peer
            .send(
                method,
                &[
                    ("host", &host),
                    ("accept", "text/event-stream"),
                    ("mcp-protocol-version", "2026-07-28"),
                ],
                b"",
            )
            .await;
        assert_eq!(res.status, 405, "{method}");
        assert!(res.header("allow").unwrap().contains("POST"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_request_stream_cancels_the_request() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let mut msg = read(&mut peer, "cancel:///watch");
    msg["params"]["_meta"]["progressToken"] = json!("t");
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let first = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert!(first.data.contains("notifications/progress"));
    assert!(first.id.is_none(), "stateless streams are not resumable");
    CANCELLED.store(false, Ordering::SeqCst);
    drop(stream);
    for _ in 0..100 {
        if CANCELLED.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the provider never saw the cancellation");
}

// ----- subscriptions -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_acknowledges_delivers_and_ends_when_closed() {
    let server = watched();
    let srv = start_with(
        server.clone(),
        HttpConfig {
            keep_alive: Duration::from_millis(100),
            ..HttpConfig::default()
        },
    )
    .await;
    let mut peer = modern(&srv);
    let msg = peer.modern_request(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["w:///a"]}}),
    );
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let ack = stream.next_event(Duration::from_secs(5)).await.unwrap();
    let ack: Value = serde_json::from_str(&ack.data).unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    server.changes().updated("w:///a");
    let update = stream.next_event(Duration::from_secs(5)).await.unwrap();
    let update: Value = serde_json::from_str(&update.data).unwrap();
    assert_eq!(update["params"]["uri"], "w:///a");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    // Quiet periods carry keep-alive comments.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(
        stream
            .next_event(Duration::from_millis(100))
            .await
            .is_none()
    );
    assert!(stream.comments >= 2, "{} keep-alives", stream.comments);
    drop(stream);
    for _ in 0..100 {
        if server.changes().subscribers("w:///a") == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("closing the stream did not end the subscription");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_listen_stream_with_its_completion_result() {
    let srv = start_with(watched(), HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let msg = peer.modern_request(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["w:///a"]}}),
    );
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert!(
        stream.next_event(Duration::from_secs(5)).await.is_some(),
        "ack"
    );
    let shutdown = tokio::spawn(srv.shut_down());
    let last = stream
        .next_event(Duration::from_secs(5))
        .await
        .expect("a final event");
    let result: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(result["id"], msg["id"]);
    assert_eq!(result["result"]["resultType"], "complete");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    assert!(
        stream.next_event(Duration::from_secs(5)).await.is_none(),
        "then the end"
    );
    tokio::time::timeout(Duration::from_secs(5), shutdown)
        .await
        .expect("shutdown does not wait for the grace period")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_hears_of_its_subscriptions_on_the_get_stream() {
    let server = watched();
    let srv = start_with(server.clone(), HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let ok = peer
        .post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "w:///a"}}),
        )
        .await;
    assert_eq!(ok.json()["result"], json!({}));
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let mut stream = peer
        .open(
            "GET",
            &[
                ("host", &host),
                ("accept", "text/event-stream"),
                ("mcp-session-id", &sid),
            ],
            b"",
        )
        .await;
    let prime = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert!(prime.data.is_empty());
    // Another session's subscription does not leak into this stream.
    let mut other = srv.peer();
    other.initialize().await;
    server.changes().updated("w:///a");
    let event = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert_eq!(event.id.as_deref(), Some("0-1"));
    let msg: Value = serde_json::from_str(&event.data).unwrap();
    assert_eq!(msg["method"], "notifications/resources/updated");
    assert_eq!(msg["params"]["uri"], "w:///a");
}
