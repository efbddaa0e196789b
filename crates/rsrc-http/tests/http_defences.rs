//! Streamable HTTP over real loopback sockets: the defences (Host and Origin allowlists,
//! content type, Accept, body size, slow and idle connections) and authentication
//! (static bearer tokens, JWTs). Every JSON-RPC message the server sends is validated
//! against the official schema by the `HttpPeer`.

#[path = "../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "common/http.rs"]
mod harness;

use std::time::Duration;

use rsrc_http::{AuthConfig, HttpConfig, JwtVerifier, TokenVerifier};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use harness::{INIT, standard, start};

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
async fn a_header_that_decides_access_or_routing_given_twice_is_a_bad_request() {
    let srv = start(HttpConfig::default()).await;
    let peer = srv.peer();
    let host = peer.host();
    let port = srv.addr.port();
    let origin = format!("http://localhost:{port}");
    // The good value first, then another: a check reading the first copy must not let a
    // second through.
    let repeated: [(&str, &str, &str); 8] = [
        ("host", host.as_str(), "evil.example.com"),
        ("origin", origin.as_str(), "http://evil.example.com"),
        ("authorization", "Bearer a", "Bearer b"),
        ("mcp-session-id", "a", "b"),
        ("mcp-protocol-version", "2025-11-25", "2026-07-28"),
        ("mcp-method", "initialize", "resources/read"),
        ("mcp-name", "file:///a", "file:///b"),
        ("last-event-id", "0-1", "0-2"),
    ];
    for (name, first, second) in repeated {
        let mut h: Vec<(&str, &str)> = standard(&host)
            .into_iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case(name))
            .collect();
        h.push((name, first));
        h.push((name, second));
        let res = peer.send("POST", &h, INIT.as_bytes()).await;
        assert_eq!(res.status, 400, "{name}");
        assert!(res.header("mcp-session-id").is_none(), "{name}");
    }
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

const JWT_RESOURCE: &str = "https://mcp.example.com/mcp";

/// A server taking HMAC JWTs signed with `key-one` for [`JWT_RESOURCE`].
async fn jwt_server() -> harness::Running {
    start(HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Jwt(JwtVerifier::hmac(b"key-one")),
            JWT_RESOURCE,
        )),
        ..HttpConfig::default()
    })
    .await
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
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
    let resource = JWT_RESOURCE;
    let srv = jwt_server().await;
    let peer = srv.peer();
    let host = peer.host();
    let now = unix_now();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_belongs_to_the_identity_that_created_it() {
    let resource = JWT_RESOURCE;
    let srv = jwt_server().await;
    let peer = srv.peer();
    let host = peer.host();
    let exp = unix_now() + 600;
    let token = |sub: &str, n: u64| {
        format!(
            "Bearer {}",
            jwt(
                &json!({"aud": resource, "exp": exp + n, "sub": sub}),
                b"key-one"
            )
        )
    };
    let (alice, alice_again, mallory) = (token("alice", 0), token("alice", 1), token("mallory", 0));
    fn headers<'a>(
        host: &'a str,
        auth: &'a str,
        session: Option<&'a str>,
    ) -> Vec<(&'a str, &'a str)> {
        let mut h = standard(host);
        h.push(("authorization", auth));
        if let Some(id) = session {
            h.push(("mcp-session-id", id));
            h.push(("mcp-protocol-version", "2025-11-25"));
        }
        h
    }
    let with = |auth, session| headers(&host, auth, session);
    let init = peer
        .send("POST", &with(&alice, None), INIT.as_bytes())
        .await;
    assert_eq!(init.status, 200);
    let id = init.header("mcp-session-id").unwrap().to_owned();
    let ping = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    // Another valid identity can neither use, resume nor end the session: it does not
    // exist for it.
    let used = peer.send("POST", &with(&mallory, Some(&id)), ping).await;
    assert_eq!(used.status, 404);
    let mut get = with(&mallory, Some(&id));
    get.retain(|(k, _)| *k != "content-type" && *k != "accept");
    get.push(("accept", "text/event-stream"));
    get.push(("last-event-id", "0-1"));
    let resumed = peer.send("GET", &get, b"").await;
    assert_eq!(resumed.status, 404);
    let ended = peer.send("DELETE", &with(&mallory, Some(&id)), b"").await;
    assert_eq!(ended.status, 404);
    // The same subject with another token is the same identity.
    let again = peer
        .send("POST", &with(&alice_again, Some(&id)), ping)
        .await;
    assert_eq!(again.status, 200, "{:?}", again.messages);
    let ended = peer.send("DELETE", &with(&alice, Some(&id)), b"").await;
    assert_eq!(ended.status, 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_a_large_response_loses_its_connection() {
    let big = rsrc::ResourceSet::new().with_text(
        rsrc::protocol::Resource::new("big:///x", "x"),
        "y".repeat(30 << 20),
    );
    let server = rsrc::Server::builder("t", "0")
        .mount("big:", big)
        .build()
        .unwrap();
    let srv = harness::start_with(
        server,
        HttpConfig {
            max_connections: 1,
            write_stall_timeout: Duration::from_secs(1),
            ..HttpConfig::default()
        },
    )
    .await;
    let host = srv.peer().host();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": {"uri": "big:///x", "_meta": rsrc_testkit::modern_meta()}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: resources/read\r\nmcp-name: big:///x\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // The stalled reader holds the only connection until the server gives up on it.
    let mut stalled = TcpStream::connect(srv.addr).await.unwrap();
    stalled.write_all(request.as_bytes()).await.unwrap();
    // Its response has begun: the server serves it (and holds the connection).
    let mut head = [0u8; 12];
    stalled.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut next = srv.peer();
    next.speak(rsrc::protocol::ProtocolVersion::V2026_07_28);
    let ping = next.modern_request("resources/list", json!({}));
    let res = tokio::time::timeout(Duration::from_secs(20), next.post(&ping))
        .await
        .expect("the stalled connection was dropped, so the next one was served");
    assert_eq!(res.status, 200);
    // What the stalled reader gets is cut short.
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut got)).await;
    assert!(got.len() < 30 << 20, "{} bytes", got.len());
}
