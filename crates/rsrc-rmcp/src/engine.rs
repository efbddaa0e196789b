//! Driving rsrc's engine from inside an rmcp handler: one request at a time, through the
//! engine's own gate, handlers, cache, cursors and error codes.
//!
//! A request rmcp has decoded is written back as the JSON-RPC request the engine takes
//! (its params, with the `_meta` rmcp took out of them), run with [`Server::prepare`] and
//! [`Server::run`], and its [`Reply`] decoded into rmcp's type. Only small things take
//! that round trip: a read's contents and a listing's pages come out typed
//! ([`Reply::into_result`]; `convert.rs`, `listed.rs`).
//!
//! Invariants:
//! - The revision a request is served under is the engine's decision, from the same
//!   inputs as on rsrc's own server: a request naming 2026-07-28 (in its `_meta`, or on a
//!   stateless rmcp connection) runs on a stateless session of its own; any other on the
//!   connection's session, made once with the revision rmcp negotiated
//!   ([`Connection`]).
//! - The notifications a request sends (progress, logs, a listen stream's changes) go to
//!   the client through rmcp's peer from the request's own task, in order and before its
//!   reply, so rmcp keeps them on the request's stream; the session's own (a 2025
//!   session's `updated` and `list_changed`) through a task per connection.
//! - A request cancelled by rmcp (its token) is dropped, which cancels it in the engine.
//! - A listen stream hears every change published after `listen` began, although rmcp
//!   acknowledged it before the engine subscribed it (`replay.rs`).

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    ErrorCode, ErrorData, NumberOrString, ProtocolVersion, RequestMetaObject, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rsrc::server::{Incoming, Outcome, Reply, Session};
use rsrc::{Notifier, Server};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::replay::{ChangeLog, Since};

/// Notifications a 2025 session may have queued for its client (the engine's own bound
/// for a connection: beyond it, changes coalesce in the listeners' outboxes).
const SESSION_QUEUE: usize = 1024;

/// Notifications one request may have queued (progress and logs beyond it are dropped,
/// as the engine does on a full connection; a listen stream's changes wait).
const REQUEST_QUEUE: usize = 64;

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Whether `version` is 2026-07-28 or later (dates compare as strings).
pub(crate) fn is_modern_version(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// Whether a request speaks 2026-07-28 or later: its `_meta` names it, or the rmcp
/// connection is a stateless one that does.
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| is_modern_version(&v))
}

/// What one rmcp connection keeps of the engine: the session its 2025 requests share.
#[derive(Default)]
pub(crate) struct Connection {
    session: OnceLock<Arc<Session>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session.get().is_some())
            .finish()
    }
}

impl Connection {
    /// The connection's 2025 session, made (and initialized with the revision rmcp
    /// negotiated) on first use; its notifications reach the client through `peer`.
    pub(crate) fn session(&self, server: &Server, peer: &Peer<RoleServer>) -> Arc<Session> {
        Arc::clone(self.session.get_or_init(|| open_session(server, peer)))
    }
}

fn open_session(server: &Server, peer: &Peer<RoleServer>) -> Arc<Session> {
    let (notifier, rx) = Notifier::channel(SESSION_QUEUE);
    tokio::spawn(forward_session(rx, peer.clone()));
    let session = Arc::new(Session::new(notifier));
    let info = peer.peer_info();
    let params = serde_json::json!({
        "protocolVersion": info.as_ref().map_or(
            ProtocolVersion::LATEST_WITH_INITIALIZE.as_str(),
            |i| i.protocol_version.as_str()
        ),
        "capabilities": info.as_ref().map(|i| &i.capabilities),
        "clientInfo": info.as_ref().map(|i| &i.client_info),
    });
    let init =
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params});
    let init = serde_json::to_vec(&init).unwrap_or_default();
    if let rsrc::server::Handled::Reply(reply) = server.handle(&session, &init)
        && let Some(e) = reply.error_object()
    {
        tracing::warn!(error = %e.message, "the engine refused the session's initialize");
    }
    server.handle(
        &session,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    session
}

/// Sends a 2025 session's notifications until the session or the client is gone.
async fn forward_session(mut rx: mpsc::Receiver<Vec<u8>>, peer: Peer<RoleServer>) {
    while let Some(bytes) = rx.recv().await {
        if let Some(n) = notification(&bytes)
            && peer.send_notification(n).await.is_err()
        {
            break;
        }
    }
}

