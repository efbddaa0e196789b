//! The client's Streamable HTTP link: one POST per message, answers as JSON or SSE, and
//! for the 2025 revisions the session (`Mcp-Session-Id`) with its GET stream.
//!
//! Invariants:
//! - A modern request carries `MCP-Protocol-Version`, `Mcp-Method` and, for
//!   `resources/read`, `Mcp-Name` (base64-sentinel encoded when not plain ASCII), matching
//!   its body; a legacy request carries the negotiated version and the session id.
//! - Notifications met on any stream (a request's SSE answer, the GET stream, a
//!   `subscriptions/listen` stream) go to the one notification queue, which drops rather
//!   than grows when unread.
//! - An HTTP error with a JSON-RPC error body is that error; otherwise the status and the
//!   beginning of the body are reported.
//! - Dropping the link ends the session (DELETE) and the GET stream.
//!
//! The header names, the `=?base64?…?=` sentinel and the SSE parser are the wire crate's
//! (`rsrc_protocol::http`), the same the server reads and writes with; nothing here spells
//! them again.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rsrc_protocol::RequestMeta;
use rsrc_protocol::http::headers::{
    self, LAST_EVENT_ID, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID,
};
use rsrc_protocol::http::sse;
use rsrc_protocol::jsonrpc::{self, ErrorObject, Message, RequestId};
use rsrc_protocol::lifecycle::CancelledParams;
use rsrc_protocol::methods::{Cancelled, Initialize, Method, NotificationMethod};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ClientError;
use crate::io::Notification;
use crate::options::ClientOptions;

const NOTIFICATION_QUEUE: usize = 1024;

/// One Streamable HTTP endpoint.
#[derive(Debug)]
pub(crate) struct HttpLink {
    state: Arc<LinkState>,
    notifications: Mutex<Option<mpsc::Receiver<Notification>>>,
    next_id: AtomicI64,
}

