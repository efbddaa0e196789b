//! Large replies over Streamable HTTP, in both eras: a 10 MiB text read arrives
//! byte-identical to the line stdio writes for the same request, as a JSON body and as
//! an SSE event (the reply is written a piece at a time, as over stdio); a legacy stream
//! resumed with `Last-Event-ID` replays a large reply whole; and a client that goes away
//! in the middle of a large body gives back the reply's share of the content budget.
//! Every message the server sends is validated against the official schema of its
//! revision (by the `HttpPeer`, and here for the stdio reference).

#[path = "../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "common/http.rs"]
mod harness;

use std::time::Duration;

use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Representation, RequestContext, ResourceSet, Server, ServerConfig};
use rsrc_http::HttpConfig;
use rsrc_testkit::{HttpPeer, modern_meta, validate};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use harness::{Running, start_with};

/// 10 MiB of text with characters JSON must escape (quotes, backslashes, tabs,
/// newlines, a control character) and multi-byte ones, so that pieces cut through both.
fn big_text() -> String {
    let line = "a \"quoted\" line\twith \\ déjà vu 東京 \u{1} and more words to fill it\n";
    let mut text = line.repeat(10 * 1024 * 1024 / line.len() + 1);
    let mut end = 10 * 1024 * 1024;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

/// `big:///text`, the text as a static resource; `big:///progress`, the same text after a
/// progress notification (so that a request with a progress token is answered on a
/// stream).
fn server(read_budget: u64) -> Server {
    let text = big_text();
    let set = ResourceSet::new()
        .with_text(Resource::new("big:///text", "text"), text.clone())
        .with_dynamic(
            Resource::new("big:///progress", "progress"),
            move |ctx: RequestContext| {
                let text = text.clone();
                async move {
                    ctx.report_progress(1.0, Some(1.0), Some("read"));
                    Ok(vec![Representation::text(text)])
                }
            },
        );
    Server::builder("rsrc-http-large", "0.0.0")
        .config(ServerConfig {
            read_budget,
            ..ServerConfig::default()
        })
        .mount("big:", set)
        .build()
        .unwrap()
}

/// The request reading `uri` with id 7, in `revision`, with a progress token if asked.
fn read_request(revision: ProtocolVersion, uri: &str, progress: bool) -> Value {
    let mut params = json!({ "uri": uri });
    if revision.is_modern() {
        params["_meta"] = modern_meta();
    }
    if progress {
        params["_meta"]["progressToken"] = json!("p");
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": params})
}

/// The line stdio writes in answer to `request` (without its newline), validated.
async fn stdio_answer(server: &Server, revision: ProtocolVersion, request: &Value) -> Vec<u8> {
    let pipe = serve_in_memory(server, StreamConfig::default());
    let (reader, mut writer) = tokio::io::split(pipe);
    let mut lines = BufReader::new(reader);
    let mut send = Vec::new();
    if !revision.is_modern() {
        send.push(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": revision.as_str(), "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}}));
        send.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    send.push(request.clone());
    for msg in send {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        writer.write_all(&line).await.unwrap();
    }
    loop {
        let mut line = Vec::new();
        let n = tokio::time::timeout(Duration::from_secs(20), lines.read_until(b'\n', &mut line))
            .await
            .expect("stdio answered in time")
            .unwrap();
        assert!(n > 0, "stdio ended without answering");
        line.pop();
        let msg: Value = serde_json::from_slice(&line).unwrap();
        let method = match msg.get("id") {
            None => None,
            Some(id) if *id == 1 => Some("initialize"),
            Some(_) => Some("resources/read"),
        };
        validate(revision, &msg, method).unwrap_or_else(|e| panic!("stdio: {e}"));
        if msg["id"] == 7 {
            return line;
        }
    }
}

/// A peer of `srv` speaking `revision`, initialized when that revision has sessions.
async fn peer(srv: &Running, revision: ProtocolVersion) -> HttpPeer {
    let mut peer = srv.peer();
    peer.speak(revision);
    if !revision.is_modern() {
        peer.initialize().await;
    }
    peer
}

