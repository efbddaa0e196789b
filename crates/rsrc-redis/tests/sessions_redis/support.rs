//! What every shared-session test uses: HTTP instances of one server on one Redis, a
//! client speaking for a session to the instance of the test's choice, SSE streams and
//! the notifications on them, Redis read and written directly, and waiting for a
//! condition rather than for time. Invariant: an instance is built in one place
//! ([`instance_with_options`]), so every test serves the same resources over the same
//! bus keys.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rsrc::Server;
use rsrc::protocol::Resource;
use rsrc_http::HttpConfig;
use rsrc_redis::RedisBus;
use rsrc_testkit::redis::RedisServer;
use rsrc_testkit::{HttpPeer, HttpResponse, SseStream};
use serde_json::{Value, json};

use crate::harness::{Running, start_with};
use crate::{bus_keys, common};

pub(crate) const UPDATED: &str = "notifications/resources/updated";

pub(crate) async fn instance(redis: &RedisServer, config: HttpConfig) -> (Server, Running) {
    instance_at(&redis.url(), config).await
}

pub(crate) async fn instance_at(url: &str, config: HttpConfig) -> (Server, Running) {
    let (server, running, _) = instance_with_bus(url, config).await;
    (server, running)
}

/// An instance, with its bus (to read what it refused).
pub(crate) async fn instance_with_bus(
    url: &str,
    config: HttpConfig,
) -> (Server, Running, RedisBus) {
    instance_with_options(url, config, bus_keys::options()).await
}

pub(crate) async fn instance_with_options(
    url: &str,
    config: HttpConfig,
    options: rsrc_redis::RedisBusOptions,
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
pub(crate) fn at(addr: SocketAddr, session: &str) -> HttpPeer {
    let mut p = HttpPeer::new(addr);
    p.set_session(Some(session.to_owned()));
    p
}

pub(crate) async fn call(peer: &mut HttpPeer, method: &str, params: Value) -> HttpResponse {
    let id = peer.next_id();
    peer.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await
}

pub(crate) async fn get_stream(peer: &HttpPeer, last_event_id: Option<&str>) -> SseStream {
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
pub(crate) async fn next_of(
    stream: &mut SseStream,
    method: &str,
    wait: Duration,
) -> Option<(String, Value)> {
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
pub(crate) fn redis_cmd<T: redis::FromRedisValue>(redis: &RedisServer, args: &[&str]) -> T {
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
pub(crate) type StreamEntries = Vec<(String, Vec<(String, Vec<u8>)>)>;

/// The id of the newest entry of the stream `log`.
pub(crate) fn top_entry(redis: &RedisServer, log: &str) -> Option<String> {
    let top: StreamEntries = redis_cmd(redis, &["XREVRANGE", log, "+", "-", "COUNT", "1"]);
    top.into_iter().next().map(|(id, _)| id)
}

/// The `notifications/message` levels of a read of `sample:///noisy` (one info, one
/// error line) through `peer`.
pub(crate) async fn noisy_levels(peer: &mut HttpPeer) -> Vec<String> {
    let res = call(peer, "resources/read", json!({"uri": "sample:///noisy"})).await;
    res.messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Whether `stream` ends (rather than goes quiet) within `wait`.
pub(crate) async fn ends_within(stream: &mut SseStream, wait: Duration) -> bool {
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
pub(crate) async fn eventually<F: AsyncFnMut() -> bool>(mut f: F) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
