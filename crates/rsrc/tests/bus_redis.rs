//! The change bus on Redis: two servers on one Redis (a throwaway `redis-server`) share
//! changes, signals and leases, and recover from Redis going away, from a subscription
//! that dies without a word, and from a stalled runtime.

#[path = "common/bus_keys.rs"]
mod bus_keys;
mod common;
#[path = "common/redis_proxy.rs"]
mod redis_proxy;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use redis_proxy::RedisProxy;
use rsrc::bus::{Lease, RedisBus, RedisBusOptions};
use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server};
use rsrc_testkit::Peer;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

/// Leases of the default 3 s: a holder keeps its lease through a stall of over a second
/// (the tests run on loaded machines).
fn options() -> RedisBusOptions {
    bus_keys::options()
}

/// The resource that [`until_connected`] changes to see the bus work: left out of what
/// the tests count.
const PROBE: &str = "w:///probe";

async fn instance(redis: &RedisServer) -> Server {
    instance_at(&redis.url()).await
}

async fn instance_at(url: &str) -> Server {
    server_on(RedisBus::connect(url, options()).await.unwrap())
}

fn server_on(bus: RedisBus) -> Server {
    Server::builder("rsrc-bus", "0")
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_text(Resource::new(PROBE, "probe"), "P")
                .with_subscriptions(),
        )
        .bus(bus)
        .build()
        .unwrap()
}

async fn subscribed(server: &Server, uri: &str) -> Peer {
    let mut peer = common::connect(server);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    for uri in [uri, PROBE] {
        let ok = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(ok["result"], json!({}));
    }
    peer
}

/// The URIs updated within `wait` (the probe left out).
async fn updates(peer: &mut Peer, wait: Duration) -> Vec<String> {
    peer.drain(wait)
        .await
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"]["uri"].as_str().unwrap().to_owned())
        .filter(|u| u != PROBE)
        .collect()
}

/// Waits until `peer` hears a change of the probe published by `from`: the bus works.
/// A probe is published again only after 3 s without hearing one (one published before
/// the subscription was up is lost, not late), and the peer is drained until quiet, so
/// that no probe is left on its way.
async fn until_connected(from: &Server, peer: &mut Peer) {
    let deadline = Instant::now() + Duration::from_secs(20);
    'probing: loop {
        from.changes().updated(PROBE);
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(3) {
            let heard = peer.drain(Duration::from_millis(100)).await;
            if heard.iter().any(|m| m["params"]["uri"] == PROBE) {
                break 'probing;
            }
        }
        assert!(Instant::now() < deadline, "the bus never delivered");
    }
    while !peer.drain(Duration::from_millis(500)).await.is_empty() {}
}

