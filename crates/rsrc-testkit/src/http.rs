//! [`HttpPeer`]: a Streamable HTTP client for wire tests, over real loopback sockets.
//!
//! It sends exactly the headers and bytes a test gives it (one fresh connection per
//! request, so nothing is shared between requests unless the server shares it), and
//! reads the answer as one JSON message or an SSE stream (with the wire crate's event
//! parser, `rsrc_protocol::http::sse`, the one the client uses too). Every JSON-RPC
//! message it reads is validated against the schema of the revision the peer speaks.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::http::headers::{
    METHOD, NAME, PROTOCOL_VERSION, SESSION_ID, encode_value, mirrored_member,
};
use rsrc_protocol::http::sse::{Block, Parser};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::peer::modern_meta;
use crate::schema::validate;

/// A Streamable HTTP client.
#[derive(Debug, Clone)]
pub struct HttpPeer {
    addr: SocketAddr,
    path: String,
    revision: ProtocolVersion,
    session: Option<String>,
    extra: Vec<(String, String)>,
    next_id: i64,
}

/// A complete response.
#[derive(Debug)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: http::HeaderMap,
    /// The raw body.
    pub body: Vec<u8>,
    /// The JSON-RPC messages of the body (the JSON body, or the SSE events' data), each
    /// validated.
    pub messages: Vec<Value>,
}

impl HttpResponse {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The last message (the response, for a request).
    pub fn json(&self) -> &Value {
        self.messages
            .last()
            .unwrap_or_else(|| panic!("no JSON-RPC message in a {} response", self.status))
    }

    /// The JSON-RPC error code of the last message, if it is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.messages.last()?.get("error")?.get("code")?.as_i64()
    }

    /// The media type of the body.
    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// Its `id`, if any.
    pub id: Option<String>,
    /// Its data (lines joined with `\n`).
    pub data: String,
}

/// A response whose body is read event by event.
pub struct SseStream {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: http::HeaderMap,
    body: Incoming,
    parser: Parser,
    /// The end of the bytes read so far that may begin a character cut by a frame.
    partial_char: Vec<u8>,
    revision: ProtocolVersion,
    method: Option<String>,
    /// Comment-only blocks (keep-alives) seen so far.
    pub comments: usize,
    /// Drives the connection; aborted (closing the socket) when the stream is dropped.
    conn: tokio::task::JoinHandle<()>,
}

impl Drop for SseStream {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl std::fmt::Debug for SseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseStream")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl SseStream {
    /// Validates responses on this stream as answers to `method` (for a resumed stream,
    /// whose request the peer did not send on it).
    pub fn answering(&mut self, method: &str) -> &mut Self {
        self.method = Some(method.to_owned());
        self
    }

    /// The next event (comments skipped), within `wait`: `None` at the end of the stream
    /// or on timeout. An event carrying JSON is validated.
    pub async fn next_event(&mut self, wait: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match self.parser.next_block() {
                Some(Block::Comment) => {
                    self.comments += 1;
                    continue;
                }
                Some(Block::Event(event)) => {
                    if !event.data.is_empty() {
                        let msg: Value = serde_json::from_str(&event.data).unwrap_or_else(|e| {
                            panic!("SSE data is not JSON ({e}): {}", event.data)
                        });
                        check(self.revision, &msg, self.method.as_deref());
                    }
                    return Some(SseEvent {
                        id: event.id,
                        data: event.data,
                    });
                }
                None => {}
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame()).await;
            match frame {
                Ok(Some(Ok(f))) => {
                    if let Ok(data) = f.into_data() {
                        self.check_utf8(&data);
                        self.parser.push(&data);
                    }
                }
                Ok(Some(Err(_)) | None) | Err(_) => return None,
            }
        }
    }
}

impl SseStream {
    /// Panics unless the stream's bytes so far are UTF-8 (a character may be cut between
    /// two frames).
    fn check_utf8(&mut self, data: &[u8]) {
        let mut bytes = std::mem::take(&mut self.partial_char);
        bytes.extend_from_slice(data);
        match std::str::from_utf8(&bytes) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                self.partial_char = bytes[e.valid_up_to()..].to_vec();
            }
            Err(e) => panic!("SSE is UTF-8: {e}"),
        }
    }
}

fn check(revision: ProtocolVersion, msg: &Value, method: Option<&str>) {
    if let Err(e) = validate(revision, msg, method) {
        panic!("the server sent a message the {revision} schema rejects: {e}");
    }
}

impl HttpPeer {
    /// A client of `http://{addr}/mcp`, speaking the newest legacy revision.
    pub fn new(addr: SocketAddr) -> Self {
        HttpPeer {
            addr,
            path: "/mcp".into(),
            revision: ProtocolVersion::LATEST_LEGACY,
            session: None,
            extra: Vec::new(),
            next_id: 1,
        }
    }

    /// Sets the revision spoken (and validated against).
    pub fn speak(&mut self, v: ProtocolVersion) -> &mut Self {
        self.revision = v;
        self
    }

