//! Sessions of the 2025 revisions shared through Redis: two HTTP instances on one Redis
//! (a throwaway `redis-server`) serve one session, whichever gets each request — its
//! subscriptions, log level, GET stream, resumption, DELETE and expiry — and what
//! happens when Redis loses data, an announcement is lost, or two instances write at
//! once. Some tests write to Redis directly, to stand for another instance whose
//! announcement has not arrived.

#[path = "common/bus_keys.rs"]
mod bus_keys;
mod common;
#[path = "common/http.rs"]
mod harness;
#[path = "common/redis_proxy.rs"]
mod redis_proxy;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bus_keys::{message, session_key as key, tagged};
use harness::{Running, standard, start_with};
use redis_proxy::RedisProxy;
use rsrc::Server;
use rsrc::bus::RedisBus;
use rsrc::protocol::Resource;
use rsrc::transport::http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use rsrc_testkit::{HttpPeer, HttpResponse, SseStream};
use serde_json::{Value, json};

const UPDATED: &str = "notifications/resources/updated";

async fn instance(redis: &RedisServer, config: HttpConfig) -> (Server, Running) {
    instance_at(&redis.url(), config).await
}

async fn instance_at(url: &str, config: HttpConfig) -> (Server, Running) {
    let (server, running, _) = instance_with_bus(url, config).await;
    (server, running)
}

/// An instance, with its bus (to read what it refused).
async fn instance_with_bus(url: &str, config: HttpConfig) -> (Server, Running, RedisBus) {
    instance_with_options(url, config, bus_keys::options()).await
}

async fn instance_with_options(
    url: &str,
    config: HttpConfig,
    options: rsrc::bus::RedisBusOptions,
) -> (Server, Running, RedisBus) {
    let bus = RedisBus::connect(url, options).await.unwrap();
    let handle = bus.clone();
    let server = Server::builder("rsrc-shared-sessions", "0")
        .mount("sample:", common::sample_set())
        .mount(
            "w:",
            rsrc::ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_subscriptions(),
        )
        .bus(bus)
        .build()
        .unwrap();
    let running = start_with(server.clone(), config).await;
    (server, running, handle)
}

/// The session's client, speaking to the instance at `addr`.
fn at(addr: SocketAddr, session: &str) -> HttpPeer {
    let mut p = HttpPeer::new(addr);
    p.set_session(Some(session.to_owned()));
    p
}

async fn call(peer: &mut HttpPeer, method: &str, params: Value) -> HttpResponse {
    let id = peer.next_id();
    peer.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await
}

async fn get_stream(peer: &HttpPeer, last_event_id: Option<&str>) -> SseStream {
    let host = peer.host();
    let sid = peer.session().unwrap().to_owned();
    let mut h = vec![
        ("host", host.as_str()),
        ("accept", "text/event-stream"),
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    if let Some(id) = last_event_id {
        h.push(("last-event-id", id));
    }
    peer.open("GET", &h, b"").await
}

/// The next notification `method` on `stream` within `wait`, with its event id.
async fn next_of(stream: &mut SseStream, method: &str, wait: Duration) -> Option<(String, Value)> {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = stream.next_event(left).await?;
        let Ok(msg) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        if msg["method"] == method {
            return Some((event.id.unwrap_or_default(), msg));
        }
    }
}

/// Runs a command on Redis directly (standing for another instance, or an operator).
fn redis_cmd<T: redis::FromRedisValue>(redis: &RedisServer, args: &[&str]) -> T {
    let mut c = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(&mut c).unwrap()
}

/// Entries of a Redis Stream: id, then field and value pairs.
type StreamEntries = Vec<(String, Vec<(String, Vec<u8>)>)>;

/// The id of the newest entry of the stream `log`.
fn top_entry(redis: &RedisServer, log: &str) -> Option<String> {
    let top: StreamEntries = redis_cmd(redis, &["XREVRANGE", log, "+", "-", "COUNT", "1"]);
    top.into_iter().next().map(|(id, _)| id)
}

/// The `notifications/message` levels of a read of `sample:///noisy` (one info, one
/// error line) through `peer`.
async fn noisy_levels(peer: &mut HttpPeer) -> Vec<String> {
    let res = call(peer, "resources/read", json!({"uri": "sample:///noisy"})).await;
    res.messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Whether `stream` ends (rather than goes quiet) within `wait`.
async fn ends_within(stream: &mut SseStream, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        if stream.next_event(left).await.is_none() {
            return Instant::now() < deadline;
        }
    }
}

