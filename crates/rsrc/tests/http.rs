//! Streamable HTTP over real loopback sockets: both eras, every status and error code the
//! transport produces, the defences, authentication and shutdown. Every JSON-RPC message
//! the server sends is validated against the official schema by the `HttpPeer`.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine as _;
use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::transport::http::{AuthConfig, HttpConfig, JwtVerifier, TokenVerifier, serve_http};
use rsrc::{Representation, RequestContext, Server, TemplateResource};
use rsrc_testkit::HttpPeer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A running server; dropping it shuts the server down.
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    fn peer(&self) -> HttpPeer {
        HttpPeer::new(self.addr)
    }

    /// Starts the shutdown and returns when `serve_http` returned.
    async fn shut_down(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.done.take().unwrap().await.unwrap().unwrap();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Set by the `cancel:///watch` resource when its request is cancelled.
static CANCELLED: AtomicBool = AtomicBool::new(false);

fn test_server() -> Server {
    let echo = TemplateResource::new(
        ResourceTemplate::new("echo:///{word}", "echo"),
        |_ctx: RequestContext, vars| async move {
            Ok(vec![Representation::text(
                vars.str("word").unwrap_or_default().to_owned(),
            )])
        },
    )
    .unwrap();
    let watch = rsrc::ResourceSet::new().with_dynamic(
        Resource::new("cancel:///watch", "watch"),
        |ctx: RequestContext| async move {
            // Work handed elsewhere learns of the cancellation through the context.
            let watcher = ctx.clone();
            tokio::spawn(async move {
                watcher.cancelled().await;
                CANCELLED.store(true, Ordering::SeqCst);
            });
            ctx.report_progress(1.0, None, Some("started"));
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(vec![Representation::text("too late")])
        },
    );
    Server::builder("rsrc-http-test", "0.0.0")
        .mount("sample:", common::sample_set())
        .mount("echo:", rsrc::ResourceSet::new().with_template(echo))
        .mount("cancel:", watch)
        .build()
        .unwrap()
}

async fn start(config: HttpConfig) -> Running {
    start_with(test_server(), config).await
}

async fn start_with(server: Server, config: HttpConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel();
    let done = tokio::spawn(async move {
        serve_http(&server, listener, config, async {
            let _ = rx.await;
        })
        .await
    });
    Running {
        addr,
        stop: Some(tx),
        done: Some(done),
    }
}

fn read(peer: &mut HttpPeer, uri: &str) -> Value {
    let id = peer.next_id();
    if peer.revision().is_modern() {
        let mut m = peer.modern_request("resources/read", json!({ "uri": uri }));
        m["id"] = json!(id);
        m
    } else {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
    }
}

fn standard(host: &str) -> Vec<(&str, &str)> {
    vec![
        ("host", host),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ]
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

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
    let srv = start(HttpConfig {
        session_idle: Duration::from_millis(100),
        ..HttpConfig::default()
    })
    .await;
    let mut peer = srv.peer();
    peer.initialize().await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_a_bounded_number_of_requests_at_once() {
    let srv = start(HttpConfig {
        max_in_flight: 2,
        ..HttpConfig::default()
    })
    .await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let mut slow = Vec::new();
    for i in 0..2 {
        let mut p = peer.clone();
        slow.push(tokio::spawn(async move {
            p.post(
                &json!({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/read",
                "params": {"uri": "sample:///slow"}}),
            )
            .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let msg = read(&mut peer, "sample:///README.md");
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 429);
    assert_eq!(res.json()["id"], msg["id"]);
    assert!(res.header("retry-after").is_some());
    for t in slow {
        assert_eq!(t.await.unwrap().status, 200);
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

// ----- 2026-07-28: stateless -----

fn modern(srv: &Running) -> HttpPeer {
    let mut p = srv.peer();
    p.speak(ProtocolVersion::V2026_07_28);
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_requests_need_no_session_and_get_none() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let discover = peer.modern_request("server/discover", json!({}));
    let res = peer.post(&discover).await;
    assert_eq!(res.status, 200);
    assert!(res.header("mcp-session-id").is_none());
    assert_eq!(res.json()["result"]["supportedVersions"][0], "2026-07-28");
    // A stray session header is ignored.
    peer.always("mcp-session-id", "whatever");
    let msg = read(&mut peer, "sample:///README.md");
    let res = peer.post(&msg).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["result"]["contents"][0]["text"], "# Sample\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_headers_must_be_present_and_match_the_body() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let host = peer.host();
    let msg = read(&mut peer, "sample:///README.md");
    let body = serde_json::to_vec(&msg).unwrap();
    let id = msg["id"].clone();
    let base = || {
        let mut h = standard(&host);
        h.push(("mcp-protocol-version", "2026-07-28"));
        h
    };
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (base(), "missing Mcp-Method"),
        (
            [
                base(),
                vec![
                    ("mcp-method", "resources/list"),
                    ("mcp-name", "sample:///README.md"),
                ],
            ]
            .concat(),
            "method mismatch",
        ),
        (
            [base(), vec![("mcp-method", "resources/read")]].concat(),
            "missing Mcp-Name",
        ),
        (
            [
                base(),
                vec![
                    ("mcp-method", "resources/read"),
                    ("mcp-name", "sample:///other"),
                ],
            ]
            .concat(),
            "name mismatch",
        ),
    ];
    for (h, what) in cases {
        let res = peer.send("POST", &h, &body).await;
        assert_eq!(res.status, 400, "{what}");
        assert_eq!(res.error_code(), Some(-32020), "{what}");
        assert_eq!(res.json()["id"], id, "{what}: the error names the request");
    }
    let encoded = format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode("sample:///README.md")
    );
    let h = [
        base(),
        vec![
            ("mcp-method", "resources/read"),
            ("mcp-name", encoded.as_str()),
        ],
    ]
    .concat();
    let res = peer.send("POST", &h, &body).await;
    assert_eq!(res.status, 200, "base64 sentinel decoded first");
    // The header's version against the body's.
    let mut older = msg.clone();
    older["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let h = [
        base(),
        vec![
            ("mcp-method", "resources/read"),
            ("mcp-name", "sample:///README.md"),
        ],
    ]
    .concat();
    let res = peer
        .send("POST", &h, &serde_json::to_vec(&older).unwrap())
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.error_code(), Some(-32020));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_version_is_400_with_the_supported_list() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let host = peer.host();
    let mut msg = peer.modern_request("server/discover", json!({}));
    msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut h = standard(&host);
    h.extend([
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "server/discover"),
    ]);
    let res = peer
        .send("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(res.status, 400);
    let e = &res.json()["error"];
    assert_eq!(e["code"], -32022);
    assert_eq!(
        e["data"]["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18"])
    );
    assert_eq!(res.json()["id"], msg["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_removed_methods_are_404_with_32601() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    for method in [
        "tools/call",
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let msg = peer.modern_request(method, json!({"name": "x", "uri": "sample:///README.md"}));
        let res = peer.post(&msg).await;
        assert_eq!(res.status, 404, "{method}");
        assert_eq!(res.error_code(), Some(-32601), "{method}");
    }
    let mut bad = peer.modern_request("server/discover", json!({}));
    bad["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let res = peer.post(&bad).await;
    assert_eq!(res.status, 400, "a malformed request");
    assert_eq!(res.error_code(), Some(-32602));
    // An error from serving the request is a result of the request: 200.
    let missing = read(&mut peer, "sample:///nope");
    let res = peer.post(&missing).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.error_code(), Some(-32602));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_and_delete_are_405_in_the_stateless_revision() {
    let srv = start(HttpConfig::default()).await;
    let peer = modern(&srv);
    let host = peer.host();
    for method in ["GET", "DELETE"] {
        let res = peer
            .send(
                method,
                &[
                    ("host", &host),
                    ("accept", "text/event-stream"),
                    ("mcp-protocol-version", "2026-07-28"),
                ],
                b"",
            )
            .await;
        assert_eq!(res.status, 405, "{method}");
        assert!(res.header("allow").unwrap().contains("POST"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_request_stream_cancels_the_request() {
    let srv = start(HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let mut msg = read(&mut peer, "cancel:///watch");
    msg["params"]["_meta"]["progressToken"] = json!("t");
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let first = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert!(first.data.contains("notifications/progress"));
    assert!(first.id.is_none(), "stateless streams are not resumable");
    CANCELLED.store(false, Ordering::SeqCst);
    drop(stream);
    for _ in 0..100 {
        if CANCELLED.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the provider never saw the cancellation");
}

// ----- subscriptions -----

fn watched() -> Server {
    Server::builder("rsrc-http-subs", "0.0.0")
        .mount(
            "w:",
            rsrc::ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_subscriptions(),
        )
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_acknowledges_delivers_and_ends_when_closed() {
    let server = watched();
    let srv = start_with(
        server.clone(),
        HttpConfig {
            keep_alive: Duration::from_millis(100),
            ..HttpConfig::default()
        },
    )
    .await;
    let mut peer = modern(&srv);
    let msg = peer.modern_request(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["w:///a"]}}),
    );
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let ack = stream.next_event(Duration::from_secs(5)).await.unwrap();
    let ack: Value = serde_json::from_str(&ack.data).unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    server.changes().updated("w:///a");
    let update = stream.next_event(Duration::from_secs(5)).await.unwrap();
    let update: Value = serde_json::from_str(&update.data).unwrap();
    assert_eq!(update["params"]["uri"], "w:///a");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    // Quiet periods carry keep-alive comments.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(
        stream
            .next_event(Duration::from_millis(100))
            .await
            .is_none()
    );
    assert!(stream.comments >= 2, "{} keep-alives", stream.comments);
    drop(stream);
    for _ in 0..100 {
        if server.changes().subscribers("w:///a") == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("closing the stream did not end the subscription");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_listen_stream_with_its_completion_result() {
    let srv = start_with(watched(), HttpConfig::default()).await;
    let mut peer = modern(&srv);
    let msg = peer.modern_request(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["w:///a"]}}),
    );
    let headers = peer.headers_for(&msg);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&msg).unwrap())
        .await;
    assert!(
        stream.next_event(Duration::from_secs(5)).await.is_some(),
        "ack"
    );
    let shutdown = tokio::spawn(srv.shut_down());
    let last = stream
        .next_event(Duration::from_secs(5))
        .await
        .expect("a final event");
    let result: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(result["id"], msg["id"]);
    assert_eq!(result["result"]["resultType"], "complete");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        msg["id"]
    );
    assert!(
        stream.next_event(Duration::from_secs(5)).await.is_none(),
        "then the end"
    );
    tokio::time::timeout(Duration::from_secs(5), shutdown)
        .await
        .expect("shutdown does not wait for the grace period")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_hears_of_its_subscriptions_on_the_get_stream() {
    let server = watched();
    let srv = start_with(server.clone(), HttpConfig::default()).await;
    let mut peer = srv.peer();
    peer.initialize().await;
    let ok = peer
        .post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "w:///a"}}),
        )
        .await;
    assert_eq!(ok.json()["result"], json!({}));
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
    let prime = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert!(prime.data.is_empty());
    // Another session's subscription does not leak into this stream.
    let mut other = srv.peer();
    other.initialize().await;
    server.changes().updated("w:///a");
    let event = stream.next_event(Duration::from_secs(5)).await.unwrap();
    assert_eq!(event.id.as_deref(), Some("0-1"));
    let msg: Value = serde_json::from_str(&event.data).unwrap();
    assert_eq!(msg["method"], "notifications/resources/updated");
    assert_eq!(msg["params"]["uri"], "w:///a");
}

// ----- defences -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_and_origin_are_checked_against_the_allowlists() {
    let srv = start(HttpConfig::default()).await;
    let peer = srv.peer();
    let host = peer.host();
    let port = srv.addr.port();
    let localhost = format!("localhost:{port}");
    let good_origin = format!("http://localhost:{port}");
    let wrong_port = format!("localhost:{}", port + 1);
    let cases: Vec<(Vec<(&str, &str)>, u16)> = vec![
        (standard(&host), 200),
        (standard(&localhost), 200),
        (standard("evil.example.com"), 403),
        (standard(&wrong_port), 403),
        (
            [standard(&host), vec![("origin", "http://evil.example.com")]].concat(),
            403,
        ),
        ([standard(&host), vec![("origin", "null")]].concat(), 403),
        (
            [standard(&host), vec![("origin", good_origin.as_str())]].concat(),
            200,
        ),
    ];
    for (h, status) in cases {
        let res = peer.send("POST", &h, INIT.as_bytes()).await;
        assert_eq!(res.status, status, "{h:?}");
        if status == 403 {
            assert!(res.header("mcp-session-id").is_none());
        }
    }
    // No Host at all: only a raw request can leave it out.
    let mut tcp = TcpStream::connect(srv.addr).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{INIT}",
        INIT.len()
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_type_accept_and_body_size_are_enforced() {
    let srv = start(HttpConfig {
        max_body: 1024,
        ..HttpConfig::default()
    })
    .await;
    let peer = srv.peer();
    let host = peer.host();
    let json_ct = ("content-type", "application/json");
    let both = ("accept", "application/json, text/event-stream");
    let cases: Vec<(Vec<(&str, &str)>, u16)> = vec![
        (
            vec![("host", &host), ("content-type", "text/plain"), both],
            415,
        ),
        (vec![("host", &host), both], 415),
        (
            vec![("host", &host), json_ct, ("accept", "application/json")],
            406,
        ),
        (vec![("host", &host), json_ct, ("accept", "text/html")], 406),
        (vec![("host", &host), json_ct, ("accept", "*/*")], 200),
    ];
    for (h, status) in cases {
        let res = peer.send("POST", &h, INIT.as_bytes()).await;
        assert_eq!(res.status, status, "{h:?}");
    }
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let res = peer.send("POST", &standard(&host), big.as_bytes()).await;
    assert_eq!(res.status, 413, "declared length");
    // Chunked, without a declared length: refused while streaming.
    let mut tcp = TcpStream::connect(srv.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let chunk = "y".repeat(512);
    let mut out = Vec::new();
    for _ in 0..8 {
        let piece = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        if tcp.write_all(piece.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut out)).await;
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 413"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_and_idle_connections_are_closed() {
    let srv = start(HttpConfig {
        header_read_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    })
    .await;
    // Headers that never finish.
    let mut slow = TcpStream::connect(srv.addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "the server closed the connection");
    // A keep-alive connection left idle after a request.
    let mut idle = TcpStream::connect(srv.addr).await.unwrap();
    let host = srv.addr.to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{INIT}",
        INIT.len()
    );
    idle.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), idle.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "the idle connection was closed");
    assert!(String::from_utf8_lossy(&buf).starts_with("HTTP/1.1 200"));
}

