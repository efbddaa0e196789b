//! [`Peer`]: a client that speaks raw JSON lines, for wire tests.
//!
//! It writes exactly the JSON a test gives it, and reads one message per line. Every
//! message it reads is validated against the schema of the revision the peer speaks
//! (set with [`Peer::speak`], or by [`Peer::initialize`]); an invalid message fails the
//! test with the schema's explanation.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use rsrc_protocol::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::schema::validate;

type Reader = BufReader<Box<dyn AsyncRead + Unpin + Send>>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// The `_meta` a 2026-07-28 request carries.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rsrc-testkit", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A raw-JSON client.
pub struct Peer {
    reader: Reader,
    /// `None` once closed.
    writer: Option<Writer>,
    revision: ProtocolVersion,
    /// Method of each request sent and not yet answered, by the id's JSON text.
    pending: HashMap<String, String>,
    /// Notifications read while waiting for a response.
    notifications: VecDeque<Value>,
    next_id: i64,
    timeout: Duration,
}

impl Peer {
    /// A peer over a byte stream, speaking the newest legacy revision until told otherwise.
    pub fn new(
        reader: impl AsyncRead + Unpin + Send + 'static,
        writer: impl AsyncWrite + Unpin + Send + 'static,
    ) -> Self {
        Peer {
            reader: BufReader::new(Box::new(reader)),
            writer: Some(Box::new(writer)),
            revision: ProtocolVersion::LATEST_LEGACY,
            pending: HashMap::new(),
            notifications: VecDeque::new(),
            next_id: 1,
            timeout: Duration::from_secs(10),
        }
    }

    /// Sets the revision messages are validated against.
    pub fn speak(&mut self, v: ProtocolVersion) -> &mut Self {
        self.revision = v;
        self
    }

    /// The revision messages are validated against.
    pub fn revision(&self) -> ProtocolVersion {
        self.revision
    }

    /// Sends one message (a request is remembered so that its response can be validated).
    pub async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).expect("a JSON value serializes");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    fn remember(&mut self, msg: &Value) {
        if let (Some(id), Some(method)) = (msg.get("id"), msg.get("method").and_then(Value::as_str))
        {
            self.pending.insert(id.to_string(), method.to_owned());
        }
    }

    /// Sends raw bytes as they are. Requests among them (one per line) are remembered so
    /// that their responses can be validated.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        for line in bytes.split(|&b| b == b'\n') {
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if let Ok(msg) = serde_json::from_slice::<Value>(line) {
                self.remember(&msg);
            }
        }
        let writer = self.writer.as_mut().expect("the peer is not closed");
        writer
            .write_all(bytes)
            .await
            .expect("the server reads its input");
        writer.flush().await.expect("flush");
    }

    /// Closes the sending side (the server sees end of input).
    pub async fn close(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            writer.shutdown().await.expect("shutdown");
        }
    }

    /// Reads the next message, validated. Panics on timeout, end of stream or an invalid
    /// message.
    pub async fn recv(&mut self) -> Value {
        self.try_recv(self.timeout)
            .await
            .expect("the server answered before the timeout")
            .expect("the server did not close its output")
    }

    /// Reads the next message within `wait`: `Err` on timeout, `Ok(None)` at end of stream.
    pub async fn try_recv(
        &mut self,
        wait: Duration,
    ) -> Result<Option<Value>, tokio::time::error::Elapsed> {
        let mut line = String::new();
        let n = tokio::time::timeout(wait, self.reader.read_line(&mut line))
            .await?
            .expect("the server's output is UTF-8 lines");
        if n == 0 {
            return Ok(None);
        }
        assert!(
            line.ends_with('\n'),
            "a message must end with a newline: {line:?}"
        );
        let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!("the server sent something that is not JSON ({e}): {line:?}")
        });
        let method = msg
            .get("id")
            .filter(|_| msg.get("method").is_none())
            .and_then(|id| self.pending.remove(&id.to_string()));
        if let Err(e) = validate(self.revision, &msg, method.as_deref()) {
            panic!("schema violation: {e}");
        }
        Ok(Some(msg))
    }

    /// Asserts that nothing arrives for `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Ok(msg) = self.try_recv(wait).await {
            panic!("expected silence, got {msg:?}");
        }
    }

    /// Sends a request with a fresh integer id and returns its response; notifications
    /// that arrive first are kept for [`Peer::take_notifications`].
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
        self.response_to(&json!(id)).await
    }

    /// Starts speaking `v`: the `initialize` handshake for a legacy revision; for
    /// 2026-07-28 nothing, since each request carries its revision.
    pub async fn begin(&mut self, v: ProtocolVersion) {
        if v.is_modern() {
            self.speak(v);
        } else {
            self.initialize(v).await;
        }
    }

    /// A request in the peer's revision: [`Peer::modern`] on 2026-07-28, else
    /// [`Peer::request`].
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        if self.revision.is_modern() {
            self.modern(method, params).await
        } else {
            self.request(method, params).await
        }
    }

    /// A 2026-07-28 request: `params` gets the modern `_meta`.
    pub async fn modern(&mut self, method: &str, mut params: Value) -> Value {
        if params.is_null() {
            params = json!({});
        }
        params["_meta"] = modern_meta();
        self.request(method, params).await
    }

    /// Waits for the response to `id`, keeping notifications that come first.
    pub async fn response_to(&mut self, id: &Value) -> Value {
        loop {
            let msg = self.recv().await;
            if msg.get("method").is_some() {
                self.notifications.push_back(msg);
                continue;
            }
            assert_eq!(
                msg.get("id"),
                Some(id),
                "a response to another request: {msg}"
            );
            return msg;
        }
    }

    /// Notifications received while waiting for responses.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        self.notifications.drain(..).collect()
    }

    /// The notifications kept so far, then every message that arrives within `wait`.
    pub async fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let mut got = self.take_notifications();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.try_recv(left).await {
                Ok(Some(m)) => got.push(m),
                _ => return got,
            }
        }
    }

    /// Performs the legacy handshake for `version` and switches validation to the
    /// negotiated revision. Returns the `initialize` result.
    pub async fn initialize(&mut self, version: ProtocolVersion) -> Value {
        self.speak(version);
        let resp = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version.as_str(),
                    "capabilities": {},
                    "clientInfo": {"name": "rsrc-testkit", "version": "0"}
                }),
            )
            .await;
        let result = resp["result"].clone();
        assert_eq!(result["protocolVersion"], version.as_str(), "{resp}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        result
    }
}