/// Waits until `f` holds, polling; false after 10 s.
async fn eventually<F: AsyncFnMut() -> bool>(mut f: F) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_a_session_may_land_on_another_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await; // initialize on A, notifications/initialized on A
    let sid = first.session().unwrap().to_owned();

    // B has never seen the session: it loads it, and subscribes on its behalf.
    let mut on_b = at(b.addr, &sid);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.status, 200);
    assert_eq!(sub.json()["result"], json!({}));
    let level = call(&mut on_b, "logging/setLevel", json!({"level": "error"})).await;
    assert_eq!(level.json()["result"], json!({}));

    // A holds the GET stream; the change is seen by B and crosses over.
    let on_a = at(a.addr, &sid);
    let mut stream = get_stream(&on_a, None).await;
    assert_eq!(stream.status, 200);
    let mut heard = None;
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            heard = next_of(&mut stream, UPDATED, Duration::from_millis(200)).await;
            heard.is_some()
        })
        .await,
        "A's GET stream hears a subscription made on B"
    );
    assert_eq!(heard.unwrap().1["params"]["uri"], "w:///a");

    // The log level set on B filters what A sends.
    let mut again = at(a.addr, &sid);
    let noisy = call(
        &mut again,
        "resources/read",
        json!({"uri": "sample:///noisy"}),
    )
    .await;
    let logs: Vec<&Value> = noisy
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{:?}", noisy.messages);
    assert_eq!(logs[0]["params"]["level"], "error");

    // Unsubscribed on B: A's stream no longer hears the resource. Each round changes
    // `a` then `b` (still subscribed): hearing `b` without `a` is the positive signal.
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///b"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let unsub = call(&mut on_b, "resources/unsubscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(unsub.json()["result"], json!({}));
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            sb.changes().updated("w:///b");
            let mut heard = Vec::new();
            while let Some((_, m)) = next_of(&mut stream, UPDATED, Duration::from_secs(2)).await {
                heard.push(m["params"]["uri"].as_str().unwrap().to_owned());
                if heard.last().is_some_and(|u| u == "w:///b") {
                    break;
                }
            }
            heard == ["w:///b"]
        })
        .await,
        "A's stream stops hearing a resource unsubscribed on B"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_resumes_on_another_instance_when_its_holder_is_gone() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = b.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;

    let on_a = at(a.addr, &sid);
    let mut stream = get_stream(&on_a, None).await;
    let mut first_id = None;
    assert!(
        eventually(async || {
            sa.changes().updated("w:///a");
            first_id = next_of(&mut stream, UPDATED, Duration::from_millis(200)).await;
            first_id.is_some()
        })
        .await
    );
    let (first_id, _) = first_id.unwrap();
    // A second notification the client never reads: its connection breaks first. A
    // stops once the event is in the shared log.
    drop(stream);
    sa.changes().updated("w:///a");
    let seq = |id: &str| id.split_once('-').unwrap().1.parse::<u64>().unwrap();
    let log = format!("{}:s0", key(&sid));
    let next = format!("{}-0", seq(&first_id) + 1);
    assert!(
        eventually(async || top_entry(&redis, &log).as_deref() == Some(next.as_str())).await,
        "the missed event is stored"
    );
    a.shut_down().await;
    drop(sa);

    // Resumed on B: the missed event from the shared log, then every subscription again.
    let mut resumed = get_stream(&at(b.addr, &sid), Some(&first_id)).await;
    assert_eq!(resumed.status, 200);
    let (replayed, msg) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("the event written by A is replayed");
    assert_eq!(msg["params"]["uri"], "w:///a");
    assert!(replayed.starts_with("0-"));
    assert_eq!(seq(&replayed), seq(&first_id) + 1, "nothing skipped");
    let (resync, _) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("subscriptions are announced again after the take-over");
    assert!(seq(&resync) > seq(&replayed), "ids go on after the replay");
    // And B now delivers new changes itself.
    sb.changes().updated("w:///a");
    let (later, _) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("B delivers");
    assert!(seq(&later) > seq(&resync));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_stream_resumes_on_another_instance_and_ends_with_its_response() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let slow = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///slow", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&slow).unwrap())
        .await;
    let mut last = None;
    for _ in 0..3 {
        last = stream.next_event(Duration::from_secs(5)).await.unwrap().id;
    }
    drop(stream);
    let last = last.unwrap();
    let (stream_no, seq) = last.split_once('-').unwrap();
    let mut expected: u64 = seq.parse::<u64>().unwrap() + 1;

    let mut resumed = get_stream(&at(b.addr, &sid), Some(&last)).await;
    assert_eq!(resumed.status, 200);
    resumed.answering("resources/read");
    let mut response = None;
    while let Some(e) = resumed.next_event(Duration::from_secs(10)).await {
        assert_eq!(
            e.id.unwrap(),
            format!("{stream_no}-{expected}"),
            "in order, nothing skipped"
        );
        expected += 1;
        let msg: Value = serde_json::from_str(&e.data).unwrap();
        if msg.get("id").is_some() {
            response = Some(msg);
        }
    }
    let response = response.expect("the response written by A arrives through B");
    assert_eq!(response["id"], 8);
    assert_eq!(response["result"]["contents"][0]["text"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_one_instance_ends_the_session_on_every_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);

    let host = first.host();
    let deleted = first
        .send(
            "DELETE",
            &[
                ("host", &host),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            b"",
        )
        .await;
    assert_eq!(deleted.status, 204);
    assert!(
        eventually(async || call(&mut on_b, "ping", json!({})).await.status == 404).await,
        "B's copy ends too"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_idle_for_too_long_is_gone_from_every_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let config = HttpConfig {
        session_idle: Duration::from_secs(1),
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 404);
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_identity_cannot_use_a_shared_session_and_junk_ids_are_unknown() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // Without authentication every client is the same identity; a made-up id is not
    // a session, on either instance, and never reaches Redis as a key.
    for junk in ["nope", "../../etc", &"A".repeat(32), &sid[..31]] {
        let mut p = at(b.addr, junk);
        assert_eq!(call(&mut p, "ping", json!({})).await.status, 404, "{junk}");
    }
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_go_on_when_redis_restarts_empty_and_are_put_back_from_their_copies() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    assert!(
        eventually(async || {
            sa.changes().updated("w:///a");
            next_of(&mut stream, UPDATED, Duration::from_millis(200))
                .await
                .is_some()
        })
        .await
    );

    // An instance that has never seen the session.
    let (_sc, c) = instance(&redis, HttpConfig::default()).await;
    // Redis restarts without persistence: every key is gone.
    redis.restart();
    let exists = |k: &str| redis_cmd::<bool>(&redis, &["EXISTS", k]);
    assert!(!exists(&key(&sid)));
    let pubsub = || {
        let list: String = redis_cmd(&redis, &["CLIENT", "LIST", "TYPE", "pubsub"]);
        list.lines().count()
    };
    assert!(
        eventually(async || pubsub() == 3).await,
        "every instance subscribed again"
    );
    let status = call(&mut at(c.addr, &sid), "ping", json!({})).await.status;
    assert!(status == 503 || status == 200, "{status}");
    // The instances that know the session serve it on, and put it back.
    assert_eq!(
        call(&mut at(a.addr, &sid), "ping", json!({})).await.status,
        200
    );
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    assert!(
        eventually(async || exists(&key(&sid))).await,
        "the session is re-created from a copy"
    );
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(
        members,
        [tagged(&sid, "sub", "w:///a")],
        "with its subscription"
    );
    // The instance that never saw it loads it from there; until it is back, that
    // instance asks the client to retry rather than telling it the session is gone.
    let mut on_c = at(c.addr, &sid);
    assert_eq!(call(&mut on_c, "ping", json!({})).await.status, 200);
    // A's GET stream goes on, hearing changes seen elsewhere once the bus is back.
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            next_of(&mut stream, UPDATED, Duration::from_millis(300))
                .await
                .is_some()
        })
        .await,
        "the GET stream goes on after the restart"
    );
    // DELETE still ends it everywhere, for good.
    let host = on_c.host();
    let deleted = on_c
        .send(
            "DELETE",
            &[
                ("host", &host),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            b"",
        )
        .await;
    assert_eq!(deleted.status, 204);
    for addr in [a.addr, b.addr] {
        assert!(
            eventually(async || call(&mut at(addr, &sid), "ping", json!({})).await.status == 404)
                .await
        );
    }
    assert!(!exists(&key(&sid)), "a deleted session is not put back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_whose_announcement_was_lost_reaches_the_copies_with_the_resync() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    let level = call(&mut on_b, "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(level.json()["result"], json!({}));
    assert_eq!(noisy_levels(&mut on_b).await, ["info", "error"]);
    // Another instance changed the level; its announcement overflowed its queue, so it
    // told every instance to resync instead.
    let level = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &level]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    assert!(
        eventually(async || {
            let _: i64 = redis_cmd(
                &redis,
                &[
                    "PUBLISH",
                    "rsrc:changes",
                    &message("elsewhere", json!({"resync": ""})),
                ],
            );
            noisy_levels(&mut on_b).await == ["error"]
        })
        .await,
        "B reloads its copy on a resync from another instance"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_writes_only_what_its_request_changed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    // B set the level, and A's copy has not heard yet (the announcement is on its way).
    let error = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &error]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let level: String = redis_cmd(&redis, &["HGET", &key(&sid), "level"]);
    assert_eq!(level, error, "A's save kept B's level");
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(members, [tagged(&sid, "sub", "w:///a")]);
    // And A's copy took the merged state: its level is B's.
    assert_eq!(noisy_levels(&mut at(a.addr, &sid)).await, ["error"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_changes_on_two_instances_all_stay() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    // A subscribes while B changes the level again and again: every change reloads A's
    // copy, racing A's own saves.
    let levels = tokio::spawn({
        let addr = b.addr;
        let sid = sid.clone();
        async move {
            let mut on_b = at(addr, &sid);
            for i in 0..40 {
                let level = if i % 2 == 0 { "info" } else { "warning" };
                call(&mut on_b, "logging/setLevel", json!({"level": level})).await;
            }
        }
    });
    let mut on_a = at(a.addr, &sid);
    for uri in ["w:///a", "w:///b"] {
        let sub = call(&mut on_a, "resources/subscribe", json!({"uri": uri})).await;
        assert_eq!(sub.json()["result"], json!({}));
    }
    levels.await.unwrap();
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(members.len(), 2, "{members:?}");
    // A's own copy still has both: its stream hears each.
    for uri in ["w:///a", "w:///b"] {
        sa.changes().updated(uri);
        let (_, m) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("A's stream hears {uri}"));
        assert_eq!(m["params"]["uri"], uri);
    }
    // The last level B set is A's too.
    assert!(eventually(async || noisy_levels(&mut on_a).await == ["error"]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_no_longer_holds_the_get_stream_cannot_write_it() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, _b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("A holds the stream");
    let stored = |redis: &RedisServer| top_entry(redis, &format!("{}:s0", key(&sid)));
    assert!(eventually(async || stored(&redis) == Some(format!("{}-0", &id[2..]))).await);
    // Another instance claims the stream; its announcement has not reached A.
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "holder", "elsewhere"]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "claims", "1"]);
    sa.changes().updated("w:///a");
    // A's next event is refused by Redis, and A lets go of the stream.
    assert!(
        ends_within(&mut stream, Duration::from_secs(10)).await,
        "A's stream ends: the client is to resume where the stream is held"
    );
    assert_eq!(
        stored(&redis),
        Some(format!("{}-0", &id[2..])),
        "nothing after the claim came from A"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_ids_at_the_top_of_the_range_are_refused_or_numbered_past_without_overflow() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let peer = at(a.addr, &sid);
    for id in [
        "0-18446744073709551615",
        "3-18446744073709551615",
        "0-9007199254740993",
    ] {
        assert_eq!(get_stream(&peer, Some(id)).await.status, 400, "{id}");
    }
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&peer, Some("0-9007199254740992")).await;
    assert_eq!(stream.status, 200);
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("numbered after the client's id");
    assert_eq!(id, "0-9007199254740993");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumption_past_the_end_of_a_finished_stream_ends() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let quick = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///progress", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&quick).unwrap())
        .await;
    let mut last = None;
    while let Some(e) = stream.next_event(Duration::from_secs(5)).await {
        last = e.id.or(last);
    }
    let last = last.expect("a streamed answer");
    let (n, seq) = last.split_once('-').unwrap();
    let beyond = format!("{n}-{}", seq.parse::<u64>().unwrap() + 5);
    // Written to Redis by A's log task: once it is there, B resumes from it.
    let stored = async || {
        top_entry(&redis, &format!("{}:s{n}", key(&sid))).is_some_and(|id| id.ends_with("-1"))
    };
    assert!(eventually(stored).await, "the end is stored");
    // Past the end first: B has no copy of the stream yet, it reads the store.
    for id in [beyond.as_str(), last.as_str()] {
        let mut resumed = get_stream(&at(b.addr, &sid), Some(id)).await;
        assert_eq!(resumed.status, 200);
        assert!(
            ends_within(&mut resumed, Duration::from_secs(5)).await,
            "resumed from {id}: the stream ended, nothing to replay"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_fails_with_503_when_the_store_cannot_delete() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    redis.kill();
    let host = first.host();
    let deleted = first
        .send(
            "DELETE",
            &[
                ("host", &host),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            b"",
        )
        .await;
    assert_eq!(
        deleted.status, 503,
        "not ended: the other instances still serve it"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_elsewhere_is_not_recreated_by_a_save_and_its_busy_copies_end() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A checks the store only every few minutes (its saves are what is tested); B looks
    // at its sessions every second.
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let quick = HttpConfig {
        session_idle: Duration::from_secs(4),
        ..HttpConfig::default()
    };
    let (_sb, b) = instance(&redis, quick).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // B's copy is busy: it serves the GET stream.
    let mut stream = get_stream(&at(b.addr, &sid), None).await;
    assert_eq!(stream.status, 200);
    // B's claim of the stream is announced, and A reloads its copy when it hears it: a
    // reload after the deletion below would end A's copy before its save is tried. A
    // change made on B after the claim is the signal: A's copy shows it only once A has
    // reloaded for everything B announced before it (one channel, reloads in order), and
    // for its own subscription coming up.
    let level = call(
        &mut at(b.addr, &sid),
        "logging/setLevel",
        json!({"level": "error"}),
    )
    .await;
    assert_eq!(level.json()["result"], json!({}));
    assert!(
        eventually(async || noisy_levels(&mut at(a.addr, &sid)).await == ["error"]).await,
        "A hears B's changes"
    );
    // Deleted on some instance; the announcement reaches neither A nor B.
    let k = key(&sid);
    let _: i64 = redis_cmd(
        &redis,
        &["DEL", &k, &format!("{k}:subs"), &format!("{k}:s0")],
    );
    let _: () = redis_cmd(&redis, &["SET", &format!("{k}:gone"), "1", "PX", "60000"]);
    // A's next change finds it gone, and does not bring it back.
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.status, 200);
    assert!(
        !redis_cmd::<bool>(&redis, &["EXISTS", &k]),
        "no record without its owner"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
    // B's busy copy ends at its next check, with its stream.
    assert!(
        ends_within(&mut stream, Duration::from_secs(10)).await,
        "B's copy ends"
    );
}

#[cfg(feature = "jwt")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_identity_cannot_use_a_shared_session_on_any_instance() {
    use rsrc::transport::http::{AuthConfig, JwtVerifier, TokenVerifier};
    let Some(redis) = RedisServer::start() else {
        return;
    };
    const RESOURCE: &str = "https://mcp.example.com/mcp";
    let config = HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Jwt(JwtVerifier::hmac(b"key-one")),
            RESOURCE,
        )),
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let token = |sub: &str| {
        let jwt = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &json!({"aud": RESOURCE, "exp": exp, "sub": sub}),
            &jsonwebtoken::EncodingKey::from_secret(b"key-one"),
        )
        .unwrap();
        format!("Bearer {jwt}")
    };
    let (alice, mallory) = (token("alice"), token("mallory"));
    let mut first = a.peer();
    first.always("authorization", &alice);
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let as_who = |addr, auth: &str| {
        let mut p = at(addr, &sid);
        p.always("authorization", auth);
        p
    };
    let refused = |res: &HttpResponse| res.status == 404;
    // Mallory, on B (which loads it from the store) and on A (which has it): unknown.
    for addr in [b.addr, a.addr] {
        let mut m = as_who(addr, &mallory);
        assert!(refused(&call(&mut m, "ping", json!({})).await), "{addr}");
        let host = m.host();
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut h = vec![
                ("host", host.clone()),
                ("mcp-session-id", sid.clone()),
                ("mcp-protocol-version", "2025-11-25".to_owned()),
                ("authorization", mallory.clone()),
            ];
            h.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
            h
        };
        let get = with(&[("accept", "text/event-stream"), ("last-event-id", "0-1")]);
        let get: Vec<(&str, &str)> = get.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(m.send("GET", &get, b"").await.status, 404);
        let del = with(&[]);
        let del: Vec<(&str, &str)> = del.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(m.send("DELETE", &del, b"").await.status, 404);
    }
    // Alice uses it on B, which now has a copy: still Alice's alone.
    assert_eq!(
        call(&mut as_who(b.addr, &alice), "ping", json!({}))
            .await
            .status,
        200
    );
    assert!(refused(
        &call(&mut as_who(b.addr, &mallory), "ping", json!({})).await
    ));
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_racing_a_save_keeps_the_change_being_saved() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A speaks to Redis through a proxy that can slow Redis's answers down.
    let proxy = RedisProxy::start(redis.port()).await;
    let (sa, a) = instance_at(&proxy.url, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    assert_eq!(stream.status, 200);
    // Every answer now takes 300 ms. Another instance announces a change of the session:
    // A hears it 300 ms later and reloads, and the record it reads (without the
    // subscription below) comes back 300 ms after that...
    proxy.delay(Duration::from_millis(300));
    let _: i64 = redis_cmd(
        &redis,
        &[
            "PUBLISH",
            "rsrc:changes",
            &message(
                "elsewhere",
                json!({"session": bus_keys::session_name(&sid)}),
            ),
        ],
    );
    // ...while A subscribes in between: its save is read after the reload's read.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    proxy.delay(Duration::ZERO);
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The stale record did not take the subscription away from A's copy.
    sa.changes().updated("w:///a");
    assert!(
        next_of(&mut stream, UPDATED, Duration::from_secs(5))
            .await
            .is_some(),
        "A's stream hears the resource it subscribed to"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_stream_with_a_hole_is_not_resumed_elsewhere() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let quick = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///progress", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&quick).unwrap())
        .await;
    let mut ids = Vec::new();
    while let Some(e) = stream.next_event(Duration::from_secs(5)).await {
        ids.extend(e.id);
    }
    let n = ids[0].split_once('-').unwrap().0.to_owned();
    let log = format!("{}:s{n}", key(&sid));
    assert!(
        eventually(async || top_entry(&redis, &log).is_some_and(|id| id.ends_with("-1"))).await,
        "the stream and its end are stored"
    );
    let ttl: i64 = redis_cmd(&redis, &["PTTL", &log]);
    assert!(ttl > 0, "a stored stream always expires");
    // The event in the middle never reached Redis (Redis was away, the queue was full).
    let middle = format!("{}-0", ids[ids.len() - 2].split_once('-').unwrap().1);
    let _: i64 = redis_cmd(&redis, &["XDEL", &log, &middle]);
    let resumed = get_stream(&at(b.addr, &sid), Some(&ids[0])).await;
    assert_eq!(
        resumed.status, 400,
        "not replayed as if nothing were missing"
    );
}

/// Every key of Redis with what it holds, as text (hashes, sets, streams, strings).
fn everything_in(redis: &RedisServer) -> Vec<(String, String)> {
    let keys: Vec<String> = redis_cmd(redis, &["KEYS", "*"]);
    keys.into_iter()
        .map(|k| {
            let kind: String = redis_cmd(redis, &["TYPE", &k]);
            let value = match kind.as_str() {
                "hash" => format!("{:?}", redis_cmd::<Vec<Vec<u8>>>(redis, &["HGETALL", &k])),
                "set" => format!("{:?}", redis_cmd::<Vec<Vec<u8>>>(redis, &["SMEMBERS", &k])),
                "string" => format!("{:?}", redis_cmd::<Vec<u8>>(redis, &["GET", &k])),
                "stream" => format!(
                    "{:?}",
                    redis_cmd::<StreamEntries>(redis, &["XRANGE", &k, "-", "+"])
                ),
                other => other.to_owned(),
            };
            (k, value)
        })
        .collect()
}

/// What a reader of Redis sees of a session whose client authenticates with a static
/// token: neither the session's id (a bearer credential in the 2025 revisions) nor the
/// token's digest, in any key, any value or any message on the channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_never_holds_a_session_id_nor_a_plain_owner_digest() {
    use rsrc::transport::http::{AuthConfig, TokenVerifier};
    use sha2::Digest as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    const TOKEN: &str = "a-static-token-for-every-client-0123456789";
    let config = HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Static(TOKEN.into()),
            "http://localhost/mcp",
        )),
        ..HttpConfig::default()
    };
    // Someone listening on every channel of the namespace.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut spy = client.get_connection().unwrap();
    let mut spy = spy.as_pubsub();
    spy.psubscribe("*").unwrap();
    spy.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let (sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let auth = format!("Bearer {TOKEN}");
    let mut first = a.peer();
    first.always("authorization", &auth);
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    on_b.always("authorization", &auth);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let host = first.host();
    let mut stream = first
        .open(
            "GET",
            &[
                ("host", host.as_str()),
                ("accept", "text/event-stream"),
                ("mcp-session-id", sid.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
                ("authorization", auth.as_str()),
            ],
            b"",
        )
        .await;
    assert_eq!(stream.status, 200);
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("A holds the stream");
    // The session's name (a digest of its id and its owner) is unknown here: its
    // stream 0 is the one stream of the namespace.
    assert!(
        eventually(async || {
            let logs: Vec<String> = redis_cmd(&redis, &["KEYS", "rsrc:session:*:s0"]);
            logs.len() == 1 && top_entry(&redis, &logs[0]) == Some(format!("{}-0", &id[2..]))
        })
        .await,
        "the event is stored"
    );
    let digest: String = sha2::Sha256::digest(TOKEN.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let stored = everything_in(&redis);
    assert!(
        stored.iter().any(|(k, _)| k.starts_with("rsrc:session:")),
        "{stored:?}"
    );
    for (k, v) in &stored {
        for secret in [sid.as_str(), &digest, TOKEN] {
            assert!(!k.contains(secret) && !v.contains(secret), "{k}: {v}");
        }
    }
    let mut heard = 0;
    while let Ok(m) = spy.get_message() {
        let payload: String = m.get_payload().unwrap();
        assert!(!payload.contains(&sid), "{payload}");
        heard += 1;
    }
    assert!(heard > 0, "the spy heard the instances");
}

/// The review's reproduction: an `XADD` into a session's stream reached the client, on
/// resumption, as a request rsrc never sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_written_into_a_replay_log_by_someone_else_is_never_replayed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b, bus_b) = instance_with_bus(&redis.url(), HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("A holds the stream");
    let log = format!("{}:s0", key(&sid));
    let seq: u64 = id[2..].parse().unwrap();
    assert!(
        eventually(async || top_entry(&redis, &log) == Some(format!("{seq}-0"))).await,
        "the event is stored"
    );
    drop(stream);
    // The next event, as someone with write access to Redis but no key puts it there,
    // with a tag copied from the genuine entry.
    let genuine: StreamEntries = redis_cmd(&redis, &["XRANGE", &log, "-", "+"]);
    let tag = genuine[0]
        .1
        .iter()
        .find(|(f, _)| f == "t")
        .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        .unwrap();
    let next = seq + 1;
    let forged = format!(
        "id: 0-{next}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"sampling/createMessage\",\"params\":{{\"messages\":[],\"maxTokens\":1}}}}\n\n"
    );
    let _: String = redis_cmd(
        &redis,
        &[
            "XADD",
            &log,
            &format!("{next}-0"),
            "f",
            &forged,
            "o",
            "1",
            "t",
            &tag,
        ],
    );
    let before = bus_b.rejected().stored;
    // Resumed on B: whatever it replays, then every subscription announced again.
    let mut resumed = get_stream(&at(b.addr, &sid), Some(&id)).await;
    assert_eq!(resumed.status, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let event = resumed
            .next_event(deadline.saturating_duration_since(Instant::now()))
            .await
            .expect("the subscriptions are announced again");
        assert!(
            !event.data.contains("sampling/createMessage"),
            "a forged entry reached the client: {event:?}"
        );
        if event.data.contains(UPDATED) {
            break;
        }
    }
    assert!(
        bus_b.rejected().stored > before,
        "the forged entry is counted"
    );
}

/// A record changed by someone without the keys is not believed; one over its bounds is
/// not even read whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_record_that_does_not_verify_or_is_too_large_is_not_believed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b, bus_b) = instance_with_bus(&redis.url(), HttpConfig::default()).await;
    // Not tagged with the bus keys; tagged, but over the bound of what is read back.
    for field in ["version", "client"] {
        let mut first = a.peer();
        first.initialize().await;
        let sid = first.session().unwrap().to_owned();
        let value = match field {
            "version" => "2025-06-18".to_owned(),
            _ => tagged(
                &sid,
                "client",
                &format!("{{\"x\":\"{}\"}}", "x".repeat(1 << 20)),
            ),
        };
        let _: () = redis_cmd(&redis, &["HSET", &key(&sid), field, &value]);
        let before = bus_b.rejected().stored;
        assert_eq!(
            call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
            404,
            "{field}"
        );
        assert!(bus_b.rejected().stored > before, "{field}");
    }
}

