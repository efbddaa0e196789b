//! Streamable HTTP over real loopback sockets, 2025 revisions: sessions, their streams
//! and limits, many clients reusing ids, and shutdown. Every JSON-RPC message the server
//! sends is validated against the official schema by the `HttpPeer`. The stateless
//! revision is in `http_stateless.rs`, the defences and authentication in
//! `http_defences.rs`.

#[path = "../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "common/http.rs"]
mod harness;

use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc_http::HttpConfig;
use serde_json::{Value, json};
use tokio::net::TcpStream;

use harness::{INIT, modern, read, standard, start, start_with, watched};

// ----- 2025 revisions: sessions -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_issues_a_session_id_of_visible_ascii_with_enough_entropy() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    let res = peer.initialize().await;
    assert_eq!(res.content_type(), "application/json");
    let id = peer.session().expect("a session id").to_owned();
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
    // base64url without padding: 6 bits per character.
    assert!(id.len() * 6 >= 128, "{id}");
    let other = srv.peer().clone().initialize().await;
    assert_ne!(other.header("mcp-session-id"), Some(id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_session_is_400_and_an_unknown_one_404() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    let msg = read(&mut peer, "sample:///README.md");
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.error_code(), Some(-32600));
    peer.set_session(Some("not-a-session".into()));
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_session_and_later_requests_get_404() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let res = peer
        .send("DELETE", &[("host", &host), ("mcp-session-id", &sid)], b"")
        .await;
    assert_eq!(res.status, 204);
    let msg = read(&mut peer, "sample:///README.md");
    assert_eq!(peer.post(&msg).await.status, 404);
    let again = peer
        .send("DELETE", &[("host", &host), ("mcp-session-id", &sid)], b"")
        .await;
    assert_eq!(again.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_and_responses_are_accepted_with_202_and_no_body() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    for msg in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
    ] {
        let res = peer.post(&msg).await;
        assert_eq!(res.status, 202);
        assert!(res.body.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_version_header_is_checked() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let body = serde_json::to_vec(&read(&mut peer, "sample:///README.md")).unwrap();
    for (version, status) in [
        (Some("2025-11-25"), 200),
        (Some("2025-06-18"), 200),
        (Some("2025-03-26"), 200),
        (None, 200),
        (Some("1999-01-01"), 400),
    ] {
        let mut h = standard(&host);
        h.push(("mcp-session-id", &sid));
        if let Some(v) = version {
            h.push(("mcp-protocol-version", v));
        }
        let res = peer.send("POST", &h, &body).await;
        assert_eq!(res.status, status, "{version:?}");
        if status == 400 {
            let e = &res.json()["error"];
            assert_eq!(e["code"], -32022);
            assert_eq!(e["data"]["requested"], "1999-01-01");
            assert!(
                e["data"]["supported"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("2025-11-25"))
            );
        } else {
            assert_eq!(res.json()["result"]["contents"][0]["text"], "# Sample\n");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_posts_on_one_session_are_all_answered() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let mut tasks = Vec::new();
    for i in 0..32 {
        let mut p = peer.clone();
        tasks.push(tokio::spawn(async move {
            let word = format!("w{i}");
            let msg = json!({"jsonrpc": "2.0", "id": i, "method": "resources/read",
                "params": {"uri": format!("echo:///{word}")}});
            let res = p.post(&msg).await;
            assert_eq!(res.status, 200);
            assert_eq!(res.json()["id"], i);
            assert_eq!(res.json()["result"]["contents"][0]["text"], word);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_opens_one_standalone_stream_and_a_second_is_409() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let h = [
        ("host", host.as_str()),
        ("accept", "text/event-stream"),
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut first = peer.open("GET", &h, b"").await;
    assert_eq!(first.status, 200);
    assert_eq!(first.headers["content-type"], "text/event-stream");
    assert_eq!(first.headers["x-accel-buffering"], "no");
    // 2025-11-25 streams open with a primed event id.
    let prime = first.next_event(Duration::from_secs(5)).await.unwrap();
    assert_eq!(prime.id.as_deref(), Some("0-0"));
    assert!(prime.data.is_empty());
    let second = peer.send("GET", &h, b"").await;
    assert_eq!(second.status, 409);
    drop(first);
    // The first stream's reader is released once the server sees it gone.
    let mut status = 0;
    for _ in 0..50 {
        let s = peer.open("GET", &h, b"").await;
        status = s.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200);
    let no_accept = peer
        .send(
            "GET",
            &[
                ("host", &host),
                ("accept", "application/json"),
                ("mcp-session-id", &sid),
            ],
            b"",
        )
        .await;
    assert_eq!(no_accept.status, 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_progress_is_answered_on_a_numbered_stream() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
        "params": {"uri": "sample:///progress", "_meta": {"progressToken": "p"}}});
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.content_type(), "text/event-stream");
    let methods: Vec<_> = res
        .messages
        .iter()
        .map(|m| {
            m.get("method")
                .and_then(Value::as_str)
                .unwrap_or("response")
        })
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "response"
        ]
    );
    assert_eq!(res.json()["id"], 7);
    let text = String::from_utf8(res.body.clone()).unwrap();
    assert!(text.contains("id: 1-0\ndata: \n\n"), "primed: {text}");
    assert!(text.contains("id: 1-3\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_replays_only_the_later_events_of_that_stream() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    // Another stream of the same session, running alongside.
    let mut other = peer.clone();
    let busy = tokio::spawn(async move {
        other
            .post(
                &json!({"jsonrpc": "2.0", "id": 100, "method": "resources/read",
                "params": {"uri": "sample:///progress", "_meta": {"progressToken": "other"}}}),
            )
            .await
    });
    let slow = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///slow", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&slow).unwrap())
        .await;
    assert_eq!(stream.status, 200);
    let mut last = None;
    for _ in 0..3 {
        let e = stream.next_event(Duration::from_secs(5)).await.unwrap();
        last = e.id;
    }
    drop(stream); // the connection breaks
    busy.await.unwrap();
    let last = last.unwrap();
    let (stream_no, seq) = last.split_once('-').unwrap();
    let seq: u64 = seq.parse().unwrap();
    let mut resumed = peer
        .open(
            "GET",
            &[
                ("host", &host),
                ("accept", "text/event-stream"),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
                ("last-event-id", &last),
            ],
            b"",
        )
        .await;
    assert_eq!(resumed.status, 200);
    resumed.answering("resources/read");
    let mut expected = seq + 1;
    let mut response = None;
    while let Some(e) = resumed.next_event(Duration::from_secs(10)).await {
        let id = e.id.unwrap();
        assert_eq!(
            id,
            format!("{stream_no}-{expected}"),
            "in order, nothing skipped"
        );
        expected += 1;
        let msg: Value = serde_json::from_str(&e.data).unwrap();
        if let Some(token) = msg.pointer("/params/progressToken") {
            assert_eq!(token, "mine", "only this stream's events");
        } else {
            response = Some(msg);
        }
    }
    let response = response.expect("the response was replayed");
    assert_eq!(response["id"], 8);
    assert_eq!(response["result"]["contents"][0]["text"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_unused_for_too_long_ends() {
    let idle = Duration::from_millis(100);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig {
        session_idle: idle,
        ..HttpConfig::default()
    };
    let service = rsrc_http::HttpService::new(&harness::test_server(), config, addr);
    let app = service.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut peer = rsrc_testkit::HttpPeer::new(addr);
    peer.initialize().await;
    service.expire_sessions();
    assert_eq!(service.sessions(), 1, "a session used just now is kept");
    // Idle means unused for `idle` of the sessions' clock (wall time): let that pass,
    // then expire at once instead of waiting for the periodic sweep.
    tokio::time::sleep(idle * 2).await;
    service.expire_sessions();
    assert_eq!(service.sessions(), 0);
    let msg = read(&mut peer, "sample:///README.md");
    assert_eq!(peer.post(&msg).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_initialize_keeps_the_session_count_bounded() {
    let srv = start(HttpConfig {
        max_sessions: 3,
        ..HttpConfig::default()
    })
    .await;
    let mut first = srv.peer();
    first.initialize().await;
    let mut newest = srv.peer();
    for _ in 0..20 {
        newest = srv.peer();
        newest.initialize().await;
    }
    let msg = read(&mut newest, "sample:///README.md");
    assert_eq!(newest.post(&msg).await.status, 200);
    let msg = read(&mut first, "sample:///README.md");
    assert_eq!(
        first.post(&msg).await.status,
        404,
        "the least recently used went"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_sessions_are_never_evicted_and_initialize_then_gets_503() {
    let srv = start(HttpConfig {
        max_sessions: 2,
        ..HttpConfig::default()
    })
    .await;
    let mut streams = Vec::new();
    let mut peers = Vec::new();
    for _ in 0..2 {
        let mut p = srv.peer();
        p.initialize().await;
        let sid = p.session().unwrap().to_owned();
        let host = p.host();
        let s = p
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
        assert_eq!(s.status, 200);
        streams.push(s);
        peers.push(p);
    }
    let host = srv.addr.to_string();
    let res = srv
        .peer()
        .send("POST", &standard(&host), INIT.as_bytes())
        .await;
    assert_eq!(res.status, 503);
    assert!(res.header("retry-after").is_some());
    assert!(res.header("mcp-session-id").is_none());
    for p in &mut peers {
        let msg = read(p, "sample:///README.md");
        assert_eq!(p.post(&msg).await.status, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_requests_allocate_no_session() {
    let srv = start(HttpConfig {
        max_sessions: 1,
        ..HttpConfig::default()
    })
    .await;
    let mut kept = srv.peer();
    kept.initialize().await;
    let host = srv.addr.to_string();
    let bad_init =
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}"#;
    for body in [
        bad_init,
        "{not json",
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    ] {
        let res = srv
            .peer()
            .send("POST", &standard(&host), body.as_bytes())
            .await;
        assert!(res.header("mcp-session-id").is_none(), "{body}");
    }
    let msg = read(&mut kept, "sample:///README.md");
    assert_eq!(
        kept.post(&msg).await.status,
        200,
        "the one session survived"
    );
}

/// Waits for the first progress notification on a request's stream: the request runs.
async fn until_progress(stream: &mut rsrc_testkit::SseStream) {
    loop {
        let e = stream
            .next_event(Duration::from_secs(5))
            .await
            .expect("the request reports progress");
        if e.data.contains("notifications/progress") {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_a_bounded_number_of_requests_at_once() {
    let srv = start(HttpConfig {
        max_in_flight: 2,
        ..HttpConfig::default()
    })
    .await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let (host, sid) = (peer.host(), peer.session().unwrap().to_owned());
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    let mut slow = Vec::new();
    for i in 0..2 {
        let msg = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/read",
            "params": {"uri": "sample:///slow", "_meta": {"progressToken": i}}});
        let mut stream = peer.open("POST", &h, msg.to_string().as_bytes()).await;
        until_progress(&mut stream).await;
        slow.push(stream);
    }
    let msg = read(&mut peer, "sample:///README.md");
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 429);
    assert_eq!(res.json()["id"], msg["id"]);
    assert!(res.header("retry-after").is_some());
    for mut stream in slow {
        let mut answered = false;
        while let Some(e) = stream.next_event(Duration::from_secs(10)).await {
            answered |= e.data.contains("\"result\"");
        }
        assert!(answered, "the slow reads finish");
    }
    assert_eq!(peer.post(&msg).await.status, 200, "room again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_lived_streams_are_capped() {
    let srv = start_with(
        watched(),
        HttpConfig {
            max_streams: 1,
            ..HttpConfig::default()
        },
    )
    .await;
    let mut a = srv.peer();
    a.initialize().await;
    let (sid, host) = (a.session().unwrap().to_owned(), a.host());
    let get = [
        ("host", host.as_str()),
        ("accept", "text/event-stream"),
        ("mcp-session-id", sid.as_str()),
    ];
    let open = a.open("GET", &get, b"").await;
    assert_eq!(open.status, 200);
    let mut b = srv.peer();
    b.initialize().await;
    let sid_b = b.session().unwrap().to_owned();
    let res = b
        .send(
            "GET",
            &[
                ("host", &host),
                ("accept", "text/event-stream"),
                ("mcp-session-id", &sid_b),
            ],
            b"",
        )
        .await;
    assert_eq!(res.status, 503);
    let mut m = modern(&srv);
    let listen = m.modern_request("subscriptions/listen", json!({"notifications": {}}));
    let res = m.post(&listen).await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json()["id"], listen["id"]);
    drop(open);
    let mut status = 0;
    for _ in 0..50 {
        let s = b
            .open(
                "GET",
                &[
                    ("host", &host),
                    ("accept", "text/event-stream"),
                    ("mcp-session-id", &sid_b),
                ],
                b"",
            )
            .await;
        status = s.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the place was given back");
}

// ----- many clients, same ids -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_never_cross_between_clients_reusing_the_same_ids() {
    let srv = start(HttpConfig::default()).await;
    let mut tasks = Vec::new();
    for client in 0..24 {
        let mut peer = srv.peer();
        tasks.push(tokio::spawn(async move {
            if client % 2 == 0 {
                peer.initialize().await;
            } else {
                peer.speak(ProtocolVersion::V2026_07_28);
            }
            for round in 0..10 {
                let word = format!("c{client}r{round}");
                let mut msg = read(&mut peer, &format!("echo:///{word}"));
                msg["id"] = json!(1);
                let res = peer.post(&msg).await;
                assert_eq!(res.status, 200);
                assert_eq!(res.json()["id"], 1);
                assert_eq!(res.json()["result"]["contents"][0]["text"], word);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

// ----- shutdown -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_requests_in_flight_and_closes_streams() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
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
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    let msg = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read",
        "params": {"uri": "sample:///slow", "_meta": {"progressToken": "t"}}});
    let mut slow = peer.open("POST", &h, msg.to_string().as_bytes()).await;
    until_progress(&mut slow).await;
    let addr = srv.addr;
    let started = std::time::Instant::now();
    let closing = tokio::spawn(srv.shut_down());
    let mut response = None;
    while let Some(e) = slow.next_event(Duration::from_secs(10)).await {
        let m: Value = serde_json::from_str(&e.data).unwrap();
        if m.get("id").is_some() {
            response = Some(m);
        }
    }
    closing.await.unwrap();
    let response = response.expect("the request in flight is answered");
    assert_eq!(response["result"]["contents"][0]["text"], "done");
    assert!(started.elapsed() < Duration::from_secs(8));
    // The standalone stream ended.
    while stream.next_event(Duration::from_secs(5)).await.is_some() {}
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_inside_a_legacy_session_is_refused_and_holds_nothing() {
    // Served inside the session, a 2026 listen would take no stream permit and keep the
    // session busy for ever: enough of them would lock every later initialize out.
    let srv = start_with(
        watched(),
        HttpConfig {
            max_sessions: 300,
            max_streams: 4,
            ..HttpConfig::default()
        },
    )
    .await;
    let host = srv.addr.to_string();
    let listen = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": {"notifications": {"resourcesListChanged": true}, "_meta": rsrc_testkit::modern_meta()}})
    .to_string();
    for _ in 0..300 {
        let mut p = srv.peer();
        p.initialize().await;
        let sid = p.session().unwrap().to_owned();
        let mut h = standard(&host);
        h.push(("mcp-session-id", &sid));
        h.push(("mcp-protocol-version", "2025-11-25"));
        let res = p.send("POST", &h, listen.as_bytes()).await;
        assert_eq!(res.status, 400);
        assert_eq!(res.error_code(), Some(-32020));
        assert_eq!(res.json()["id"], 9);
    }
    // Nothing is held: a new session evicts an idle one, and the modern path's streams
    // are all there.
    let mut late = srv.peer();
    assert_eq!(late.initialize().await.status, 200);
    let mut streams = Vec::new();
    for _ in 0..4 {
        let mut m = modern(&srv);
        let msg = m.modern_request(
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true}}),
        );
        let h: Vec<(String, String)> = m.headers_for(&msg);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let s = m.open("POST", &h, msg.to_string().as_bytes()).await;
        assert_eq!(s.status, 200);
        streams.push(s);
    }
}
