//! The change bus on Redis: two servers on one Redis (a throwaway `redis-server`) share
//! changes, signals and leases, and recover from Redis going away.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rsrc::bus::{Lease, RedisBus, RedisBusOptions};
use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server};
use rsrc_testkit::Peer;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

fn options() -> RedisBusOptions {
    let mut o = RedisBusOptions::default();
    o.lease_ttl = Duration::from_millis(900);
    o
}

async fn instance(redis: &RedisServer) -> Server {
    let bus = RedisBus::connect(&redis.url(), options()).await.unwrap();
    Server::builder("rsrc-bus", "0")
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_subscriptions(),
        )
        .bus(bus)
        .build()
        .unwrap()
}

async fn subscribed(server: &Server, uri: &str) -> Peer {
    let mut peer = common::connect(server);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let ok = peer
        .request("resources/subscribe", json!({"uri": uri}))
        .await;
    assert_eq!(ok["result"], json!({}));
    peer
}

async fn updates(peer: &mut Peer, wait: Duration) -> Vec<String> {
    peer.drain(wait)
        .await
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"]["uri"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the subscription of `server` is up: a change published then arrives.
async fn until_connected(from: &Server, peer: &mut Peer, uri: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.changes().updated(uri);
        if !updates(peer, Duration::from_millis(200)).await.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "the bus never delivered");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_seen_by_one_instance_reaches_subscribers_of_the_other_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_a = subscribed(&a, "w:///a").await;
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b, "w:///a").await;
    updates(&mut on_a, Duration::from_millis(100)).await;

    a.changes().updated("w:///a");
    assert_eq!(
        updates(&mut on_b, Duration::from_millis(500)).await,
        ["w:///a"]
    );
    assert_eq!(
        updates(&mut on_a, Duration::from_millis(100)).await,
        ["w:///a"],
        "its own change reaches an instance once, not again through Redis"
    );
    // Only subscribers hear of a URI; a local feed's changes stay on their instance.
    a.changes().updated("w:///b");
    a.changes().local().updated("w:///a");
    assert!(
        updates(&mut on_b, Duration::from_millis(400))
            .await
            .is_empty()
    );
    assert_eq!(
        updates(&mut on_a, Duration::from_millis(100)).await,
        ["w:///a"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_runs_the_handlers_of_the_other_instances_only() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b, "w:///a").await;
    let (heard_a, heard_b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    for (server, heard) in [(&a, &heard_a), (&b, &heard_b)] {
        let heard = Arc::clone(heard);
        server.changes().on_signal("db://shop", move || {
            heard.fetch_add(1, Ordering::SeqCst);
        });
    }
    a.changes().signal("db://shop");
    a.changes().signal("db://other");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(heard_b.load(Ordering::SeqCst), 1);
    assert_eq!(heard_a.load(Ordering::SeqCst), 0);
}

fn holders(leases: &[&Lease]) -> usize {
    leases.iter().filter(|l| l.held()).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_holds_a_lease_and_another_takes_over_when_it_dies() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The first holder runs on a runtime of its own, which the test shuts down: its tasks
    // stop without releasing anything, as when a process is killed.
    let url = redis.url();
    let (doomed, first, _server) = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (lease, server) = rt.block_on(async {
            let bus = RedisBus::connect(&url, options()).await.unwrap();
            let server = Server::builder("doomed", "0").bus(bus).build().unwrap();
            (server.changes().lease("db://shop"), server)
        });
        (rt, lease, server)
    })
    .join()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !first.held() {
        assert!(Instant::now() < deadline, "nobody took the lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (b, c) = (instance(&redis).await, instance(&redis).await);
    let (lb, lc) = (
        b.changes().lease("db://shop"),
        c.changes().lease("db://shop"),
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(holders(&[&first, &lb, &lc]), 1, "one holder at a time");
    assert!(first.held());
    // Another name is another lease.
    let other = b.changes().lease("git://repo");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(other.held());

    let died = Instant::now();
    std::thread::spawn(move || drop(doomed)).join().unwrap();
    let deadline = died + Duration::from_secs(5);
    while holders(&[&lb, &lc]) == 0 {
        assert!(Instant::now() < deadline, "no takeover within 5 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(holders(&[&lb, &lc]), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_leaving_gives_its_leases_up_before_they_would_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // Leases that last 9 s, tried every 3 s: only giving them up lets another take
    // over within 7 s.
    let mut slow = options();
    slow.lease_ttl = Duration::from_secs(9);
    let bus = |o: RedisBusOptions| {
        let url = redis.url();
        async move { RedisBus::connect(&url, o).await.unwrap() }
    };
    let a = Server::builder("a", "0")
        .bus(bus(slow.clone()).await)
        .build()
        .unwrap();
    let first = a.changes().lease("db://shop");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !first.held() {
        assert!(Instant::now() < deadline, "nobody took the lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let b = Server::builder("b", "0")
        .bus(bus(slow).await)
        .build()
        .unwrap();
    let second = b.changes().lease("db://shop");
    a.leave_cluster().await;
    assert!(!first.held(), "given up at once");
    let deadline = Instant::now() + Duration::from_secs(7);
    while !second.held() {
        assert!(
            Instant::now() < deadline,
            "the other instance did not take the lease before it would have expired"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!first.held(), "a leaving instance takes nothing again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_are_resynchronised_when_redis_comes_back() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_b = subscribed(&b, "w:///a").await;
    let mut also_b = subscribed(&b, "w:///b").await;
    until_connected(&a, &mut on_b, "w:///a").await;
    updates(&mut also_b, Duration::from_millis(50)).await;

    redis.kill();
    // Changes made while Redis is away cannot travel; reads are still served.
    a.changes().updated("w:///a");
    let read = on_b
        .request("resources/read", json!({"uri": "w:///b"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "B");
    tokio::time::sleep(Duration::from_millis(300)).await;
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
    until_connected(&a, &mut on_b, "w:///a").await;
}
