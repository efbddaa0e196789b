//! From one encoded message to what must be sent back: decoding, the lifecycle gate that
//! decides which revision a request speaks, and the wrapping of handler futures with
//! cancellation and panic isolation.
//!
//! The revision of a request (the gate, [`Server::gate`]):
//! - `_meta.io.modelcontextprotocol/protocolVersion` names a 2026-07-28 revision → served
//!   statelessly under it (the session's state is ignored); an unknown version → `-32022`;
//!   modern `_meta` without `clientCapabilities` (or the reverse) → `-32602`.
//! - otherwise the revision negotiated by `initialize` applies; before `initialize` only
//!   `ping` and `initialize` are accepted.
//! - a method that does not exist in the request's revision → `-32601`.
//!
//! Invariants: notifications are never answered; a request is answered exactly once, or
//! not at all if the client cancelled it; a panic in a handler or provider becomes `-32603`
//! for that request only.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt as _;
use rsrc_protocol::completion::CompleteParams;
use rsrc_protocol::jsonrpc::{self, Message, Notification, Request, RequestId};
use rsrc_protocol::lifecycle::{CancelledParams, EmptyParams, InitializeParams, SetLevelParams};
use rsrc_protocol::meta::RequestMeta;
use rsrc_protocol::methods::{
    Cancelled, Complete, DirectoryRead, Discover, Initialize, Initialized, ListResourceTemplates,
    ListResources, Method, NotificationMethod, Ping, ReadResource, ResourceMetadata, SetLevel,
    Subscribe, SubscriptionsListen, Unsubscribe,
};
use rsrc_protocol::resources::{
    ListResourceTemplatesParams, ListResourcesParams, ReadResourceParams, ResourceParams,
};
use rsrc_protocol::subscriptions::SubscriptionsListenParams;
use rsrc_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::handlers;
use super::reply::{EncodeResult, Reply};
use super::session::Session;
use crate::context::{ContextParts, Notifier, RequestContext};
use crate::error::RequestError;
use crate::provider::BoxFuture;

/// What to do after handling one message.
pub enum Handled {
    /// Nothing to send: a notification, or a response from the client.
    None,
    /// A reply, ready now.
    Reply(Reply),
    /// Work to drive to completion on the caller's task. It yields the reply, or `None`
    /// when the client cancelled the request (no reply must follow then).
    Pending(BoxFuture<'static, Option<Reply>>),
}

impl std::fmt::Debug for Handled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handled::None => f.write_str("Handled::None"),
            Handled::Reply(r) => f.debug_tuple("Handled::Reply").field(r).finish(),
            Handled::Pending(_) => f.write_str("Handled::Pending(..)"),
        }
    }
}

/// The methods the engine serves itself (an extension cannot shadow them).
pub(crate) const ENGINE_METHODS: [&str; 13] = [
    Initialize::NAME,
    Ping::NAME,
    SetLevel::NAME,
    Discover::NAME,
    ListResources::NAME,
    DirectoryRead::NAME,
    ReadResource::NAME,
    ResourceMetadata::NAME,
    ListResourceTemplates::NAME,
    Complete::NAME,
    Subscribe::NAME,
    Unsubscribe::NAME,
    SubscriptionsListen::NAME,
];

/// Which eras a method exists in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Eras {
    Legacy,
    Modern,
    Both,
}

impl Eras {
    fn includes(self, v: ProtocolVersion) -> bool {
        match self {
            Eras::Both => true,
            Eras::Legacy => !v.is_modern(),
            Eras::Modern => v.is_modern(),
        }
    }
}

/// Params that carry a request `_meta`.
pub(crate) trait HasMeta {
    fn meta(&self) -> Option<&RequestMeta>;
}

macro_rules! has_meta {
    ($($t:ty),*) => {$(
        impl HasMeta for $t {
            fn meta(&self) -> Option<&RequestMeta> {
                self.meta.as_ref()
            }
        }
    )*};
}

