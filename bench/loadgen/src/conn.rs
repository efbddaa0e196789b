//! A client's connection to a server under test: JSON-RPC over the server's stdin and
//! stdout, or Streamable HTTP to its endpoint, with the MCP handshake done.
//!
//! Invariant: a response is matched to its request by id, and only a response (a
//! `result` or an `error`) is taken as one; notifications and anything else the server
//! sends are counted as bytes received and otherwise ignored. Every call has a deadline.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

/// The revision the client offers.
pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";
/// The longest a call may take, 10 MiB reads of the slowest SDK included.
const CALL_DEADLINE: Duration = Duration::from_secs(120);
/// The longest line or body accepted from a server.
const MAX_MESSAGE: usize = 64 << 20;

/// Why a call failed.
pub(crate) type Error = String;

/// What a call brought back: the `result`, and how many bytes the server sent for it.
pub(crate) struct Answer {
    pub(crate) result: Value,
    pub(crate) bytes: usize,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Answer, Error>>>>>;

/// A connection to one server, shared by every request in flight.
pub(crate) enum Conn {
    Stdio(Stdio),
    Http(Http),
}

impl Conn {
    /// Sends `method` with `params` and waits for its answer; a JSON-RPC error is an
    /// `Err` naming its code and message.
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
    pub(crate) async fn initialize(&mut self) -> Result<Value, Error> {
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
        let version = answer.result["protocolVersion"]
            .as_str()
            .ok_or("initialize: no protocolVersion")?
            .to_owned();
        if answer.result["capabilities"]["resources"].is_null() {
            return Err("initialize: the server declares no resources capability".into());
        }
        match self {
            Conn::Stdio(s) => s.notify("notifications/initialized").await?,
            Conn::Http(h) => {
                h.version = Some(version);
                h.notify("notifications/initialized").await?;
            }
        }
        Ok(answer.result)
    }
}

/// The request body of a call.
fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("JSON values encode")
}

/// A message from the server, taken as the answer to `id` if it is one.
/// The result is moved out of the message, never copied: a listing's page is large.
fn answer_of(message: Value, bytes: usize) -> Option<(u64, Result<Answer, Error>)> {
    let Value::Object(mut message) = message else {
        return None;
    };
    let id = message.get("id")?.as_u64()?;
    if let Some(error) = message.get("error") {
        return Some((id, Err(format!("JSON-RPC error {error}"))));
    }
    let result = message.remove("result")?;
    Some((id, Ok(Answer { result, bytes })))
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

/// Reads the server's stdout line by line until it ends; each answer goes to its call.
/// At the end, calls still waiting fail (their senders are dropped).
async fn read_answers(stdout: ChildStdout, pending: Pending) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_MESSAGE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if let Some((id, answer)) = answer_of(message, line.len())
            && let Some(tx) = pending.lock().expect("not poisoned").remove(&id)
        {
            let _ = tx.send(answer);
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
        let limited = http_body_util::Limited::new(response.into_body(), MAX_MESSAGE);
        let body = limited
            .collect()
            .await
            .map_err(|e| format!("reading the response: {e}"))?
            .to_bytes();
        Ok((status, session, body))
    }

    /// `initialize`: its answer names the session every later call carries.
    async fn open(&mut self, params: Value) -> Result<Answer, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (status, session, body) = self.post(request(id, "initialize", &params)).await?;
        if !(200..300).contains(&status) {
            return Err(format!("initialize: HTTP {status}"));
        }
        self.session = session;
        answer_in(&body, id)
    }

    async fn call(&self, method: &str, params: Value) -> Result<Answer, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (status, _, body) = self.post(request(id, method, &params)).await?;
        if !(200..300).contains(&status) {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Err(format!("{method}: HTTP {status}: {text}"));
        }
        answer_in(&body, id)
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

/// The answer to `id` in a response body: the body itself as JSON, or the event of a
/// `text/event-stream` that carries it.
pub(crate) fn answer_in(body: &[u8], id: u64) -> Result<Answer, Error> {
    let bytes = body.len();
    if let Ok(message) = serde_json::from_slice::<Value>(body) {
        return match answer_of(message, bytes) {
            Some((got, answer)) if got == id => answer,
            _ => Err(format!("the response does not answer request {id}")),
        };
    }
    let text = std::str::from_utf8(body).map_err(|_| "a response that is not UTF-8")?;
    for event in text.split("\n\n").flat_map(|e| e.split("\r\n\r\n")) {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        if let Ok(message) = serde_json::from_str::<Value>(&data.join("\n"))
            && let Some((got, answer)) = answer_of(message, bytes)
            && got == id
        {
            return answer;
        }
    }
    Err(format!("no answer to request {id} in the event stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_found_in_json_and_in_an_event_stream() {
        let json = br#"{"jsonrpc":"2.0","id":3,"result":{"ok":true}}"#;
        assert_eq!(answer_in(json, 3).unwrap().result["ok"], true);
        assert!(answer_in(json, 4).is_err());

        let sse = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n\
                   event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n\
                   data: \"result\":{\"n\":1}}\n\n";
        let answer = answer_in(sse.as_bytes(), 7).unwrap();
        assert_eq!(answer.result["n"], 1);
        assert_eq!(answer.bytes, sse.len());

        let crlf = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n\r\n";
        assert!(answer_in(crlf.as_bytes(), 2).is_ok());
    }

    #[test]
    fn a_json_rpc_error_is_an_error_naming_its_code() {
        let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"not found"}}"#;
        let error = answer_in(body, 1).err().unwrap();
        assert!(error.contains("-32002"), "{error}");
    }
}