    /// The revision spoken.
    pub fn revision(&self) -> ProtocolVersion {
        self.revision
    }

    /// The session id, once `initialize` returned one.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Uses (or forgets) a session id.
    pub fn set_session(&mut self, id: Option<String>) {
        self.session = id;
    }

    /// Adds a header to every request made with [`HttpPeer::post`].
    pub fn always(&mut self, name: &str, value: &str) -> &mut Self {
        self.extra.push((name.to_owned(), value.to_owned()));
        self
    }

    /// `Host: 127.0.0.1:{port}`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// The headers a well-behaved client sends with `msg`.
    pub fn headers_for(&self, msg: &Value) -> Vec<(String, String)> {
        let mut h = vec![
            ("host".to_owned(), self.host()),
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        let is_initialize = msg.get("method").and_then(Value::as_str) == Some("initialize")
            && !self.revision.is_modern();
        if !is_initialize {
            h.push((
                PROTOCOL_VERSION.to_owned(),
                self.revision.as_str().to_owned(),
            ));
        }
        if self.revision.is_modern() {
            if let Some(m) = msg.get("method").and_then(Value::as_str) {
                h.push((METHOD.to_owned(), m.to_owned()));
                let name = mirrored_member(m).and_then(|member| msg["params"].get(member));
                if let Some(n) = name.and_then(Value::as_str) {
                    h.push((NAME.to_owned(), encode_value(n).into_owned()));
                }
            }
        } else if let Some(s) = &self.session
            && !is_initialize
        {
            h.push((SESSION_ID.to_owned(), s.clone()));
        }
        h.extend(self.extra.iter().cloned());
        h
    }

    /// A modern request: `method` with `params` plus the per-request `_meta`.
    pub fn modern_request(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = modern_meta();
        json!({"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params})
    }

    /// Sends `msg` with the standard headers.
    pub async fn post(&mut self, msg: &Value) -> HttpResponse {
        let headers = self.headers_for(msg);
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let body = serde_json::to_vec(msg).expect("JSON");
        self.send("POST", &h, &body).await
    }

    /// The legacy handshake: `initialize` then `notifications/initialized`; keeps the
    /// session id.
    pub async fn initialize(&mut self) -> HttpResponse {
        let init = json!({"jsonrpc": "2.0", "id": self.next_id(), "method": "initialize",
            "params": {"protocolVersion": self.revision.as_str(), "capabilities": {},
                "clientInfo": {"name": "rsrc-testkit", "version": "0"}}});
        let res = self.post(&init).await;
        assert_eq!(
            res.status,
            200,
            "initialize: {}",
            String::from_utf8_lossy(&res.body)
        );
        self.session = res.header(SESSION_ID).map(str::to_owned);
        let done = self
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(done.status, 202);
        res
    }

    /// Sends exactly these headers and body; reads the whole response.
    pub async fn send(&self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> HttpResponse {
        let request_method = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
        let mut stream = self.open(method, headers, body).await;
        let status = stream.status;
        let headers = stream.headers.clone();
        let bytes = tokio::time::timeout(Duration::from_secs(20), (&mut stream.body).collect())
            .await
            .expect("the response body ended in time")
            .expect("the response body reads")
            .to_bytes()
            .to_vec();
        let ct = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let mut messages = Vec::new();
        if ct.starts_with("text/event-stream") {
            std::str::from_utf8(&bytes).expect("SSE is UTF-8");
            let mut parser = Parser::new();
            parser.push(&bytes);
            // A last event the body did not end with a blank line is read too.
            parser.push(b"\n\n");
            while let Some(e) = parser.next_event() {
                if !e.data.is_empty() {
                    messages.push(serde_json::from_str(&e.data).expect("SSE data is JSON"));
                }
            }
        } else if ct.starts_with("application/json") {
            messages.push(serde_json::from_slice(&bytes).expect("a JSON body"));
        }
        for m in &messages {
            check(self.revision, m, request_method.as_deref());
        }
        HttpResponse {
            status,
            headers,
            body: bytes,
            messages,
        }
    }

    /// Sends exactly these headers and body; returns as soon as the response head
    /// arrives, with the body to read event by event.
    pub async fn open(&self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> SseStream {
        let request_method = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
        let tcp = TcpStream::connect(self.addr).await.expect("connect");
        tcp.set_nodelay(true).ok();
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .expect("handshake");
        let conn = tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut req = http::Request::builder().method(method).uri(&self.path);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::copy_from_slice(body)))
            .expect("a valid request");
        let res = tokio::time::timeout(Duration::from_secs(20), sender.send_request(req))
            .await
            .expect("the response head arrived in time")
            .expect("the server answered");
        let (parts, body) = res.into_parts();
        SseStream {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
            parser: Parser::new(),
            partial_char: Vec::new(),
            revision: self.revision,
            method: request_method,
            comments: 0,
            conn,
        }
    }
}
