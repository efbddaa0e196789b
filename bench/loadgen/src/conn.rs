//! A client's connection to a server under test: JSON-RPC over the server's stdin and
//! stdout, or Streamable HTTP to its endpoint, with the MCP handshake done.
//!
//! Invariant: a response is matched to its request by id, and only a response (a
//! `result` or an `error`) is taken as one; notifications and anything else the server
//! sends are counted as bytes received and otherwise ignored. Every call has a deadline.
//! Matching reads a message only until it has seen its `id` and a `result` or `error`
//! key; the answer keeps the message, and `Answer::result` then decodes it once, typed,
//! checks. No message is decoded into a tree nor checked for UTF-8 as a whole: a string
//! is checked as it is decoded, and what is not read is only scanned for its end.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use crate::json::{Object, Present, Raw, Str, U64};

/// The revision the client offers.
pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";
/// The longest a call may take, 10 MiB reads of the slowest SDK included.
const CALL_DEADLINE: Duration = Duration::from_secs(120);
/// The longest line or body accepted from a server.
const MAX_MESSAGE: usize = 64 << 20;

/// Why a call failed.
pub(crate) type Error = String;

/// What a call brought back: the message taken as the answer to request `id` (in
/// `message`, at `span`), undecoded, and how many bytes the server sent for it.
pub(crate) struct Answer {
    message: Bytes,
    span: Range<usize>,
    id: u64,
    pub(crate) bytes: usize,
}

/// A JSON-RPC response, its result decoded as `T`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
struct Response<'a, T> {
    #[serde(default)]
    id: U64,
    #[serde(default, borrow)]
    error: Raw<'a>,
    #[serde(default)]
    result: Present<Object<T>>,
}

impl Answer {
    /// Whether the message has no control character (below U+0020) but whitespace at its
    /// ends: then no string in it has one unescaped, as `json::Decoded` needs. (Compact
    /// JSON has none; whitespace between tokens may, and then the view is not used.)
    pub(crate) fn is_compact(&self) -> bool {
        self.message[self.span.clone()]
            .trim_ascii()
            .chunks(64)
            .all(|chunk| chunk.iter().fold(true, |ok, &b| ok & (b >= 0x20)))
    }

    /// The message decoded (once, borrowing from it) as the answer to its request, its
    /// result as `T` (`T`'s default where the result is not an object, as indexing a
    /// `Value` would have it); a JSON-RPC error is an `Err` naming its code and message.
    pub(crate) fn result<'a, T: Deserialize<'a> + Default>(&'a self) -> Result<T, Error> {
        let id = self.id;
        let message = &self.message[self.span.clone()];
        let response = serde_json::from_slice::<Object<Response<'a, T>>>(message)
            .map_err(|e| format!("the answer to request {id} does not decode: {e}"))?
            .0
            .filter(|r| r.id.0 == Some(id))
            .ok_or_else(|| format!("the response does not answer request {id}"))?;
        if let Some(error) = response.error.0 {
            return Err(format!("JSON-RPC error {error}"));
        }
        let result = response
            .result
            .0
            .ok_or_else(|| format!("the response does not answer request {id}"))?;
        Ok(result.0.unwrap_or_default())
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Answer, Error>>>>>;

/// A connection to one server, shared by every request in flight.
pub(crate) enum Conn {
    Stdio(Stdio),
    Http(Http),
}

/// What `initialize` is checked for.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Initialized<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Str<'a>,
    capabilities: Object<Capabilities<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Capabilities<'a> {
    #[serde(borrow)]
    resources: Raw<'a>,
}

impl Conn {
    /// Sends `method` with `params` and waits for its answer, to be decoded by the caller
    /// (`Answer::result`).
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Answer, Error> {
        let call = async {
            match self {
                Conn::Stdio(s) => s.call(method, params).await,
                Conn::Http(h) => h.call(method, params).await,
            }
        };
        tokio::time::timeout(CALL_DEADLINE, call)
            .await
            .map_err(|_| format!("{method}: no answer within {CALL_DEADLINE:?}"))?
    }

