//! The bus recovering by itself: from Redis going away and coming back, from a
//! subscription that goes silent without closing, from a first subscription that failed;
//! and letting go of every connection when its server is dropped.

use std::time::{Duration, Instant};

use rsrc_redis::RedisBus;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::redis_proxy::RedisProxy;
use crate::support::{
    eventually, heard_until_probe, instance, instance_at, options, redis_conn, server_on,
    subscribed, until_connected, updates,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_are_resynchronised_when_redis_comes_back() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_b = subscribed(&b, "w:///a").await;
    let mut also_b = subscribed(&b, "w:///b").await;
    until_connected(&a, &mut on_b).await;
    updates(&mut also_b, Duration::from_millis(50)).await;

    redis.kill();
    // Changes made while Redis is away cannot travel; reads are still served.
    a.changes().updated("w:///a");
    let read = on_b
        .request("resources/read", json!({"uri": "w:///b"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "B");
    redis.restart();
    // Once back, every subscription hears an update: nothing was lost silently.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut got_a, mut got_b): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    while (got_a.is_empty() || got_b.is_empty()) && Instant::now() < deadline {
        got_a.extend(updates(&mut on_b, Duration::from_millis(100)).await);
        got_b.extend(updates(&mut also_b, Duration::from_millis(100)).await);
    }
    assert!(got_a.contains(&"w:///a".to_owned()), "{got_a:?}");
    assert!(got_b.contains(&"w:///b".to_owned()), "{got_b:?}");
    // And the bus works again.
    updates(&mut on_b, Duration::from_millis(300)).await;
    until_connected(&a, &mut on_b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_that_goes_silent_is_restarted_and_listeners_resync() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let proxy = RedisProxy::start(redis.port()).await;
    let a = instance(&redis).await;
    let b = instance_at(&proxy.url).await;
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    heard_until_probe(&a, &mut on_b).await;

    proxy.mute_subscriptions();
    // Lost on B's silent subscription.
    a.changes().updated("w:///a");
    // B does not hear its own heartbeat any more: it subscribes again, and its listeners
    // hear an update of each subscription.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = Vec::new();
    while !got.iter().any(|u| u == "w:///a") {
        assert!(Instant::now() < deadline, "B never noticed: {got:?}");
        got.extend(updates(&mut on_b, Duration::from_millis(200)).await);
    }
    // And the bus works again.
    until_connected(&a, &mut on_b).await;
}

/// The clients connected to Redis, but the one asking.
fn clients(c: &mut redis::Connection, kind: &str) -> usize {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .arg("TYPE")
        .arg(kind)
        .query(c)
        .unwrap();
    let me: i64 = redis::cmd("CLIENT").arg("ID").query(c).unwrap();
    list.lines()
        .filter(|l| !l.starts_with(&format!("id={me} ")))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_lets_go_of_redis_when_its_server_is_dropped() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut c = redis_conn(&redis.url());
    let server = instance(&redis).await;
    let lease = server.changes().lease("db://shop");
    assert!(
        eventually(|| clients(&mut c, "pubsub") == 1).await,
        "subscribed"
    );
    assert!(eventually(|| lease.held()).await);
    drop(server);
    assert!(
        eventually(|| clients(&mut c, "pubsub") + clients(&mut c, "normal") == 0).await,
        "every connection closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_resync_once_subscribed_when_the_first_attempt_failed() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let bus = RedisBus::connect(&redis.url(), options()).await.unwrap();
    redis.kill();
    // The server subscribes while Redis is away: changes published meanwhile are lost.
    let b = server_on(bus.clone());
    let mut on_b = subscribed(&b, "w:///a").await;
    assert!(
        eventually(|| bus.subscribe_failures() > 0).await,
        "the first attempt to subscribe failed"
    );
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut got = Vec::new();
    while !got.iter().any(|u| u == "w:///a") {
        assert!(Instant::now() < deadline, "no resync: {got:?}");
        got.extend(updates(&mut on_b, Duration::from_millis(200)).await);
    }
}