/// Waits until `f` holds, polling; false after 10 s.
async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn redis_conn(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// The URIs `peer` hears until it hears the probe, which `from` changes after what the
/// test did: what the bus carried before the probe has arrived (messages keep their
/// order), so nothing more of it can come.
async fn heard_until_probe(from: &Server, peer: &mut Peer) -> Vec<String> {
    from.changes().updated(PROBE);
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut got = Vec::new();
    loop {
        for m in peer.drain(Duration::from_millis(100)).await {
            if m["method"] != "notifications/resources/updated" {
                continue;
            }
            match m["params"]["uri"].as_str() {
                Some(PROBE) => return got,
                Some(uri) => got.push(uri.to_owned()),
                None => {}
            }
        }
        assert!(Instant::now() < deadline, "the probe never arrived");
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
    until_connected(&a, &mut on_b).await;
    while !on_a.drain(Duration::from_millis(300)).await.is_empty() {}

    a.changes().updated("w:///a");
    assert_eq!(heard_until_probe(&a, &mut on_b).await, ["w:///a"]);
    assert_eq!(
        heard_until_probe(&a, &mut on_a).await,
        ["w:///a"],
        "its own change reaches an instance once, not again through Redis"
    );
    // Only subscribers hear of a URI; a local feed's changes stay on their instance.
    a.changes().updated("w:///b");
    a.changes().local().updated("w:///a");
    assert!(heard_until_probe(&a, &mut on_b).await.is_empty());
    assert_eq!(heard_until_probe(&a, &mut on_a).await, ["w:///a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_runs_the_handlers_of_the_other_instances_only() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    let (heard_a, heard_b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    for (server, heard) in [(&a, &heard_a), (&b, &heard_b)] {
        let heard = Arc::clone(heard);
        server.changes().on_signal("db://shop", move || {
            heard.fetch_add(1, Ordering::SeqCst);
        });
    }
    a.changes().signal("db://shop");
    a.changes().signal("db://other");
    // Signals travel the channel in order with the probe.
    heard_until_probe(&a, &mut on_b).await;
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
    assert!(eventually(|| first.held()).await, "nobody took the lease");
    let (b, c) = (instance(&redis).await, instance(&redis).await);
    let (lb, lc) = (
        b.changes().lease("db://shop"),
        c.changes().lease("db://shop"),
    );
    // Through more than two renewals: the holder keeps it, nobody else has it.
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        assert!(!lb.held() && !lc.held(), "one holder at a time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(eventually(|| first.held()).await);
    // Another name is another lease.
    let other = b.changes().lease("git://repo");
    assert!(eventually(|| other.held()).await);

    let died = Instant::now();
    std::thread::spawn(move || drop(doomed)).join().unwrap();
    let deadline = died + Duration::from_secs(5);
    while holders(&[&lb, &lc]) == 0 {
        assert!(Instant::now() < deadline, "no takeover within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("the lease moved {:?} after its holder died", died.elapsed());
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        assert!(holders(&[&lb, &lc]) <= 1, "one holder at a time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_leaving_gives_its_leases_up_before_they_would_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // Leases that last 9 s: only giving them up lets another take over within 7 s.
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

#[test]
fn a_holder_stalled_past_its_local_hold_keeps_the_lease_without_a_gap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The holder's runtime has one worker, which the test stalls.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (lease, _server) = rt.block_on(async {
        let server = instance(&redis).await;
        (server.changes().lease("db://shop"), server)
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lease.held() {
        assert!(Instant::now() < deadline, "nobody took the lease");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = redis_conn(&redis.url());
    let key = "rsrc:lease:db://shop";
    // Just after a renewal (3 s to live, renewed every second)...
    loop {
        let left: i64 = redis::cmd("PTTL").arg(key).query(&mut c).unwrap();
        if left > 2900 {
            break;
        }
        assert!(Instant::now() < deadline, "the lease is not renewed");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    // ...the runtime stalls past 80 % of the TTL (the hold lapses here), not past the TTL.
    rt.spawn(async { std::thread::sleep(Duration::from_millis(2500)) });
    let stalled = Instant::now();
    while stalled.elapsed() < Duration::from_millis(4500) {
        let holder: Option<String> = redis::cmd("GET").arg(key).query(&mut c).unwrap();
        assert!(
            holder.is_some(),
            "the lease was free {:?} after the stall began",
            stalled.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lease.held(), "held again once the runtime runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_while_renewals_are_in_flight_leaves_no_lease_held_anywhere() {
    use rsrc::bus::ChangeBus as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut c = redis_conn(&redis.url());
    // Redis's answers take 100 ms: a renewal is in flight most of the time, and leaving
    // lands while one is.
    let proxy = RedisProxy::start(redis.port()).await;
    let mut quick = options();
    quick.lease_ttl = Duration::from_millis(1500);
    quick.timeout = Duration::from_secs(3);
    for trial in 0..3_u64 {
        proxy.delay(Duration::ZERO);
        let bus = RedisBus::connect(&proxy.url, quick.clone()).await.unwrap();
        let leases: Vec<Lease> = (0..5)
            .map(|i| bus.lease(&format!("t{trial}:{i}")))
            .collect();
        assert!(
            eventually(|| leases.iter().all(Lease::held)).await,
            "the leases are taken"
        );
        proxy.delay(Duration::from_millis(100));
        tokio::time::sleep(Duration::from_millis(700 + 130 * trial)).await;
        bus.leave().await;
        // Giving the leases up took round trips of 100 ms: the attempt that was in flight
        // has been answered, and it did not make its lease held here again (held, it
        // would stay so until its local hold lapsed, though Redis has no key).
        let held = leases.iter().filter(|l| l.held()).count();
        assert_eq!(held, 0, "trial {trial}: held here after leaving");
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert!(
            !leases.iter().any(Lease::held),
            "trial {trial}: taken again"
        );
        let left: Vec<String> = redis::cmd("KEYS")
            .arg(format!("rsrc:lease:t{trial}:*"))
            .query(&mut c)
            .unwrap();
        assert!(left.is_empty(), "trial {trial}: still in Redis: {left:?}");
    }
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
    let b = server_on(bus);
    let mut on_b = subscribed(&b, "w:///a").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut got = Vec::new();
    while !got.iter().any(|u| u == "w:///a") {
        assert!(Instant::now() < deadline, "no resync: {got:?}");
        got.extend(updates(&mut on_b, Duration::from_millis(200)).await);
    }
}

/// Publishes every payload of `payloads` on the change channel, in one round trip.
fn publish_raw(url: &str, payloads: &[String]) {
    let mut c = redis_conn(url);
    let mut p = redis::pipe();
    for m in payloads {
        p.cmd("PUBLISH").arg("rsrc:changes").arg(m).ignore();
    }
    p.query::<()>(&mut c).unwrap();
}

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

/// 200 resyncs from another instance cost this one one resync (or two, if the burst
/// straddles the rate limit), not 200: its listeners are told to look again, and its
/// observers (read caches) drop what they hold, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_resyncs_costs_one_resync() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let a = instance(&redis).await;
    let b = instance(&redis).await;
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    let resyncs = Arc::new(AtomicUsize::new(0));
    b.changes().on_change({
        let resyncs = Arc::clone(&resyncs);
        move |e| {
            if matches!(e, rsrc::ChangeEvent::Resync(_)) {
                resyncs.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let burst: Vec<String> = (0..200)
        .map(|_| bus_keys::message("elsewhere", json!({"resync": ""})))
        .collect();
    publish_raw(&redis.url(), &burst);
    assert!(
        eventually(|| resyncs.load(Ordering::SeqCst) > 0).await,
        "the resync never came"
    );
    // Whatever else the burst causes comes within the rate limit's period (1 s) after
    // the first.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let done = resyncs.load(Ordering::SeqCst);
    assert!(
        (1..=2).contains(&done),
        "one resync per burst (two at most), not one per message: {done}"
    );
    let heard = updates(&mut on_b, Duration::from_millis(200)).await;
    assert!(heard.len() <= 2, "{heard:?}");
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