/// The data of the SSE event carrying the response with id 7, as it came on the wire.
fn response_event(body: &[u8]) -> &[u8] {
    let start = body
        .windows(23)
        .position(|w| w == br#"data: {"jsonrpc":"2.0","#)
        .and_then(|first| {
            // The response is the event whose message has an id (notifications have none).
            let mut at = first;
            loop {
                let data = &body[at + 6..];
                if data.starts_with(br#"{"jsonrpc":"2.0","id":7"#) {
                    return Some(at + 6);
                }
                let next = data.windows(7).position(|w| w == b"\ndata: ")?;
                at += 6 + next + 1;
            }
        })
        .expect("a response event");
    let len = body[start..]
        .windows(2)
        .position(|w| w == b"\n\n")
        .expect("the event ends");
    &body[start..start + len]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_text_arrives_byte_identical_to_stdio_as_json_and_as_an_event_in_both_eras() {
    let server = server(256 * 1024 * 1024);
    let srv = start_with(server.clone(), HttpConfig::default()).await;
    for revision in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut peer = peer(&srv, revision).await;

        let request = read_request(revision, "big:///text", false);
        let expected = stdio_answer(&server, revision, &request).await;
        assert!(expected.len() > 10 * 1024 * 1024, "{}", expected.len());
        let res = peer.post(&request).await;
        assert_eq!(res.status, 200, "{revision}");
        assert_eq!(res.content_type(), "application/json", "{revision}");
        assert!(
            res.body == expected,
            "{revision}: the JSON body differs from stdio's line"
        );
        assert_eq!(
            res.json()["result"]["contents"][0]["text"]
                .as_str()
                .map(str::len),
            Some(10 * 1024 * 1024)
        );

        let request = read_request(revision, "big:///progress", true);
        let expected = stdio_answer(&server, revision, &request).await;
        let res = peer.post(&request).await;
        assert_eq!(res.status, 200, "{revision}");
        assert_eq!(res.content_type(), "text/event-stream", "{revision}");
        assert_eq!(
            res.messages.len(),
            2,
            "{revision}: the progress, then the reply"
        );
        assert!(
            response_event(&res.body) == expected,
            "{revision}: the event's data differs from stdio's line"
        );
    }
}

/// Sends `request` as a POST on a fresh connection and returns it once `at_least` bytes
/// of the response (head included) have arrived: a client in the middle of a body.
async fn partly_read(
    peer: &HttpPeer,
    request: &Value,
    until: &[u8],
    at_least: usize,
) -> (TcpStream, Vec<u8>) {
    let body = serde_json::to_vec(request).unwrap();
    let mut head = format!("POST /mcp HTTP/1.1\r\ncontent-length: {}\r\n", body.len());
    for (k, v) in peer.headers_for(request) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut tcp = TcpStream::connect(peer.host()).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(&body).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = vec![0; 64 * 1024];
    while seen.len() < at_least || !seen.windows(until.len()).any(|w| w == until) {
        let n = tokio::time::timeout(Duration::from_secs(20), tcp.read(&mut buf))
            .await
            .expect("the body arrives")
            .unwrap();
        assert!(n > 0, "the response ended early");
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 200"));
    (tcp, seen)
}

/// Reads a chunked HTTP/1.1 response to its last chunk: its head, and its body.
async fn read_chunked(tcp: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut more = async |buf: &mut Vec<u8>| {
        let mut chunk = vec![0; 64 * 1024];
        let n = tokio::time::timeout(Duration::from_secs(20), tcp.read(&mut chunk))
            .await
            .expect("the response arrives")
            .unwrap();
        assert!(n > 0, "the connection closed inside the response");
        buf.extend_from_slice(&chunk[..n]);
    };
    let end = |buf: &[u8], from: usize| {
        buf[from..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|i| from + i)
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        more(&mut buf).await;
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let (mut at, mut body) = (head_end, Vec::new());
    loop {
        let line = loop {
            if let Some(line) = end(&buf, at) {
                break line;
            }
            more(&mut buf).await;
        };
        let size = usize::from_str_radix(std::str::from_utf8(&buf[at..line]).unwrap(), 16).unwrap();
        if size == 0 {
            return (head, body);
        }
        while buf.len() < line + 2 + size + 2 {
            more(&mut buf).await;
        }
        body.extend_from_slice(&buf[line + 2..line + 2 + size]);
        at = line + 2 + size + 2;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_legacy_stream_replays_a_large_reply_whole() {
    let server = server(256 * 1024 * 1024);
    let srv = start_with(server.clone(), HttpConfig::default()).await;
    let revision = ProtocolVersion::V2025_11_25;
    let mut peer = peer(&srv, revision).await;
    let request = read_request(revision, "big:///progress", true);
    let expected = stdio_answer(&server, revision, &request).await;

    // The client reads the progress and the first bytes of the reply, then goes away.
    let (tcp, seen) = partly_read(&peer, &request, b"id: 1-2\ndata: {", 1024 * 1024).await;
    let text = String::from_utf8_lossy(&seen);
    assert!(text.contains("id: 1-1\ndata: {"), "the progress came first");
    assert!(seen.len() < expected.len(), "the reply is not whole yet");
    drop(tcp);

    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let mut tcp = TcpStream::connect(&host).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {host}\r\naccept: text/event-stream\r\n\
         mcp-session-id: {sid}\r\nmcp-protocol-version: {}\r\nlast-event-id: 1-1\r\n\r\n",
        revision.as_str()
    );
    tcp.write_all(get.as_bytes()).await.unwrap();
    let (head, body) = read_chunked(&mut tcp).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    // The reply, whole, and nothing else: the stream ends after it.
    let mut event = b"id: 1-2\ndata: ".to_vec();
    event.extend_from_slice(&expected);
    event.extend_from_slice(b"\n\n");
    assert!(
        body == event,
        "the replayed reply differs from stdio's line"
    );
    let msg: Value = serde_json::from_slice(&expected).unwrap();
    validate(revision, &msg, Some("resources/read")).unwrap();
    // The stream is done: a new POST still gets its own stream.
    let again = peer.post(&request).await;
    assert_eq!(again.messages.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_in_the_middle_of_a_large_body_gives_back_the_content_budget() {
    // Room for one 10 MiB reply at a time: a reply whose share were kept after its
    // client went away would make every later read wait for ever.
    let server = server(16 * 1024 * 1024);
    let srv = start_with(server, HttpConfig::default()).await;
    for (revision, uri, progress) in [
        (ProtocolVersion::V2025_11_25, "big:///text", false),
        (ProtocolVersion::V2025_11_25, "big:///progress", true),
        (ProtocolVersion::V2026_07_28, "big:///text", false),
        (ProtocolVersion::V2026_07_28, "big:///progress", true),
    ] {
        let mut peer = peer(&srv, revision).await;
        let request = read_request(revision, uri, progress);
        let (tcp, _) = partly_read(&peer, &request, br#""text":""#, 512 * 1024).await;
        drop(tcp);
        let again = read_request(revision, "big:///text", false);
        let res = peer.post(&again).await;
        assert_eq!(res.status, 200, "{revision} {uri}");
        assert_eq!(
            res.json()["result"]["contents"][0]["text"]
                .as_str()
                .map(str::len),
            Some(10 * 1024 * 1024),
            "{revision} {uri}"
        );
    }
}