#[derive(Debug)]
struct LinkState {
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    options: ClientOptions,
    session: Mutex<Option<String>>,
    /// The legacy revision negotiated by `initialize`, sent on later requests.
    legacy_version: Mutex<Option<String>>,
    notes: mpsc::Sender<Notification>,
    /// Ends the background streams (GET stream, listen streams) when the link goes.
    closed: tokio_util::sync::CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An SSE stream read as it arrives ([`sse::Parser`], the wire crate's), an event never
/// held beyond the client's message limit.
struct SseParser {
    parser: sse::Parser,
    limit: usize,
}

impl SseParser {
    fn new(limit: usize) -> Self {
        SseParser {
            parser: sse::Parser::new(),
            limit,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.parser.push(bytes);
    }

    fn next_event(&mut self) -> Option<sse::Event> {
        self.parser.next_event()
    }

    /// After the complete events were taken: an error if the one still arriving is
    /// already longer than the limit.
    fn check(&self) -> Result<(), ClientError> {
        if self.parser.buffered() > self.limit {
            return Err(ClientError::Protocol(format!(
                "an event of the server's stream exceeds this client's limit of {} bytes",
                self.limit
            )));
        }
        Ok(())
    }
}

/// How much of an error response's body is kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// A response body of at most `limit` bytes, read as it arrives (a server that announces
/// or sends more is refused before it is all buffered).
async fn read_body(resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, ClientError> {
    let too_long = || {
        ClientError::Protocol(format!(
            "the response exceeds this client's limit of {limit} bytes"
        ))
    };
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_long());
    }
    let mut out = Vec::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|e| ClientError::Protocol(format!("reading the response: {e}")))?;
        if out.len() + chunk.len() > limit {
            return Err(too_long());
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// What a body's messages amount to for the request `id`.
enum Seen {
    Answer(Result<Value, ErrorObject>),
    Other,
}

impl LinkState {
    /// Routes one message: notifications to the queue; the response to `id` returned.
    fn route(&self, bytes: &[u8], id: Option<&RequestId>) -> Seen {
        match jsonrpc::decode(bytes) {
            Ok(Message::Notification(n)) => {
                let params = n
                    .params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                let note = Notification {
                    method: n.method.into_owned(),
                    params,
                };
                if self.notes.try_send(note).is_err() {
                    tracing::debug!("notification queue full or unread: dropped");
                }
                Seen::Other
            }
            Ok(Message::Response(r)) if r.id.is_some() && r.id.as_ref() == id => {
                Seen::Answer(match r.outcome {
                    Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                        ErrorObject::new(
                            rsrc_protocol::ErrorCode::INTERNAL_ERROR,
                            format!("malformed result: {e}"),
                        )
                    }),
                    Err(e) => Err(e),
                })
            }
            Ok(Message::Response(r)) if r.id.is_none() => match r.outcome {
                Err(e) => Seen::Answer(Err(e)),
                Ok(_) => Seen::Other,
            },
            Ok(other) => {
                tracing::debug!(message = ?other, "an unexpected message on the stream");
                Seen::Other
            }
            Err(e) => {
                tracing::warn!(error = %e, "undecodable message from the server");
                Seen::Other
            }
        }
    }

    fn post(&self, body: Vec<u8>, headers: HeaderMap) -> reqwest::RequestBuilder {
        self.http
            .post(self.url.clone())
            .headers(self.headers.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body)
    }

    /// Headers for a message: the revision, the session, and for a modern request the
    /// mirrored method and name.
    fn message_headers(
        &self,
        method: &str,
        params: &Value,
        meta: Option<&RequestMeta>,
    ) -> HeaderMap {
        let mut h = HeaderMap::new();
        let version = meta
            .and_then(|m| m.protocol_version.clone())
            .or_else(|| lock(&self.legacy_version).clone());
        if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v).ok()) {
            h.insert(HeaderName::from_static(PROTOCOL_VERSION), v);
        }
        if meta.is_some() {
            if let Ok(v) = HeaderValue::from_str(method) {
                h.insert(HeaderName::from_static(METHOD), v);
            }
            if let Some(v) = headers::mirrored_member(method)
                .and_then(|member| params.get(member))
                .and_then(Value::as_str)
                .and_then(|n| HeaderValue::from_str(&headers::encode_value(n)).ok())
            {
                h.insert(HeaderName::from_static(NAME), v);
            }
        } else if let Some(s) = lock(&self.session)
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            h.insert(HeaderName::from_static(SESSION_ID), s);
        }
        h
    }

    /// Reads a response to the request `id`: one JSON message, or an SSE stream whose
    /// notifications are routed until the answer comes.
    async fn answer(&self, resp: reqwest::Response, id: &RequestId) -> Result<Value, ClientError> {
        let status = resp.status();
        let ct = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let limit = self.options.max_message;
        if ct.starts_with("text/event-stream") {
            let mut parser = SseParser::new(limit);
            let mut body = resp.bytes_stream();
            while let Some(chunk) = body.next().await {
                let chunk =
                    chunk.map_err(|e| ClientError::Protocol(format!("reading the stream: {e}")))?;
                parser.push(&chunk);
                while let Some(event) = parser.next_event() {
                    if event.data.is_empty() {
                        continue;
                    }
                    if let Seen::Answer(a) = self.route(event.data.as_bytes(), Some(id)) {
                        return a.map_err(ClientError::Rpc);
                    }
                }
                parser.check()?;
            }
            return Err(ClientError::Closed);
        }
        let bytes = read_body(resp, limit).await?;
        if ct.starts_with("application/json")
            && let Seen::Answer(a) = self.route(&bytes, Some(id))
        {
            return a.map_err(ClientError::Rpc);
        }
        Err(http_error(status, &bytes))
    }
}

fn http_error(status: reqwest::StatusCode, body: &[u8]) -> ClientError {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    ClientError::Http {
        status: status.as_u16(),
        message: text.trim().to_owned(),
    }
}