    /// The MCP handshake: `initialize`, then `notifications/initialized`.
    pub(crate) async fn initialize(&mut self) -> Result<(), Error> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-bench", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = match self {
            Conn::Stdio(_) => self.call("initialize", params).await?,
            Conn::Http(h) => tokio::time::timeout(CALL_DEADLINE, h.open(params))
                .await
                .map_err(|_| "initialize: no answer in time".to_owned())??,
        };
        let result: Initialized<'_> = answer.result()?;
        let version = result
            .protocol_version
            .0
            .ok_or("initialize: no protocolVersion")?
            .into_owned();
        let resources = result.capabilities.0.and_then(|c| c.resources.0);
        if resources.is_none_or(|r| r.get() == "null") {
            return Err("initialize: the server declares no resources capability".into());
        }
        match self {
            Conn::Stdio(s) => s.notify("notifications/initialized").await?,
            Conn::Http(h) => {
                h.version = Some(version);
                h.notify("notifications/initialized").await?;
            }
        }
        Ok(())
    }
}

/// A request's envelope, its params written where they are.
#[derive(Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a Value,
}

/// The request body of a call.
fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    serde_json::to_vec(&Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .expect("JSON values encode")
}

/// The keys matching looks at.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Id,
    Result,
    Error,
    #[serde(other)]
    Other,
}

/// What matching saw of a message.
#[derive(Default)]
struct Seen {
    id: Option<u64>,
    answer: bool,
}

/// Reads an object's keys until it has seen an id and a `result` or `error` key (the
/// value under it is not read when the id came first), into `Seen`.
struct Peek<'s>(&'s mut Seen);