has_meta!(
    crate::extension::ExtensionParams,
    EmptyParams,
    SetLevelParams,
    InitializeParams,
    ListResourcesParams,
    ListResourceTemplatesParams,
    ReadResourceParams,
    ResourceParams,
    CompleteParams,
    SubscriptionsListenParams
);

/// A refusal by the gate, with the revision to format the error for.
type Refusal = (RequestError, Option<ProtocolVersion>);

fn invalid_params(e: &serde_json::Error) -> RequestError {
    RequestError::InvalidParams(format!("invalid params: {e}"))
}

/// Where a request came from: its session, and where its notifications go.
struct At<'a> {
    session: &'a Arc<Session>,
    notifier: &'a Notifier,
}

/// Results from this size on hold part of the budget of content in flight until sent.
const RESERVE_FROM: usize = 256 * 1024;

/// Distinguishes registrations of the same id over time.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Unregisters a request from its session when its future ends, however it ends; a
/// future dropped before it finished (its transport went away) cancels the request, so
/// that work it started elsewhere sees the cancellation.
struct InflightGuard {
    session: Arc<Session>,
    id: RequestId,
    serial: u64,
    token: CancellationToken,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.token.cancel();
        self.session.end(&self.id, self.serial);
    }
}

impl Server {
    /// Handles one encoded message received on `session`; the notifications of the
    /// requests it starts (progress, logs) go to the session's notifier.
    pub fn handle(&self, session: &Arc<Session>, bytes: &[u8]) -> Handled {
        self.handle_scoped(session, bytes, session.notifier())
    }

    /// Handles one encoded message received on `session`, sending the notifications of
    /// the request it starts to `notifier` (a transport that answers each request on a
    /// stream of its own, such as Streamable HTTP, passes that stream's notifier).
    pub fn handle_scoped(
        &self,
        session: &Arc<Session>,
        bytes: &[u8],
        notifier: &Notifier,
    ) -> Handled {
        match jsonrpc::decode(bytes) {
            Err(e) => {
                tracing::debug!(error = %e, "undecodable message");
                Handled::Reply(Reply::error(e.id.clone(), e.to_error_object()))
            }
            Ok(message) => self.handle_decoded(session, message, notifier),
        }
    }

    /// Like [`Server::handle_scoped`], for a message the transport already decoded (with
    /// [`jsonrpc::decode`]) to look at it first.
    pub fn handle_decoded(
        &self,
        session: &Arc<Session>,
        message: Message<'_>,
        notifier: &Notifier,
    ) -> Handled {
        match message {
            Message::Request(req) => self.handle_request(&At { session, notifier }, req),
            Message::Notification(n) => {
                handle_notification(session, &n);
                Handled::None
            }
            Message::Response(r) => {
                tracing::debug!(id = ?r.id, "ignoring a response: this server sends no requests");
                Handled::None
            }
        }
    }