impl HttpLink {
    pub(crate) fn new(url: &str, options: ClientOptions) -> Result<HttpLink, ClientError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| ClientError::Protocol(format!("not a URL: {url}: {e}")))?;
        let mut headers = HeaderMap::new();
        for (k, v) in &options.http_headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ClientError::Protocol(format!("bad header name {k:?}")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|_| ClientError::Protocol(format!("bad value for header {k}")))?;
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(options.request_timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ClientError::Protocol(format!("HTTP client: {e}")))?;
        let (notes, rx) = mpsc::channel(NOTIFICATION_QUEUE);
        Ok(HttpLink {
            state: Arc::new(LinkState {
                http,
                url,
                headers,
                options,
                session: Mutex::new(None),
                legacy_version: Mutex::new(None),
                notes,
                closed: tokio_util::sync::CancellationToken::new(),
            }),
            notifications: Mutex::new(Some(rx)),
            next_id: AtomicI64::new(1),
        })
    }

    pub(crate) fn options(&self) -> &ClientOptions {
        &self.state.options
    }

    pub(crate) fn take_notifications(&self) -> Option<mpsc::Receiver<Notification>> {
        lock(&self.notifications).take()
    }

    fn encode(
        &self,
        method: &str,
        params: &Value,
        id: Option<&RequestId>,
    ) -> Result<Vec<u8>, ClientError> {
        let mut body = Vec::with_capacity(256);
        let written = match id {
            Some(id) => jsonrpc::write_request(&mut body, id, method, Some(params)),
            None => jsonrpc::write_notification(&mut body, method, Some(params)),
        };
        written.map_err(|e| ClientError::Protocol(format!("cannot encode {method}: {e}")))?;
        Ok(body)
    }

    pub(crate) async fn request<M: Method>(
        &self,
        params: &M::Params,
        meta: Option<&RequestMeta>,
        timeout: Duration,
    ) -> Result<M::Result, ClientError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let value = crate::params::with_meta(params, meta, M::NAME)?;
        let body = self.encode(M::NAME, &value, Some(&id))?;
        let headers = self.state.message_headers(M::NAME, &value, meta);
        let state = &self.state;
        let exchange = async {
            let resp = state
                .post(body, headers)
                .send()
                .await
                .map_err(|e| ClientError::Protocol(format!("HTTP request failed: {e}")))?;
            if M::NAME == <Initialize as Method>::NAME
                && let Some(s) = resp.headers().get(SESSION_ID).and_then(|v| v.to_str().ok())
            {
                tracing::debug!(session = s, "the server started a session");
                *lock(&state.session) = Some(s.to_owned());
            }
            state.answer(resp, &id).await
        };
        let value = match tokio::time::timeout(timeout, exchange).await {
            Ok(v) => v?,
            Err(_) => {
                if meta.is_none() {
                    // A legacy server is told; a modern one sees the connection close.
                    self.cancel(id);
                }
                return Err(ClientError::Timeout);
            }
        };
        serde_json::from_value(value)
            .map_err(|e| ClientError::Protocol(format!("malformed {} result: {e}", M::NAME)))
    }

    fn cancel(&self, id: RequestId) {
        let params = CancelledParams {
            request_id: Some(id),
            reason: Some("the client stopped waiting".into()),
            meta: None,
        };
        let state = Arc::clone(&self.state);
        if let Ok(value) = serde_json::to_value(&params)
            && let Ok(body) = self.encode(Cancelled::NAME, &value, None)
        {
            let headers = state.message_headers(Cancelled::NAME, &value, None);
            tokio::spawn(async move {
                let _ = state.post(body, headers).send().await;
            });
        }
    }

    pub(crate) async fn notify<N: NotificationMethod>(
        &self,
        params: &N::Params,
    ) -> Result<(), ClientError> {
        let value = serde_json::to_value(params)
            .map_err(|e| ClientError::Protocol(format!("cannot encode {}: {e}", N::NAME)))?;
        let body = self.encode(N::NAME, &value, None)?;
        let headers = self.state.message_headers(N::NAME, &value, None);
        let resp = self
            .state
            .post(body, headers)
            .send()
            .await
            .map_err(|e| ClientError::Protocol(format!("HTTP request failed: {e}")))?;
        if resp.status().is_success() {
            Ok(())
        } else {
            let status = resp.status();
            Err(http_error(
                status,
                &read_body(resp, ERROR_BODY_LIMIT).await.unwrap_or_default(),
            ))
        }
    }

    /// After `initialize`: later requests name `version`, and the session's GET stream
    /// carries the server's notifications.
    pub(crate) fn legacy_session(&self, version: &str) {
        *lock(&self.state.legacy_version) = Some(version.to_owned());
        if lock(&self.state.session).is_some() {
            tokio::spawn(get_stream(Arc::downgrade(&self.state)));
        }
    }

    /// Sends `subscriptions/listen` and keeps its stream open in the background, routing
    /// its notifications to the queue; returns once the server has answered the POST.
    pub(crate) async fn listen(
        &self,
        params: Value,
        meta: &RequestMeta,
    ) -> Result<tokio::task::JoinHandle<()>, ClientError> {
        let method = rsrc_protocol::methods::SubscriptionsListen::NAME;
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let value = crate::params::with_meta(&params, Some(meta), method)?;
        let body = self.encode(method, &value, Some(&id))?;
        let headers = self.state.message_headers(method, &value, Some(meta));
        let resp = self
            .state
            .post(body, headers)
            .send()
            .await
            .map_err(|e| ClientError::Protocol(format!("HTTP request failed: {e}")))?;
        let ct = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !ct.starts_with("text/event-stream") {
            // An error (or an immediate end) answered as JSON.
            self.state.answer(resp, &id).await?;
            return Err(ClientError::Protocol(
                "subscriptions/listen ended at once".into(),
            ));
        }
        let state = Arc::clone(&self.state);
        Ok(tokio::spawn(async move {
            let closed = state.closed.clone();
            tokio::select! {
                _ = state.answer(resp, &id) => {}
                () = closed.cancelled() => {}
            }
        }))
    }
}