impl<'de> Visitor<'de> for Peek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => self.0.id = map.next_value::<U64>()?.0,
                Key::Result | Key::Error => {
                    self.0.answer = true;
                    if self.0.id.is_some() {
                        // Enough: `Answer::result` reads the rest.
                        return Err(de::Error::custom("matched"));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The id of `message` if it is a response (an object with a number id, and a result or an
/// error), read no further than it takes; `None` for anything else, JSON or not. Whether
/// the rest is well-formed is for `Answer::result` to find.
fn answer_id(message: &[u8]) -> Option<u64> {
    let mut seen = Seen::default();
    let _ = serde_json::Deserializer::from_slice(message).deserialize_any(Peek(&mut seen));
    seen.id.filter(|_| seen.answer)
}

/// Where `part`, a slice of `whole`, lies in it.
fn place(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    debug_assert!(start + part.len() <= whole.len());
    start..start + part.len()
}

/// JSON-RPC over a child's stdin and stdout, newline-delimited.
pub(crate) struct Stdio {
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    next: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Stdio {
    /// A connection over the child's pipes; a task reads its stdout and hands each
    /// answer to the call waiting for it.
    pub(crate) fn new(stdin: ChildStdin, stdout: ChildStdout) -> Self {
        let pending: Pending = Arc::default();
        let reader = tokio::spawn(read_answers(stdout, pending.clone()));
        Stdio {
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next: AtomicU64::new(1),
            reader,
        }
    }

    async fn call(&self, method: &str, params: Value) -> Result<Answer, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("not poisoned").insert(id, tx);
        self.send(request(id, method, &params), method).await?;
        rx.await
            .map_err(|_| format!("{method}: the server closed its stdout"))?
    }

    async fn notify(&self, method: &str) -> Result<(), Error> {
        let message = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": method}))
            .expect("JSON values encode");
        self.send(message, method).await
    }

    /// Writes one message and its newline to the server's stdin.
    async fn send(&self, mut line: Vec<u8>, method: &str) -> Result<(), Error> {
        line.push(b'\n');
        self.stdin
            .lock()
            .await
            .write_all(&line)
            .await
            .map_err(|e| format!("{method}: writing to the server: {e}"))
    }
}

/// Reads the server's stdout line by line until it ends; each answer goes to its call,
/// with its line (each line is read into a buffer of its own, sized by the last one).
/// At the end, calls still waiting fail (their senders are dropped).
async fn read_answers(stdout: ChildStdout, pending: Pending) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut capacity = 1 << 12;
    loop {
        let mut line = Vec::with_capacity(capacity);
        match (&mut reader)
            .take(MAX_MESSAGE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        capacity = (line.len() + line.len() / 8).max(1 << 12);
        if let Some(id) = answer_id(&line)
            && let Some(tx) = pending.lock().expect("not poisoned").remove(&id)
        {
            let _ = tx.send(Ok(Answer {
                span: 0..line.len(),
                bytes: line.len(),
                message: Bytes::from(line),
                id,
            }));
        }
    }
    pending.lock().expect("not poisoned").clear();
}

/// Streamable HTTP: each call a POST to the endpoint, on a pool of kept-alive HTTP/1.1
/// connections with Nagle's algorithm off.
pub(crate) struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    url: hyper::Uri,
    session: Option<String>,
    version: Option<String>,
    next: AtomicU64,
}

impl Http {
    /// A client of the endpoint at `url`, with room for `connections` at once.
    pub(crate) fn new(url: &str, connections: usize) -> Result<Self, Error> {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(connections)
            .build(connector);
        Ok(Http {
            client,
            url: url.parse().map_err(|e| format!("{url}: {e}"))?,
            session: None,
            version: None,
            next: AtomicU64::new(1),
        })
    }

    /// A POST of `body` with the session's headers; the response's status, session
    /// header and body.
    async fn post(&self, body: Vec<u8>) -> Result<(u16, Option<String>, Bytes), Error> {
        let mut builder = hyper::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            builder = builder.header("mcp-session-id", session);
        }
        if let Some(version) = &self.version {
            builder = builder.header("mcp-protocol-version", version);
        }
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| format!("POST: {e}"))?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Each frame is copied into one buffer sized by the length announced, as it comes:
        // hyper reuses its own buffer, where frames kept until the end would not let it.
        let announced = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = Vec::with_capacity(announced.min(MAX_MESSAGE));
        let mut incoming = response.into_body();
        while let Some(frame) = incoming.frame().await {
            let frame = frame.map_err(|e| format!("reading the response: {e}"))?;
            if let Ok(data) = frame.into_data() {
                if body.len() + data.len() > MAX_MESSAGE {
                    return Err("reading the response: length limit exceeded".into());
                }
                body.extend_from_slice(&data);
            }
        }
        Ok((status, session, Bytes::from(body)))
    }

    /// `initialize`: its answer names the session every later call carries.
    async fn open(&mut self, params: Value) -> Result<Answer, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (status, session, body) = self.post(request(id, "initialize", &params)).await?;
        if !(200..300).contains(&status) {
            return Err(format!("initialize: HTTP {status}"));
        }
        self.session = session;
        answer_in(body, id)
    }

    async fn call(&self, method: &str, params: Value) -> Result<Answer, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (status, _, body) = self.post(request(id, method, &params)).await?;
        if !(200..300).contains(&status) {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Err(format!("{method}: HTTP {status}: {text}"));
        }
        answer_in(body, id)
    }

    async fn notify(&self, method: &str) -> Result<(), Error> {
        let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": method}))
            .expect("JSON values encode");
        let (status, _, _) = self.post(body).await?;
        if !(200..300).contains(&status) {
            return Err(format!("{method}: HTTP {status}"));
        }
        Ok(())
    }
}

