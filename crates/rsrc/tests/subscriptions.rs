//! Subscriptions on both eras over raw JSON: `resources/subscribe` / `unsubscribe` per
//! session, `subscriptions/listen` streams, and delivery through the change feed.

mod common;

use std::time::Duration;

use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server, ServerConfig};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

fn watched() -> Server {
    Server::builder("rsrc-subs", "0.0.0")
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_subscriptions(),
        )
        .mount("sample:", common::sample_set())
        .config(ServerConfig {
            max_subscriptions: 2,
            ..ServerConfig::default()
        })
        .build()
        .unwrap()
}

async fn notification(peer: &mut Peer) -> Value {
    let msg = peer.recv().await;
    assert!(msg.get("method").is_some(), "a notification: {msg}");
    msg
}

#[tokio::test]
async fn the_capability_is_declared_only_when_a_provider_offers_subscriptions() {
    let mut peer = common::connect(&watched());
    let caps = peer.initialize(ProtocolVersion::V2025_11_25).await["capabilities"].clone();
    assert_eq!(caps["resources"]["subscribe"], true);
    let mut plain = common::connect(&common::server());
    let caps = plain.initialize(ProtocolVersion::V2025_11_25).await["capabilities"].clone();
    assert!(caps["resources"].get("subscribe").is_none());
    let resp = plain
        .request("resources/subscribe", json!({"uri": "sample:///README.md"}))
        .await;
    assert_eq!(resp["error"]["code"], -32601);
}

#[tokio::test]
async fn a_subscribed_session_hears_of_changes_until_it_unsubscribes() {
    let server = watched();
    let mut a = common::connect(&server);
    let mut b = common::connect(&server);
    a.initialize(ProtocolVersion::V2025_11_25).await;
    b.initialize(ProtocolVersion::V2025_06_18).await;
    let ok = a
        .request("resources/subscribe", json!({"uri": "w:///a"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    let ok = b
        .request("resources/subscribe", json!({"uri": "w:///b"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    server.changes().updated("w:///a");
    let n = notification(&mut a).await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "w:///a");
    b.expect_silence(Duration::from_millis(200)).await;
    let ok = a
        .request("resources/unsubscribe", json!({"uri": "w:///a"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    server.changes().updated("w:///a");
    a.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn subscribing_to_a_missing_or_unsubscribable_uri_fails_like_a_read() {
    let mut peer = common::connect(&watched());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let missing = peer
        .request("resources/subscribe", json!({"uri": "w:///nope"}))
        .await;
    let read = peer
        .request("resources/read", json!({"uri": "w:///nope"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(missing["error"]["code"], read["error"]["code"]);
    assert_eq!(missing["error"]["data"]["uri"], "w:///nope");
    let not_offered = peer
        .request("resources/subscribe", json!({"uri": "sample:///README.md"}))
        .await;
    assert_eq!(not_offered["error"]["code"], -32602);
}

#[tokio::test]
async fn a_session_holds_a_bounded_number_of_subscriptions_and_ending_releases_them() {
    let server = watched();
    let mut peer = common::connect(&server);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    for uri in ["w:///a", "w:///b", "w:///a"] {
        let ok = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(ok["result"], json!({}), "{uri}");
    }
    // Two distinct URIs already: the cap of the config.
    let sample = peer
        .request("resources/subscribe", json!({"uri": "w:///c"}))
        .await;
    assert!(sample.get("error").is_some());
    assert_eq!(server.changes().subscribers("w:///a"), 1);
    peer.close().await;
    drop(peer);
    for _ in 0..50 {
        if server.changes().subscribers("w:///a") == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the session's subscriptions outlived it");
}

#[tokio::test]
async fn listen_acknowledges_first_then_delivers_tagged_notifications() {
    let server = watched();
    let mut peer = common::connect(&server);
    peer.speak(ProtocolVersion::V2026_07_28);
    peer.send(
        json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"_meta": rsrc_testkit::modern_meta(), "notifications": {
            "resourceSubscriptions": ["w:///a", "w:///missing", "sample:///README.md"],
            "resourcesListChanged": true, "toolsListChanged": true}}}),
    )
    .await;
    let ack = notification(&mut peer).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // Only what can be honoured: one URI; no list changes (nothing publishes them).
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["w:///a"]})
    );
    server.changes().updated("w:///b");
    server.changes().updated("w:///a");
    server.changes().list_changed();
    let n = notification(&mut peer).await;
    assert_eq!(n["params"]["uri"], "w:///a");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    peer.expect_silence(Duration::from_millis(200)).await;
    // Cancelling ends it: no response, and nothing more is delivered.
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "sub-1"}}),
    )
    .await;
    // The cancellation has taken effect once the subscription is gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while server.changes().subscribers("w:///a") != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the listen stream went on"
        );
        tokio::task::yield_now().await;
    }
    server.changes().updated("w:///a");
    peer.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(server.changes().subscribers("w:///a"), 0);
}

#[tokio::test]
async fn a_listen_stream_ends_with_its_result_when_the_input_closes() {
    let server = watched();
    let mut peer = common::connect(&server);
    peer.speak(ProtocolVersion::V2026_07_28);
    peer.send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
        "params": {"_meta": rsrc_testkit::modern_meta(), "notifications": {}}}),
    )
    .await;
    let ack = notification(&mut peer).await;
    assert_eq!(ack["params"]["notifications"], json!({}));
    peer.close().await;
    let end = peer.response_to(&json!(5)).await;
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
}