/// The legacy GET stream: the server's notifications outside requests. Reconnects with
/// `Last-Event-ID` when the connection drops; ends when the link goes, or at once if the
/// server offers no stream (405).
async fn get_stream(state: Weak<LinkState>) {
    let mut last_event: Option<String> = None;
    let mut failures = 0u32;
    loop {
        let Some(s) = state.upgrade() else { return };
        let closed = s.closed.clone();
        let limit = s.options.max_message;
        let mut req = s
            .http
            .get(s.url.clone())
            .headers(s.headers.clone())
            .header(ACCEPT, "text/event-stream");
        if let Some(id) = lock(&s.session).clone() {
            req = req.header(SESSION_ID, id);
        }
        if let Some(v) = lock(&s.legacy_version).clone() {
            req = req.header(PROTOCOL_VERSION, v);
        }
        if let Some(id) = &last_event {
            req = req.header(LAST_EVENT_ID, id.clone());
        }
        drop(s);
        let resp = tokio::select! {
            r = req.send() => r,
            () = closed.cancelled() => return,
        };
        match resp {
            Ok(r) if r.status().is_success() => {
                failures = 0;
                let mut parser = SseParser::new(limit);
                let mut body = r.bytes_stream();
                loop {
                    let chunk = tokio::select! {
                        c = body.next() => c,
                        () = closed.cancelled() => return,
                    };
                    let Some(Ok(chunk)) = chunk else { break };
                    parser.push(&chunk);
                    let Some(s) = state.upgrade() else { return };
                    while let Some(event) = parser.next_event() {
                        if let Some(id) = event.id {
                            last_event = Some(id);
                        }
                        if !event.data.is_empty() {
                            s.route(event.data.as_bytes(), None);
                        }
                    }
                    if let Err(e) = parser.check() {
                        tracing::warn!(error = %e, "the server's GET stream is dropped");
                        break;
                    }
                }
            }
            Ok(r) if r.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED => return,
            Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => return,
            Ok(_) | Err(_) => failures += 1,
        }
        if failures > 5 {
            tracing::debug!("the server's GET stream keeps failing: given up");
            return;
        }
        let backoff = Duration::from_millis(200 * u64::from(failures.max(1)));
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = closed.cancelled() => return,
        }
    }
}

impl Drop for HttpLink {
    fn drop(&mut self) {
        self.state.closed.cancel();
        let Some(session) = lock(&self.state.session).take() else {
            return;
        };
        // Best effort: end the session on the server.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let req = self
                .state
                .http
                .delete(self.state.url.clone())
                .headers(self.state.headers.clone())
                .header(SESSION_ID, session);
            handle.spawn(async move {
                let _ = req.send().await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_are_parsed_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1 << 20);
        p.push(b": keep-alive\n\nid: 0-1\ndata: {\"a\"");
        assert!(p.next_event().is_none());
        p.push(b":1}\n\nid: 0-2\r\ndata: x\r\n\r\n");
        let e = p.next_event().unwrap();
        assert_eq!(
            (e.id.as_deref(), e.data.as_str()),
            (Some("0-1"), "{\"a\":1}")
        );
        let e = p.next_event().unwrap();
        assert_eq!(e.id.as_deref(), Some("0-2"));
        assert_eq!(e.data, "x");
        assert!(p.next_event().is_none());
        assert!(p.check().is_ok());
    }

    #[test]
    fn an_event_growing_past_the_limit_is_refused_before_it_ends() {
        let mut p = SseParser::new(16);
        p.push(b"data: 0123456789");
        assert!(p.next_event().is_none());
        assert!(p.check().is_ok());
        p.push(b"0123456789");
        assert!(p.next_event().is_none());
        assert!(matches!(p.check(), Err(ClientError::Protocol(_))));
    }

    #[test]
    fn a_modern_read_mirrors_its_uri_in_mcp_name_with_the_sentinel_outside_plain_ascii() {
        let link = HttpLink::new("http://127.0.0.1:9/mcp", ClientOptions::default()).unwrap();
        let meta = RequestMeta::modern("2026-07-28", ClientOptions::default().client_info);
        let name = |uri: &str| {
            let params = serde_json::json!({ "uri": uri });
            let h = link
                .state
                .message_headers("resources/read", &params, Some(&meta));
            assert_eq!(h[METHOD], "resources/read");
            h[NAME].to_str().unwrap().to_owned()
        };
        assert_eq!(name("file:///a.txt"), "file:///a.txt");
        let encoded = name("file:///é");
        assert_eq!(encoded, "=?base64?ZmlsZTovLy/DqQ==?=");
        assert_eq!(headers::decode_value(&encoded).unwrap(), "file:///é");
        assert!(name(" padded ").starts_with("=?base64?"));
        assert!(name("=?base64?x?=").starts_with("=?base64?"));
    }
}
