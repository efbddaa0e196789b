//! Three `rsrc serve --http` instances behind HAProxy (round-robin, no stickiness) with a
//! Redis bus, as `scripts/cluster` starts them: changes reach a listener whichever
//! instance saw them, cursors continue on any instance, the watch of a database moves
//! when its holder dies, and Redis going away (and coming back empty) costs no reads, no
//! silent loss and no 2025 session.
//!
//! Each test starts its own cluster on free loopback ports and stops it when done.
//! Without redis-server and haproxy the script installs them (Debian packages).

#[path = "common/cluster.rs"]
mod cluster;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cluster::{Cluster, script};
use rsrc_testkit::{HttpPeer, SseStream};
use serde_json::{Value, json};

/// The methods and URIs of the notifications `stream` delivers within `wait`, until
/// `done` says enough.
async fn heard(
    stream: &mut SseStream,
    wait: Duration,
    done: impl Fn(&[(String, String)]) -> bool,
) -> Vec<(String, String)> {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    while !done(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let Some(event) = stream.next_event(left).await else {
            break;
        };
        let Ok(msg) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        got.push((
            msg["method"].as_str().unwrap_or_default().to_owned(),
            msg["params"]["uri"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    got
}

fn has(got: &[(String, String)], method: &str, uri: &str) -> bool {
    got.iter().any(|(m, u)| m == method && u == uri)
}

const UPDATED: &str = "notifications/resources/updated";
const LIST_CHANGED: &str = "notifications/resources/list_changed";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_hears_file_and_database_changes_whichever_instance_sees_them() {
    let c = Cluster::start(0);
    // The stream is held by an instance that watches neither source (of three, one
    // always is), so that both changes cross instances.
    let watchers = [
        c.lease_holder("file:///").await,
        c.lease_holder("db://shop").await,
    ];
    let bystander = c.instances[c.pids.iter().position(|p| !watchers.contains(p)).unwrap()];
    let mut stream = c
        .listen(bystander, &["file:///a.txt", "db://shop/items/1"])
        .await;
    // The requests around the stream land on every instance.
    for _ in 0..4 {
        let read = c
            .call(
                c.balancer,
                "resources/read",
                json!({"uri": "file:///a.txt"}),
            )
            .await;
        assert_eq!(read["result"]["contents"][0]["text"], "first");
    }
    std::fs::write(c.docs.join("a.txt"), "second").unwrap();
    c.commit("UPDATE items SET name = 'uno' WHERE id = 1");
    let got = heard(&mut stream, Duration::from_secs(10), |g| {
        has(g, UPDATED, "file:///a.txt") && has(g, UPDATED, "db://shop/items/1")
    })
    .await;
    assert!(has(&got, UPDATED, "file:///a.txt"), "{got:?}");
    assert!(has(&got, UPDATED, "db://shop/items/1"), "{got:?}");
    assert!(
        has(&got, LIST_CHANGED, ""),
        "a commit changes the list: {got:?}"
    );
    // Every instance reads what changed.
    for addr in &c.instances {
        let read = c
            .call(*addr, "resources/read", json!({"uri": "db://shop/items/1"}))
            .await;
        let row: Value =
            serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(row["name"], "uno");
    }
}

/// Every file URI of a walk of `resources/list` under `many/`, each page from the next
/// of `addrs` in turn.
async fn walk(c: &Cluster, addrs: &[SocketAddr]) -> Vec<String> {
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    for turn in 0.. {
        let mut params = json!({"uri": "file:///many/"});
        if let Some(cur) = &cursor {
            params["cursor"] = json!(cur);
        }
        let page = c
            .call(addrs[turn % addrs.len()], "resources/list", params)
            .await;
        let result = &page["result"];
        for r in result["resources"].as_array().expect("a page") {
            uris.push(r["uri"].as_str().unwrap().to_owned());
        }
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return uris,
        }
    }
    unreachable!()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_walk_alternating_instances_returns_every_file_exactly_once() {
    const FILES: usize = 10_000;
    let c = Cluster::start(FILES);
    for addrs in [vec![c.balancer], c.instances.clone()] {
        let uris = walk(&c, &addrs).await;
        let unique: BTreeSet<&String> = uris.iter().collect();
        assert_eq!(uris.len(), FILES, "through {addrs:?}");
        assert_eq!(unique.len(), FILES, "no file twice");
        assert!(uris.iter().all(|u| u.starts_with("file:///many/")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_lease_holder_moves_the_database_watch_within_5_s() {
    let c = Cluster::start(0);
    let holder = c.lease_holder("db://shop").await;
    // A listener on a surviving instance.
    let survivor = c.instances[c.pids.iter().position(|&p| p != holder).unwrap()];
    let mut stream = c.listen(survivor, &["db://shop/items/2"]).await;
    c.kill(holder);
    let killed = Instant::now();
    let moved = loop {
        match c.holder("db://shop") {
            Some(pid) if pid != holder => break killed.elapsed(),
            _ => {}
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the watch did not move within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    eprintln!("the database watch moved {moved:?} after its holder was killed");
    c.commit("UPDATE items SET name = 'dos' WHERE id = 2");
    let got = heard(&mut stream, Duration::from_secs(5), |g| {
        has(g, UPDATED, "db://shop/items/2")
    })
    .await;
    assert!(has(&got, UPDATED, "db://shop/items/2"), "{got:?}");
}

/// A new 2025-11-25 session, initialized on the instance at `addr`.
async fn legacy_session(addr: SocketAddr) -> String {
    let init = HttpPeer::new(addr)
        .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "cluster-test", "version": "0"}}}))
        .await;
    assert_eq!(init.status, 200);
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    let initialized = legacy_at(addr, &sid)
        .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(initialized.status, 202);
    sid
}

/// The status of a `ping` in session `sid` on the instance at `addr`.
async fn legacy_ping(addr: SocketAddr, sid: &str) -> u16 {
    legacy_at(addr, sid)
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await
        .status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_reads_go_on_and_listeners_hear_list_changed_once_it_is_back() {
    let c = Cluster::start(0);
    let mut stream = c.listen(c.balancer, &["file:///a.txt"]).await;
    // A 2025 session that two of the instances know.
    let sid = legacy_session(c.instances[0]).await;
    assert_eq!(legacy_ping(c.instances[1], &sid).await, 200);
    let state = c.state.to_str().unwrap();
    script(&["redis", state, "stop"]);
    for _ in 0..6 {
        let read = c
            .call(
                c.balancer,
                "resources/read",
                json!({"uri": "db://shop/items/1"}),
            )
            .await;
        assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    }
    // The instances that know the session serve it on.
    for addr in &c.instances[..2] {
        assert_eq!(legacy_ping(*addr, &sid).await, 200);
    }
    // Redis comes back empty (it keeps nothing on disk).
    script(&["redis", state, "start"]);
    let got = heard(&mut stream, Duration::from_secs(15), |g| {
        has(g, LIST_CHANGED, "") && has(g, UPDATED, "file:///a.txt")
    })
    .await;
    assert!(has(&got, LIST_CHANGED, ""), "{got:?}");
    assert!(has(&got, UPDATED, "file:///a.txt"), "{got:?}");
    // The session is put back from the instances' copies: the third serves it too.
    let deadline = Instant::now() + Duration::from_secs(15);
    while legacy_ping(c.instances[2], &sid).await != 200 {
        assert!(
            Instant::now() < deadline,
            "the session never came back to Redis"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for addr in &c.instances {
        assert_eq!(legacy_ping(*addr, &sid).await, 200);
    }
}

/// A 2025-11-25 client of session `sid`, speaking to the instance at `addr`.
fn legacy_at(addr: SocketAddr, sid: &str) -> HttpPeer {
    let mut p = HttpPeer::new(addr);
    p.set_session(Some(sid.to_owned()));
    p
}

async fn legacy_call(peer: &mut HttpPeer, method: &str, params: Value) -> Value {
    let id = peer.next_id();
    let res = peer
        .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    assert_eq!(res.status, 200, "{method}: {:?}", res.messages);
    res.json().clone()
}

async fn legacy_get(peer: &HttpPeer, last_event_id: Option<&str>) -> SseStream {
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
    let s = peer.open("GET", &h, b"").await;
    assert_eq!(s.status, 200);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_works_with_every_post_on_another_instance_and_resumes_after_its_holder_is_killed()
 {
    let c = Cluster::start(0);
    let watchers = [
        c.lease_holder("file:///").await,
        c.lease_holder("db://shop").await,
    ];
    // The GET stream goes to an instance that watches neither source, which is then
    // killed: no watch moves, and the resumption is the only thing tested.
    let holder = c.pids.iter().position(|p| !watchers.contains(p)).unwrap();
    let others: Vec<SocketAddr> = (0..3)
        .filter(|&i| i != holder)
        .map(|i| c.instances[i])
        .collect();
    let mut first = HttpPeer::new(others[0]);
    let init = first
        .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "cluster-test", "version": "0"}}}))
        .await;
    assert_eq!(init.status, 200);
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    // Each message on the next instance round.
    let round: Vec<SocketAddr> = (0..3).map(|i| c.instances[i]).collect();
    let initialized = legacy_at(round[1], &sid)
        .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(initialized.status, 202);
    for (i, uri) in ["file:///a.txt", "db://shop/items/1"].iter().enumerate() {
        let ok = legacy_call(
            &mut legacy_at(round[(i + 2) % 3], &sid),
            "resources/subscribe",
            json!({"uri": uri}),
        )
        .await;
        assert_eq!(ok["result"], json!({}));
    }
    for addr in &round {
        let read = legacy_call(
            &mut legacy_at(*addr, &sid),
            "resources/read",
            json!({"uri": "file:///a.txt"}),
        )
        .await;
        assert_eq!(read["result"]["contents"][0]["text"], "first");
    }

    let mut stream = legacy_get(&legacy_at(c.instances[holder], &sid), None).await;
    std::fs::write(c.docs.join("a.txt"), "second").unwrap();
    let mut last = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while last.is_none() && Instant::now() < deadline {
        let Some(e) = stream.next_event(Duration::from_secs(1)).await else {
            continue;
        };
        if e.data.contains(UPDATED) && e.data.contains("file:///a.txt") {
            last = e.id;
        }
    }
    let last = last.expect("the GET stream hears the file change");

    // The holder dies; a commit happens while no one holds the stream.
    c.kill(c.pids[holder]);
    drop(stream);
    c.commit("UPDATE items SET name = 'uno' WHERE id = 1");
    let read = legacy_call(
        &mut legacy_at(others[1], &sid),
        "resources/read",
        json!({"uri": "db://shop/items/1"}),
    )
    .await;
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("uno")
    );

    // Resumed on a survivor: every subscription is announced again, then changes flow.
    let mut resumed = legacy_get(&legacy_at(others[0], &sid), Some(&last)).await;
    let got = heard(&mut resumed, Duration::from_secs(10), |g| {
        has(g, UPDATED, "file:///a.txt") && has(g, UPDATED, "db://shop/items/1")
    })
    .await;
    assert!(has(&got, UPDATED, "db://shop/items/1"), "{got:?}");
    assert!(has(&got, UPDATED, "file:///a.txt"), "{got:?}");
    std::fs::write(c.docs.join("a.txt"), "third").unwrap();
    let got = heard(&mut resumed, Duration::from_secs(10), |g| {
        has(g, UPDATED, "file:///a.txt")
    })
    .await;
    assert!(has(&got, UPDATED, "file:///a.txt"), "{got:?}");

    // DELETE on one survivor ends the session on the other.
    let mut ender = legacy_at(others[1], &sid);
    let host = ender.host();
    let deleted = ender
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
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let id = ender.next_id();
        let res = legacy_at(others[0], &sid)
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        if res.status == 404 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the session still answers after DELETE"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
