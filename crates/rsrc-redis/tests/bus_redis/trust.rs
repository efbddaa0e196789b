//! Who may speak on the bus: a message without the deployment's tag, or one replayed, is
//! dropped and counted; Redis over TLS is reached with its CA only; a password given
//! apart from the URL is used; a second deployment on one namespace, or a bus without a
//! key, is refused.

use std::time::Duration;

use rsrc_redis::{RedisBus, RedisBusOptions};
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::bus_keys;
use crate::support::{
    eventually, heard_until_probe, instance, options, publish_raw, server_on, subscribed,
    until_connected,
};

/// The review's reproduction: anyone who can publish on the channel made every instance
/// notify its clients of changes that never happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_without_the_bus_keys_tag_is_dropped_and_counted() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let a = instance(&redis).await;
    let bus = RedisBus::connect(&redis.url(), options()).await.unwrap();
    let b = server_on(bus.clone());
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let mut other = options();
    other.keys = vec![[9; 32]];
    let before = bus.rejected().messages;
    publish_raw(
        &redis.url(),
        &[
            // Unsigned, as the review sent it.
            r#"{"from":"x","updated":"w:///a"}"#.to_owned(),
            format!(r#"{{"from":"x","ts":{ts},"seq":1,"updated":"w:///a"}}"#),
            // Signed, but with a key this deployment does not have.
            format!(
                "AAAAAAAAAAAAAAAAAAAAAA.{{\"from\":\"x\",\"ts\":{ts},\"seq\":2,\"list\":true}}"
            ),
        ],
    );
    assert!(
        heard_until_probe(&a, &mut on_b).await.is_empty(),
        "no change is believed without the bus keys' tag"
    );
    assert_eq!(bus.rejected().messages - before, 3);
    // The same message signed with the deployment's key is believed.
    publish_raw(
        &redis.url(),
        &[bus_keys::message("x", json!({"updated": "w:///a"}))],
    );
    assert_eq!(heard_until_probe(&a, &mut on_b).await, ["w:///a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genuine_message_replayed_is_dropped() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let a = instance(&redis).await;
    let bus = RedisBus::connect(&redis.url(), options()).await.unwrap();
    let b = server_on(bus.clone());
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    // Someone listening on the channel records what A sends.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut spy = client.get_connection().unwrap();
    let mut spy = spy.as_pubsub();
    spy.subscribe("rsrc:changes").unwrap();
    spy.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    a.changes().updated("w:///a");
    assert_eq!(heard_until_probe(&a, &mut on_b).await, ["w:///a"]);
    let mut recorded = Vec::new();
    while let Ok(m) = spy.get_message() {
        let payload: String = m.get_payload().unwrap();
        if payload.contains("w:///a") {
            recorded.push(payload);
        }
    }
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let before = bus.rejected().messages;
    publish_raw(&redis.url(), &recorded);
    assert!(
        heard_until_probe(&a, &mut on_b).await.is_empty(),
        "a message heard before is not believed again"
    );
    assert_eq!(bus.rejected().messages - before, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_over_tls_is_reached_with_its_ca_and_refused_without() {
    let Some(redis) = RedisServer::start_with({
        let mut o = rsrc_testkit::redis::RedisOptions::default();
        o.tls = true;
        o
    }) else {
        return;
    };
    let url = redis.url();
    assert!(url.starts_with("rediss://"));
    // Not signed by a root the system trusts: refused.
    let refused = RedisBus::connect(&url, options()).await.unwrap_err();
    assert!(
        refused.to_string().contains("cannot reach Redis"),
        "{refused}"
    );
    let mut o = options();
    o.ca_pem = Some(redis.ca_pem().unwrap().as_bytes().to_vec());
    let a = server_on(RedisBus::connect(&url, o.clone()).await.unwrap());
    let b = server_on(RedisBus::connect(&url, o).await.unwrap());
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    a.changes().updated("w:///a");
    assert_eq!(heard_until_probe(&a, &mut on_b).await, ["w:///a"]);
    // A CA file without TLS is a mistake, said so.
    let mut plain = options();
    plain.ca_pem = Some(b"x".to_vec());
    let err = RedisBus::connect("redis://127.0.0.1:1", plain)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("rediss://"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_given_apart_from_the_url_is_used() {
    let Some(redis) = RedisServer::start_with({
        let mut o = rsrc_testkit::redis::RedisOptions::default();
        o.password = Some("correct horse battery staple".into());
        o
    }) else {
        return;
    };
    let refused = RedisBus::connect(&redis.url(), options())
        .await
        .unwrap_err();
    assert!(!refused.to_string().contains("horse"), "{refused}");
    let mut o = options();
    o.password = Some("correct horse battery staple".into());
    let server = server_on(RedisBus::connect(&redis.url(), o).await.unwrap());
    let lease = server.changes().lease("db://shop");
    assert!(eventually(|| lease.held()).await, "the bus works");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_deployment_on_the_same_namespace_is_refused() {
    use rsrc::bus::ChangeBus as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let serving = |dir: &str| {
        let mut o = options();
        o.serves = vec![format!("directory: {dir} hidden=Some(false)")];
        o
    };
    // Its record is written before it is connected.
    let first = RedisBus::connect(&redis.url(), serving("/srv/a"))
        .await
        .unwrap();
    // Another instance of the same deployment joins.
    let second = RedisBus::connect(&redis.url(), serving("/srv/a"))
        .await
        .unwrap();
    // One serving another directory would take turns watching with them: refused.
    let err = RedisBus::connect(&redis.url(), serving("/srv/b"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("serves other sources") && err.contains("--bus-namespace"),
        "{err}"
    );
    // So is one without this deployment's keys, whatever it serves.
    let mut stranger = serving("/srv/a");
    stranger.keys = vec![[7; 32]];
    let err = RedisBus::connect(&redis.url(), stranger)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("another deployment"), "{err}");
    // Under its own namespace it starts.
    let mut elsewhere = serving("/srv/b");
    elsewhere.namespace = "other".into();
    RedisBus::connect(&redis.url(), elsewhere).await.unwrap();
    // Once the first deployment is gone, the namespace is free again.
    for bus in [&first, &second] {
        bus.leave().await;
    }
    drop((first, second));
    RedisBus::connect(&redis.url(), serving("/srv/b"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_bus_without_a_key_is_refused() {
    let err = RedisBus::connect("redis://127.0.0.1:1", RedisBusOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("openssl rand -hex 32"), "{err}");
}