// ----- authentication -----

fn token_auth(addr_hint: &str) -> AuthConfig {
    AuthConfig::new(
        TokenVerifier::Static("s3cret-token".into()),
        format!("http://{addr_hint}/mcp"),
    )
    .authorization_server("https://auth.example.com")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_bearer_token_is_required_when_configured() {
    let srv = start(HttpConfig {
        auth: Some(token_auth("mcp.example.com")),
        ..HttpConfig::default()
    })
    .await;
    let peer = srv.peer();
    let host = peer.host();
    let res = peer.send("POST", &standard(&host), INIT.as_bytes()).await;
    assert_eq!(res.status, 401);
    let challenge = res.header("www-authenticate").unwrap();
    assert_eq!(
        challenge,
        "Bearer resource_metadata=\"http://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
    );
    assert!(res.header("mcp-session-id").is_none());
    let wrong = [standard(&host), vec![("authorization", "Bearer nope")]].concat();
    let res = peer.send("POST", &wrong, INIT.as_bytes()).await;
    assert_eq!(res.status, 401);
    assert!(
        res.header("www-authenticate")
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    let right = [
        standard(&host),
        vec![("authorization", "Bearer s3cret-token")],
    ]
    .concat();
    let res = peer.send("POST", &right, INIT.as_bytes()).await;
    assert_eq!(res.status, 200);
    // A token in the query string is refused, even the right one.
    let mut tcp = TcpStream::connect(srv.addr).await.unwrap();
    let req = format!(
        "POST /mcp?access_token=s3cret-token HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer s3cret-token\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{INIT}",
        INIT.len()
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    // The metadata says where tokens come from.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let mut tcp = TcpStream::connect(srv.addr).await.unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
        tcp.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        let body: Value = serde_json::from_str(out.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["resource"], "http://mcp.example.com/mcp");
        assert_eq!(body["authorization_servers"][0], "https://auth.example.com");
        assert_eq!(body["bearer_methods_supported"][0], "header");
    }
}

fn jwt(claims: &Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwts_are_checked_for_signature_expiry_and_audience() {
    let resource = "https://mcp.example.com/mcp";
    let srv = start(HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Jwt(JwtVerifier::hmac(b"key-one")),
            resource,
        )),
        ..HttpConfig::default()
    })
    .await;
    let peer = srv.peer();
    let host = peer.host();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let cases = [
        (
            jwt(&json!({"aud": resource, "exp": now + 600}), b"key-one"),
            200,
            "",
        ),
        (
            jwt(&json!({"aud": resource, "exp": now - 600}), b"key-one"),
            401,
            "expired",
        ),
        (
            jwt(
                &json!({"aud": "https://other/mcp", "exp": now + 600}),
                b"key-one",
            ),
            401,
            "not for this resource",
        ),
        (
            jwt(&json!({"aud": resource, "exp": now + 600}), b"key-two"),
            401,
            "not valid",
        ),
        (jwt(&json!({"aud": resource}), b"key-one"), 401, "exp"),
        (jwt(&json!({"exp": now + 600}), b"key-one"), 401, "aud"),
        (
            jwt(&json!({"aud": 5, "exp": now + 600}), b"key-one"),
            401,
            "aud",
        ),
    ];
    for (token, status, why) in cases {
        let auth = format!("Bearer {token}");
        let h = [standard(&host), vec![("authorization", auth.as_str())]].concat();
        let res = peer.send("POST", &h, INIT.as_bytes()).await;
        assert_eq!(res.status, status, "{why}");
        if status == 401 {
            let challenge = res.header("www-authenticate").unwrap();
            assert!(
                challenge.contains("invalid_token") && challenge.contains(why),
                "{challenge}"
            );
        }
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
    let mut slow_peer = peer.clone();
    let slow = tokio::spawn(async move {
        slow_peer
            .post(
                &json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read",
                "params": {"uri": "sample:///slow"}}),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let addr = srv.addr;
    let started = std::time::Instant::now();
    srv.shut_down().await;
    let res = slow.await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["result"]["contents"][0]["text"], "done");
    assert!(started.elapsed() < Duration::from_secs(8));
    // The standalone stream ended.
    while stream.next_event(Duration::from_secs(5)).await.is_some() {}
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}