/// What a session stores of its client is bounded: a client describing itself at great
/// length is shared by its name and version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_information_is_stored_within_a_few_kib() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
            "capabilities": {"experimental": {"x": "y".repeat(100_000)}},
            "clientInfo": {"name": "verbose", "version": "1", "title": "t".repeat(50_000)}}});
    let res = a.peer().post(&init).await;
    assert_eq!(res.status, 200);
    let sid = res.header("mcp-session-id").unwrap().to_owned();
    let client: String = redis_cmd(&redis, &["HGET", &key(&sid), "client"]);
    assert!(client.len() <= 4 * 1024 + 64, "{} bytes", client.len());
    assert!(client.contains("verbose"), "{client}");
    assert_eq!(
        call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
        200,
        "the session is served elsewhere"
    );
}

/// The review's reproduction: `--max-sessions 3` with 12 sessions left 12 records in
/// Redis, and an evicted session came back from Redis and answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_session_ends_everywhere_and_redis_keeps_no_more_than_the_cap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let capped = HttpConfig {
        max_sessions: 3,
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, capped).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..12 {
        let mut p = a.peer();
        p.initialize().await;
        ids.push(p.session().unwrap().to_owned());
    }
    let records = || {
        let keys: Vec<String> = redis_cmd(&redis, &["KEYS", "rsrc:session:*"]);
        keys.iter().filter(|k| k.matches(':').count() == 2).count()
    };
    assert!(
        eventually(async || records() <= 3).await,
        "{} records for a cap of 3",
        records()
    );
    for sid in &ids[..9] {
        assert_eq!(
            call(&mut at(b.addr, sid), "ping", json!({})).await.status,
            404,
            "an evicted session answers nowhere"
        );
        assert_eq!(
            call(&mut at(a.addr, sid), "ping", json!({})).await.status,
            404
        );
    }
    for sid in &ids[9..] {
        assert_eq!(
            call(&mut at(b.addr, sid), "ping", json!({})).await.status,
            200
        );
    }
}