fn extended() -> Server {
    Server::builder("rsrc-ext", "0.0.0")
        .mount("sample:", common::sample_set())
        .capability("prompts", json!({}))
        .method("prompts/list", |ctx, params| async move {
            let mut result = json!({"prompts": [{"name": "p", "arguments": [{"name": "lang"}]}],
                "echo": Value::Object(params)});
            // Method-specific members are the handler's to give.
            if ctx.protocol_version().is_modern() {
                result["ttlMs"] = json!(0);
                result["cacheScope"] = json!("private");
            }
            Ok(result)
        })
        .prompt_completion(|_ctx, req| async move {
            Ok(rsrc::protocol::Completion::from_matches(
                ["rust", "ruby", "go"]
                    .into_iter()
                    .filter(|v| v.starts_with(&req.value) && req.argument == "lang")
                    .map(str::to_owned)
                    .collect(),
            ))
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn extension_methods_are_gated_and_decorated_like_engine_methods() {
    let server = extended();
    let mut peer = common::connect(&server);
    let before = peer.request("prompts/list", json!({})).await;
    assert_eq!(before["error"]["code"], -32600, "not initialized");
    let caps = peer.initialize(ProtocolVersion::V2025_11_25).await["capabilities"].clone();
    assert_eq!(caps["prompts"], json!({}));
    assert_eq!(caps["completions"], json!({}));
    let legacy = peer.request("prompts/list", json!({"cursor": "x"})).await;
    assert_eq!(legacy["result"]["prompts"][0]["name"], "p");
    assert_eq!(legacy["result"]["echo"], json!({"cursor": "x"}));
    assert!(legacy["result"].get("resultType").is_none());
    let mut modern = common::connect(&server);
    modern.speak(ProtocolVersion::V2026_07_28);
    let resp = modern.modern("prompts/list", json!({})).await;
    assert_eq!(resp["result"]["resultType"], "complete");
    assert_eq!(
        resp["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "rsrc-ext"
    );
    assert_eq!(resp["result"]["echo"], json!({}), "_meta is not passed on");
}

#[tokio::test]
async fn prompt_arguments_complete_through_the_registered_completer() {
    let mut peer = common::connect(&extended());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let resp = peer
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"},
                "argument": {"name": "lang", "value": "ru"}}),
        )
        .await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["rust", "ruby"])
    );
}

#[test]
fn an_extension_cannot_shadow_an_engine_method_or_capability() {
    let e = Server::builder("x", "0")
        .method("resources/read", |_ctx, _p| async { Ok(json!({})) })
        .build()
        .unwrap_err();
    assert_eq!(e, rsrc::BuildError::ReservedMethod("resources/read".into()));
    let e = Server::builder("x", "0")
        .capability("resources", json!({}))
        .build()
        .unwrap_err();
    assert_eq!(e, rsrc::BuildError::ReservedCapability("resources".into()));
}
