//! Sessions of the 2025 revisions shared through Redis: two HTTP instances on one Redis
//! (a throwaway `redis-server`) serve one session, whichever gets each request — its
//! subscriptions, log level, GET stream, resumption, DELETE and expiry.

mod common;
#[path = "common/http.rs"]
mod harness;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use harness::{Running, standard, start_with};
use rsrc::Server;
use rsrc::bus::{RedisBus, RedisBusOptions};
use rsrc::protocol::Resource;
use rsrc::transport::http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use rsrc_testkit::{HttpPeer, HttpResponse, SseStream};
use serde_json::{Value, json};

const UPDATED: &str = "notifications/resources/updated";

async fn instance(redis: &RedisServer, config: HttpConfig) -> (Server, Running) {
    let mut options = RedisBusOptions::default();
    options.lease_ttl = Duration::from_millis(900);
    let bus = RedisBus::connect(&redis.url(), options).await.unwrap();
    let server = Server::builder("rsrc-shared-sessions", "0")
        .mount("sample:", common::sample_set())
        .mount(
            "w:",
            rsrc::ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_subscriptions(),
        )
        .bus(bus)
        .build()
        .unwrap();
    let running = start_with(server.clone(), config).await;
    (server, running)
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

    // Unsubscribed on B: A's stream no longer hears the resource.
    let unsub = call(&mut on_b, "resources/unsubscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(unsub.json()["result"], json!({}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    sb.changes().updated("w:///a");
    assert!(
        next_of(&mut stream, UPDATED, Duration::from_millis(600))
            .await
            .is_none()
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
    // A second notification the client never reads: its connection breaks first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(stream);
    sa.changes().updated("w:///a");
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.shut_down().await;
    drop(sa);

    // Resumed on B: the missed event from the shared log, then every subscription again.
    let mut resumed = get_stream(&at(b.addr, &sid), Some(&first_id)).await;
    assert_eq!(resumed.status, 200);
    let (replayed, msg) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("the event written by A is replayed");
    assert_eq!(msg["params"]["uri"], "w:///a");
    let seq = |id: &str| id.split_once('-').unwrap().1.parse::<u64>().unwrap();
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