    /// The reply to a message the transport discarded for exceeding `limit` bytes;
    /// `prefix` is its beginning, from which the request id is recovered when possible.
    pub fn oversized(&self, prefix: &[u8], limit: usize) -> Reply {
        Reply::error(
            jsonrpc::id_from_prefix(prefix),
            ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("message discarded: it is longer than the limit of {limit} bytes"),
            ),
        )
    }

    fn handle_request(&self, at: &At<'_>, req: Request<'_>) -> Handled {
        let Request { id, method, params } = req;
        let m = method.as_ref();
        let session = at.session;
        match m {
            Initialize::NAME => Handled::Reply(self.initialize(session, id, params)),
            Ping::NAME => self.ping(at, id, params),
            SetLevel::NAME => {
                let session_ = Arc::clone(session);
                self.run(
                    at,
                    id,
                    m,
                    params,
                    Eras::Legacy,
                    move |_, _, p: SetLevelParams| async move {
                        session_.set_log_level(p.level);
                        Ok(rsrc_protocol::lifecycle::EmptyResult::default())
                    },
                )
            }
            Discover::NAME => self.run(at, id, m, params, Eras::Modern, handlers::discover),
            ListResources::NAME => self.run(at, id, m, params, Eras::Both, handlers::list),
            DirectoryRead::NAME => {
                self.run(at, id, m, params, Eras::Both, handlers::directory_read)
            }
            ReadResource::NAME => self.run(at, id, m, params, Eras::Both, handlers::read),
            ResourceMetadata::NAME => self.run(at, id, m, params, Eras::Both, handlers::metadata),
            ListResourceTemplates::NAME => {
                self.run(at, id, m, params, Eras::Both, handlers::templates)
            }
            Complete::NAME => self.run(at, id, m, params, Eras::Both, handlers::complete),
            Subscribe::NAME => {
                let session_ = Arc::clone(session);
                self.run(at, id, m, params, Eras::Legacy, move |srv, ctx, p| {
                    handlers::subscribe(srv, ctx, p, session_)
                })
            }
            Unsubscribe::NAME => {
                let session_ = Arc::clone(session);
                self.run(at, id, m, params, Eras::Legacy, move |srv, ctx, p| {
                    handlers::unsubscribe(srv, ctx, p, session_)
                })
            }
            SubscriptionsListen::NAME => {
                self.run(at, id, m, params, Eras::Modern, handlers::listen)
            }
            "tools/list" if self.inner.tools.is_some() => {
                self.run(at, id, m, params, Eras::Both, super::tools::list)
            }
            "tools/call" if self.inner.tools.is_some() => {
                self.run(at, id, m, params, Eras::Both, super::tools::call)
            }
            _ if self.inner.methods.contains_key(m) => {
                self.run(at, id, m, params, Eras::Both, handlers::extension(m))
            }
            _ => {
                // Unknown: read only the `_meta` to format the error for the right revision.
                let meta = jsonrpc::decode_params::<EmptyParams>(params).ok();
                let version = match self.gate(
                    session,
                    meta.as_ref().and_then(HasMeta::meta),
                    m,
                    Eras::Both,
                ) {
                    Ok(v) => Some(v),
                    Err((_, v)) => v,
                };
                let e = RequestError::MethodNotFound(m.to_owned());
                Handled::Reply(Reply::error(Some(id), e.to_error_object(version)))
            }
        }
    }

    /// Decides the revision of a request (see the module docs).
    fn gate(
        &self,
        session: &Session,
        meta: Option<&RequestMeta>,
        method: &str,
        eras: Eras,
    ) -> Result<ProtocolVersion, Refusal> {
        let declared = meta.and_then(|m| m.protocol_version.as_deref());
        let has_caps = meta.is_some_and(|m| m.client_capabilities.is_some());
        let version = match declared {
            Some(v) => match v.parse::<ProtocolVersion>() {
                Ok(pv) if pv.is_modern() => {
                    if !has_caps {
                        return Err((
                            RequestError::InvalidParams(format!(
                                "a {pv} request must carry _meta.\"{}\"",
                                rsrc_protocol::meta::CLIENT_CAPABILITIES_KEY
                            )),
                            Some(pv),
                        ));
                    }
                    pv
                }
                Ok(pv) => match session.negotiated_version() {
                    Some(n) => n,
                    None => {
                        return Err((
                            RequestError::InvalidRequest(format!(
                                "revision {pv} uses the initialize handshake: send initialize first"
                            )),
                            None,
                        ));
                    }
                },
                Err(_) => {
                    return Err((
                        RequestError::UnsupportedVersion {
                            requested: v.to_owned(),
                        },
                        Some(ProtocolVersion::LATEST),
                    ));
                }
            },
            None if has_caps
                || session.is_stateless()
                || eras == Eras::Modern && session.negotiated_version().is_none() =>
            {
                return Err((
                    RequestError::InvalidParams(format!(
                        "missing _meta.\"{}\" (required by revision {})",
                        rsrc_protocol::meta::PROTOCOL_VERSION_KEY,
                        ProtocolVersion::LATEST
                    )),
                    Some(ProtocolVersion::LATEST),
                ));
            }
            None => match session.negotiated_version() {
                Some(v) => v,
                None => {
                    return Err((
                        RequestError::InvalidRequest(format!(
                            "not initialized: send initialize first, or carry _meta.\"{}\": \"{}\"",
                            rsrc_protocol::meta::PROTOCOL_VERSION_KEY,
                            ProtocolVersion::LATEST
                        )),
                        None,
                    ));
                }
            },
        };
        if !eras.includes(version) {
            return Err((
                RequestError::MethodNotFound(format!("{method} (not part of revision {version})")),
                Some(version),
            ));
        }
        Ok(version)
    }

    /// Decodes params, gates the request, registers it and wraps its handler.
    fn run<P, F, Fut, R>(
        &self,
        at: &At<'_>,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        eras: Eras,
        handler: F,
    ) -> Handled
    where
        P: DeserializeOwned + HasMeta + Send + 'static,
        F: FnOnce(Server, RequestContext, P) -> Fut + Send + 'static,
        Fut: Future<Output = Result<R, RequestError>> + Send + 'static,
        R: EncodeResult + 'static,
    {
        let session = at.session;
        let p: P = match jsonrpc::decode_params(params) {
            Ok(p) => p,
            Err(e) => {
                // The gate speaks first (a method the revision lacks is not found, whatever
                // its params); otherwise format for the revision the params named.
                let meta = jsonrpc::decode_params::<EmptyParams>(params).ok();
                let version =
                    match self.gate(session, meta.as_ref().and_then(HasMeta::meta), method, eras) {
                        Ok(v) => Some(v),
                        Err((refusal @ RequestError::MethodNotFound(_), v)) => {
                            return Handled::Reply(Reply::error(
                                Some(id),
                                refusal.to_error_object(v),
                            ));
                        }
                        Err(_) => None,
                    };
                return Handled::Reply(Reply::error(
                    Some(id),
                    invalid_params(&e).to_error_object(version),
                ));
            }
        };
        let version = match self.gate(session, p.meta(), method, eras) {
            Ok(v) => v,
            Err((e, v)) => return Handled::Reply(Reply::error(Some(id), e.to_error_object(v))),
        };
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let Some(token) = session.begin(&id, serial) else {
            let e = RequestError::InvalidRequest(format!(
                "a request with id {id} is already in flight"
            ));
            return Handled::Reply(Reply::error(Some(id), e.to_error_object(Some(version))));
        };
        let meta = p.meta();
        let (log_level, client_info) = if version.is_modern() {
            (
                meta.and_then(|m| m.log_level),
                meta.and_then(|m| m.client_info.clone()).map(Arc::new),
            )
        } else {
            (
                session.log_level(),
                session.negotiated().and_then(|n| n.client_info.clone()),
            )
        };
        let ctx = RequestContext::new(ContextParts {
            id: id.clone(),
            version,
            cancel: token.clone(),
            closing: session.closing().clone(),
            progress_token: meta.and_then(|m| m.progress_token.clone()),
            log_level,
            client_info,
            notifier: at.notifier.clone(),
            budget: Some(self.inner.budget.clone()),
        });
        let guard = InflightGuard {
            session: Arc::clone(session),
            id: id.clone(),
            serial,
            token: token.clone(),
        };
        let server = self.clone();
        Handled::Pending(Box::pin(async move {
            let _guard = guard;
            let work = AssertUnwindSafe({
                let ctx = ctx.clone();
                async move {
                    let result = handler(server, ctx.clone(), p).await?;
                    // A large result whose provider reserved nothing (a cache hit, a
                    // provider that does not account) is accounted before it is sent.
                    let size = result.size_hint();
                    if size >= RESERVE_FROM && !ctx.holds_reservation() {
                        ctx.reserve(size as u64).await;
                    }
                    Ok(result)
                }
            })
            .catch_unwind();
            let outcome = tokio::select! {
                biased;
                () = token.cancelled() => {
                    ctx.finish();
                    return None;
                }
                outcome = work => outcome,
            };
            ctx.finish();
            Some(match outcome {
                Ok(Ok(result)) => Reply::result(id, result).holding(ctx.take_reservation()),
                Ok(Err(e)) => {
                    if let RequestError::Resource(crate::ResourceError::Internal(m))
                    | RequestError::Internal(m) = &e
                    {
                        tracing::error!(%id, error = %m, "request failed");
                    }
                    Reply::error(Some(id), e.to_error_object(Some(version)))
                }
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a non-string panic payload".into());
                    tracing::error!(%id, panic = %what, "a handler panicked; the server continues");
                    let e = RequestError::Internal(what);
                    Reply::error(Some(id), e.to_error_object(Some(version)))
                }
            })
        }))
    }

    fn initialize(&self, session: &Session, id: RequestId, params: Option<&RawValue>) -> Reply {
        // A request that speaks a per-request revision, or arrives where only those are
        // served, names a method its revision does not have.
        let modern = jsonrpc::decode_params::<EmptyParams>(params)
            .ok()
            .and_then(|p| p.meta)
            .and_then(|m| m.protocol_version)
            .and_then(|v| v.parse::<ProtocolVersion>().ok())
            .filter(|v| v.is_modern());
        if modern.is_some() || session.is_stateless() {
            let v = modern.unwrap_or(ProtocolVersion::LATEST);
            let e = RequestError::MethodNotFound(format!(
                "{} (not part of revision {v})",
                Initialize::NAME
            ));
            return Reply::error(Some(id), e.to_error_object(Some(v)));
        }
        let p: InitializeParams = match jsonrpc::decode_params(params) {
            Ok(p) => p,
            Err(e) => return Reply::error(Some(id), invalid_params(&e).to_error_object(None)),
        };
        match handlers::initialize(self, session, p) {
            Ok(result) => Reply::result(id, result),
            Err(e) => Reply::error(Some(id), e.to_error_object(session.negotiated_version())),
        }
    }

    fn ping(&self, at: &At<'_>, id: RequestId, params: Option<&RawValue>) -> Handled {
        // `ping` is the one request a legacy client may send before `initialize`.
        let p: EmptyParams = match jsonrpc::decode_params(params) {
            Ok(p) => p,
            Err(e) => {
                return Handled::Reply(Reply::error(
                    Some(id),
                    invalid_params(&e).to_error_object(None),
                ));
            }
        };
        let modern = p
            .meta
            .as_ref()
            .and_then(|m| m.protocol_version.as_ref())
            .is_some();
        if !modern && at.session.negotiated_version().is_none() && !at.session.is_stateless() {
            return Handled::Reply(Reply::result(
                id,
                rsrc_protocol::lifecycle::EmptyResult::default(),
            ));
        }
        self.run(at, id, Ping::NAME, params, Eras::Legacy, handlers::ping)
    }
}

fn handle_notification(session: &Session, n: &Notification<'_>) {
    match n.method.as_ref() {
        Initialized::NAME => session.mark_initialized(),
        Cancelled::NAME => match jsonrpc::decode_params::<CancelledParams>(n.params) {
            Ok(CancelledParams {
                request_id: Some(id),
                reason,
                ..
            }) => {
                let found = session.cancel(&id);
                tracing::debug!(%id, ?reason, found, "cancellation");
            }
            Ok(_) => tracing::debug!("cancellation without a request id ignored"),
            Err(e) => tracing::debug!(error = %e, "malformed cancellation ignored"),
        },
        other => tracing::trace!(method = other, "notification ignored"),
    }
}