/// An engine notification as rmcp's type.
fn notification(bytes: &[u8]) -> Option<ServerNotification> {
    match serde_json::from_slice::<ServerJsonRpcMessage>(bytes) {
        Ok(message) => message.into_notification(),
        Err(e) => {
            tracing::warn!(error = %e, "a notification rmcp cannot carry was dropped");
            None
        }
    }
}

/// The JSON-RPC request the engine takes.
#[derive(Serialize)]
struct Outgoing<'a, P> {
    jsonrpc: &'static str,
    id: &'a NumberOrString,
    method: &'a str,
    params: WithMeta<'a, P>,
}

#[derive(Serialize)]
struct WithMeta<'a, P> {
    #[serde(flatten)]
    params: &'a P,
    #[serde(rename = "_meta", skip_serializing_if = "meta_is_empty")]
    meta: &'a RequestMetaObject,
}

fn meta_is_empty(meta: &RequestMetaObject) -> bool {
    meta.0.0.is_empty()
}

/// What kind of request a call is.
pub(crate) enum Mode<'a> {
    /// A request: cancelled by rmcp, it fails (nothing is sent for it anyway).
    Request,
    /// A `subscriptions/listen` stream, which rmcp acknowledged before it began (as
    /// `since` notes): the engine's acknowledgement is not sent, and what the stream
    /// missed until the engine subscribed it is; cancelled, it ends with no reply (rmcp
    /// answers its end itself).
    Listen { log: &'a ChangeLog, since: Since },
}

/// Runs `method` with `params` (an object; the request's `_meta` is added) on the engine,
/// as the request `context` describes. `None`: a listen stream rmcp ended.
pub(crate) async fn call<P: Serialize>(
    server: &Server,
    connection: &Connection,
    context: &RequestContext<RoleServer>,
    method: &str,
    params: &P,
    mode: Mode<'_>,
) -> Result<Option<Reply>, ErrorData> {
    let session = if is_modern(context) {
        Arc::new(Session::stateless(Notifier::discard()))
    } else {
        connection.session(server, &context.peer)
    };
    let request = Outgoing {
        jsonrpc: "2.0",
        id: &context.id,
        method,
        params: WithMeta {
            params,
            meta: &context.meta,
        },
    };
    let bytes = serde_json::to_vec(&request)
        .map_err(|e| ErrorData::invalid_params(format!("invalid params: {e}"), None))?;
    let prepared = match server.prepare(&bytes) {
        Incoming::Request(p) => p,
        Incoming::Malformed(reply) => return Ok(Some(reply)),
        Incoming::Notification(_) | Incoming::Response => {
            return Err(ErrorData::internal_error("not a request", None));
        }
    };
    let (notifier, mut rx) = Notifier::channel(REQUEST_QUEUE);
    let mut running = match server.run(&session, prepared, &notifier) {
        Outcome::Refused(refusal) => return Ok(Some(refusal.into_reply())),
        Outcome::Answered(reply) => return Ok(Some(reply)),
        Outcome::Running(fut) => fut,
    };
    drop(notifier);
    let send = |bytes: Vec<u8>| {
        let mode = &mode;
        async move {
            let messages = match mode {
                Mode::Listen { log, since } => match acknowledgement(&bytes) {
                    Some(ack) => ack.missed(log, *since),
                    None => vec![bytes],
                },
                Mode::Request => vec![bytes],
            };
            for bytes in messages {
                if let Some(n) = notification(&bytes) {
                    let _ = context.peer.send_notification(n).await;
                }
            }
        }
    };
    let quiet = matches!(mode, Mode::Listen { .. });
    loop {
        tokio::select! {
            biased;
            Some(bytes) = rx.recv() => send(bytes).await,
            reply = &mut running => {
                while let Ok(bytes) = rx.try_recv() {
                    send(bytes).await;
                }
                return match reply {
                    Some(reply) => Ok(Some(reply)),
                    None => cancelled(quiet),
                };
            }
            () = context.ct.cancelled() => return cancelled(quiet),
        }
    }
}

fn cancelled(quiet: bool) -> Result<Option<Reply>, ErrorData> {
    if quiet {
        return Ok(None);
    }
    Err(ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        "the request was cancelled",
        None,
    ))
}