/// The answer to `id` in a response body: the body itself when it is a JSON object, or
/// the event of a `text/event-stream` that carries it (data lines joined by newlines; a
/// blank line ends an event).
pub(crate) fn answer_in(body: Bytes, id: u64) -> Result<Answer, Error> {
    let bytes = body.len();
    if body.trim_ascii_start().starts_with(b"{") {
        return Ok(Answer {
            span: 0..bytes,
            message: body,
            id,
            bytes,
        });
    }
    let mut data: Vec<&[u8]> = Vec::new();
    let mut rest = &body[..];
    while !rest.is_empty() || !data.is_empty() {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = &rest[..end];
        rest = &rest[(end + 1).min(rest.len())..];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            if let Some(d) = line.strip_prefix(b"data:") {
                data.push(d.strip_prefix(b" ").unwrap_or(d));
            }
            if !rest.is_empty() {
                continue;
            }
        }
        // The end of an event.
        match data.as_slice() {
            [] => {}
            // One line of data is the message itself, in the body.
            [message] => {
                if answer_id(message) == Some(id) {
                    return Ok(Answer {
                        span: place(&body, message),
                        message: body.clone(),
                        id,
                        bytes,
                    });
                }
            }
            lines => {
                let message = lines.join(&b'\n');
                if answer_id(&message) == Some(id) {
                    return Ok(Answer {
                        span: 0..message.len(),
                        message: Bytes::from(message),
                        id,
                        bytes,
                    });
                }
            }
        }
        data.clear();
    }
    Err(format!("no answer to request {id} in the event stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &str, id: u64) -> Result<Answer, Error> {
        answer_in(Bytes::copy_from_slice(body.as_bytes()), id)
    }

    /// The result of the answer to `id` in `body`, as a `Value` (`Null` if not an object).
    fn result(body: &str, id: u64) -> Result<Value, Error> {
        answer(body, id)?.result::<Value>()
    }

    #[test]
    fn an_answer_is_found_in_json_and_in_an_event_stream() {
        let json = r#"{"jsonrpc":"2.0","id":3,"result":{"ok":true}}"#;
        assert_eq!(result(json, 3).unwrap(), json!({"ok": true}));
        assert!(result(json, 4).is_err());
        let spaced = " { \"result\" : {\"a\": [1, 2]} , \"id\" : 3 }\n";
        assert_eq!(result(spaced, 3).unwrap(), json!({"a": [1, 2]}));

        let sse = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n\
                   event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n\
                   data: \"result\":{\"n\":1}}\n\n";
        assert_eq!(result(sse, 7).unwrap(), json!({"n": 1}));
        assert_eq!(answer(sse, 7).unwrap().bytes, sse.len());
        assert!(answer(sse, 8).is_err());

        let crlf = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n\r\n";
        assert_eq!(result(crlf, 2).unwrap(), json!({}));
        let unended = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}";
        assert_eq!(result(unended, 2).unwrap(), json!({}));

        // Another id's answer, then ours, each on one line of data.
        let two = "data: {\"id\":4,\"result\":{\"x\":0}}\n\n\
                   event: message\ndata: {\"id\":5,\"result\":{\"x\":\"a\\\"b\"}}\n\n";
        assert_eq!(result(two, 5).unwrap(), json!({"x": "a\"b"}));
        assert_eq!(result(two, 4).unwrap(), json!({"x": 0}));
        assert!(answer(two, 6).is_err());
    }

    #[test]
    fn only_a_response_to_a_number_id_is_an_answer() {
        for body in [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","params":{"id":1,"result":{}}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"[1, {}, {}]"#,
            "not json",
            "",
        ] {
            assert!(result(body, 1).is_err(), "{body}");
            assert_eq!(answer_id(body.as_bytes()), None, "{body}");
            let sse = format!("data: {body}\n\n");
            assert!(answer(&sse, 1).is_err(), "{sse}");
        }
        // Matching reads no further than it needs; the answer's decoding reads it all.
        assert_eq!(answer_id(br#"{"id":1,"result":{"#), Some(1));
        assert!(result(r#"{"id":1,"result":{"#, 1).is_err());
        assert_eq!(answer_id(br#"{"result":{"a":[1,"}"]},"id":9}"#), Some(9));
        assert_eq!(answer_id(br#"{"\u0069d":9,"error":{}}"#), Some(9));
        // A null result is a result (its checks fail), not silence.
        let null = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        assert_eq!(result(null, 1).unwrap(), Value::Null);
        assert!(result(r#"{"id":1,"result":{}}"#, 1).is_ok());
        // A string the view reads must be UTF-8; a duplicate key is refused.
        let bad = answer_in(
            Bytes::from_static(b"{\"id\":1,\"result\":{\"a\":\"\xff\"}}"),
            1,
        );
        assert!(bad.unwrap().result::<Value>().is_err());
        assert!(result(r#"{"id":1,"result":{},"result":{}}"#, 1).is_err());
    }

    #[test]
    fn a_json_rpc_error_is_an_error_naming_its_code() {
        let body = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"not found"}}"#;
        let error = result(body, 1).err().unwrap();
        assert!(error.contains("-32002"), "{error}");
        // Even beside a result, even null, even after it.
        let both = r#"{"jsonrpc":"2.0","id":1,"result":{},"error":null}"#;
        assert!(result(both, 1).is_err());
    }
}