/// The review's reproduction: 200 resyncs made ~10,000 session reloads for 40 sessions.
/// Coalesced, a burst costs each copy one reload (two if it straddles the rate limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_resyncs_reloads_each_session_about_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..40 {
        let mut p = a.peer();
        p.initialize().await;
        let sid = p.session().unwrap().to_owned();
        // B has a copy of each.
        assert_eq!(
            call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
            200
        );
        ids.push(sid);
    }
    // Every record changes behind B's back (its announcement lost), so that B's reloads
    // show; then 200 resyncs arrive at once.
    for sid in &ids {
        let _: () = redis_cmd(
            &redis,
            &["HSET", &key(sid), "level", &tagged(sid, "level", "error")],
        );
        let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(sid), "rev", "1"]);
    }
    let _: () = redis_cmd(&redis, &["CONFIG", "RESETSTAT"]);
    let mut c = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut p = redis::pipe();
    for _ in 0..200 {
        p.cmd("PUBLISH")
            .arg("rsrc:changes")
            .arg(message("elsewhere", json!({"resync": ""})))
            .ignore();
    }
    p.query::<()>(&mut c).unwrap();
    // B reloads its copies: one has the new level (a read costs a few scripts too, so
    // only one is read).
    assert!(
        eventually(async || noisy_levels(&mut at(b.addr, &ids[0])).await == ["error"]).await,
        "B reloaded its copies"
    );
    // Whatever else the burst causes comes within the rate limit's period (1 s).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stats: String = redis_cmd(&redis, &["INFO", "commandstats"]);
    let calls = |cmd: &str| {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{cmd}:calls=")))
            .and_then(|rest| rest.split(',').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Each reload is one script; the leases and the read add a few dozen.
    let scripts = calls("evalsha") + calls("eval");
    eprintln!("{scripts} scripts ran for 40 sessions and 200 resyncs");
    assert!(
        scripts < 200,
        "{scripts} scripts for 40 sessions and 200 resyncs (one reload each is 40)"
    );
}

/// The cluster flake of issue 29: after Redis restarted empty, an idle session (no
/// stream, no request) was put back only if its instances happened to reload their
/// copies twice. The reload when the subscription comes back is the only path for an
/// idle copy, and its first round trip meets a connection that died with Redis: a
/// reload the store cannot answer is now tried again instead of dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_put_back_after_redis_restarts_empty_without_any_request() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    // Leases renewed only every 40 s: nothing but the reload when the subscription
    // comes back (no failed lease renewal restarting the subscription a second time)
    // can put the session back within the test's 10 s.
    let mut options = bus_keys::options();
    options.lease_ttl = Duration::from_secs(120);
    let (_sa, a, _) = instance_with_options(&redis.url(), HttpConfig::default(), options).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // A resync round has run, and its reload used the store's connection (which dies
    // with Redis): its level, changed behind its back, shows. The next round comes a
    // rate-limit period later at the earliest.
    let error = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &error]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    let _: i64 = redis_cmd(
        &redis,
        &[
            "PUBLISH",
            "rsrc:changes",
            &message("elsewhere", json!({"resync": ""})),
        ],
    );
    assert!(eventually(async || noisy_levels(&mut first).await == ["error"]).await);
    let exists = |redis: &RedisServer| redis_cmd::<bool>(redis, &["EXISTS", &key(&sid)]);
    assert!(exists(&redis));
    redis.restart();
    assert!(!exists(&redis));
    assert!(
        eventually(async || exists(&redis)).await,
        "the idle session is put back from A's copy, with no request to A"
    );
}