/// The engine's acknowledgement of a listen stream: what it subscribed, and the id its
/// notifications carry.
#[derive(serde::Deserialize)]
struct Acknowledgement {
    params: AcknowledgedParams,
}

#[derive(serde::Deserialize)]
struct AcknowledgedParams {
    notifications: rsrc::protocol::subscriptions::SubscriptionFilter,
    #[serde(rename = "_meta")]
    meta: Value,
}

/// `bytes` as the engine's acknowledgement, if it is one.
fn acknowledgement(bytes: &[u8]) -> Option<Acknowledgement> {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: &'a str,
    }
    let m = serde_json::from_slice::<Method<'_>>(bytes).ok()?;
    if m.method != ACKNOWLEDGED {
        return None;
    }
    serde_json::from_slice(bytes).ok()
}

impl Acknowledgement {
    /// The notifications the stream missed since `since` (the engine subscribed it just
    /// after acknowledging, with no wait between: whatever comes later, the hub delivers).
    fn missed(&self, log: &ChangeLog, since: Since) -> Vec<Vec<u8>> {
        let held = &self.params.notifications;
        let uris = held.resource_subscriptions.as_deref().unwrap_or_default();
        let lists = held.resources_list_changed == Some(true);
        let (updated, list_changed) = log.missed(since, uris, lists);
        let meta = &self.params.meta;
        let message = |method: &str, params: Value| {
            let n = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params});
            serde_json::to_vec(&n).unwrap_or_default()
        };
        let mut out: Vec<Vec<u8>> = updated
            .into_iter()
            .map(|uri| {
                message(
                    "notifications/resources/updated",
                    serde_json::json!({"uri": uri, "_meta": meta}),
                )
            })
            .collect();
        if list_changed {
            out.push(message(
                "notifications/resources/list_changed",
                serde_json::json!({"_meta": meta}),
            ));
        }
        out
    }
}

/// Runs `method` with `params` (an object) on the engine as a 2026-07-28 request of no
/// client, on a stateless session of its own: what the adapter asks the engine for
/// itself (its `server/discover`, a listing prepared before serving).
pub(crate) async fn alone(server: &Server, method: &str, mut params: Value) -> Option<Reply> {
    if let Value::Object(p) = &mut params {
        p.insert(
            "_meta".to_owned(),
            serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": ProtocolVersion::V_2026_07_28.as_str(),
                "io.modelcontextprotocol/clientCapabilities": {}
            }),
        );
    }
    let request =
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params});
    let bytes = serde_json::to_vec(&request).ok()?;
    let session = Arc::new(Session::stateless(Notifier::discard()));
    match server.handle(&session, &bytes) {
        rsrc::server::Handled::Reply(reply) => Some(reply),
        rsrc::server::Handled::Pending(fut) => fut.await,
        rsrc::server::Handled::None => None,
    }
}

/// The engine's error as rmcp's.
pub(crate) fn error_data(e: &rsrc::protocol::ErrorObject) -> ErrorData {
    ErrorData::new(ErrorCode(e.code.0), e.message.clone(), e.data.clone())
}

/// A reply decoded into rmcp's result type `T`, or its error.
pub(crate) fn decode<T: DeserializeOwned>(reply: Reply) -> Result<T, ErrorData> {
    if let Some(e) = reply.error_object() {
        return Err(error_data(e));
    }
    #[derive(serde::Deserialize)]
    struct Envelope<T> {
        result: T,
    }
    let bytes = reply.into_bytes();
    serde_json::from_slice::<Envelope<T>>(&bytes)
        .map(|e| e.result)
        .map_err(|e| {
            ErrorData::internal_error(format!("a result rmcp's types cannot hold: {e}"), None)
        })
}

/// Runs a request whose reply decodes into `T`; a cancelled one fails.
pub(crate) async fn request<P: Serialize, T: DeserializeOwned>(
    server: &Server,
    connection: &Connection,
    context: &RequestContext<RoleServer>,
    method: &str,
    params: &P,
) -> Result<T, ErrorData> {
    match call(server, connection, context, method, params, Mode::Request).await? {
        Some(reply) => decode(reply),
        None => Err(ErrorData::internal_error("no reply", None)),
    }
}
