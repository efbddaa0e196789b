//! From one encoded message to what must be sent back, in two steps a transport can look
//! between:
//!
//! 1. [`Server::prepare`](super::Server::prepare) decodes a message once: a request's
//!    params go into the type its method declares ([`Method::Params`]), so a transport
//!    can read the request's id, method, revision and mirrored name from the typed
//!    request (the [`Prepared`] request) instead of parsing the body again.
//! 2. [`Server::run`](super::Server::run) puts it through the gate ([`super::gate`]) and
//!    either refuses it ([`Outcome::Refused`]: nothing ran) or runs it, wrapping its
//!    handler with registration in the session, cancellation and panic isolation.
//!
//! Invariants: notifications are never answered; a request is answered exactly once, or
//! not at all if the client cancelled it; a panic in a handler or provider becomes `-32603`
//! for that request only; every result is fitted to its revision in one place
//! ([`Fit`](super::reply::Fit)).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt as _;
use rsrc_protocol::jsonrpc::{self, Message, Notification, Request, RequestId};
use rsrc_protocol::lifecycle::{CancelledParams, EmptyParams, EmptyResult};
use rsrc_protocol::meta::RequestMeta;
use rsrc_protocol::methods::{
    Cancelled, Complete, DirectoryRead, Discover, Initialize, Initialized, ListResourceTemplates,
    ListResources, Method, NotificationMethod, Ping, ReadResource, ResourceMetadata, SetLevel,
    Subscribe, SubscriptionsListen, Unsubscribe,
};
use rsrc_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::gate::{self, Asked, Decision, Eras, Kind};
use super::handlers;
use super::reply::{EncodeResult, Fit, Reply};
use super::session::Session;
use super::tools;
use crate::context::{ContextParts, Notifier, RequestContext};
use crate::error::RequestError;
use crate::extension::ExtensionParams;
use crate::provider::BoxFuture;

/// What a transport does with one message, when it needs no look between decoding and
/// running (see [`Server::handle`](super::Server::handle)).
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

/// One decoded message.
#[derive(Debug)]
pub enum Incoming {
    /// A request, ready to [`run`](super::Server::run).
    Request(Prepared),
    /// A notification, for [`Server::notify`](super::Server::notify).
    Notification(Notice),
    /// A response: this server sends no requests, so there is nothing to match it with.
    Response,
    /// Not a valid message: the error to answer (with the request's id when it could be
    /// read unambiguously).
    Malformed(Reply),
}

/// A request decoded once: its id, method, and params in the type its method declares.
#[derive(Debug)]
pub struct Prepared {
    id: RequestId,
    method: Box<str>,
    /// Boxed: params with their `_meta` are a few hundred bytes, moved several times.
    call: Box<Call>,
}

impl Prepared {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The revision the request names in `_meta`, verbatim, if it names one.
    pub fn revision(&self) -> Option<&str> {
        self.call.meta()?.protocol_version.as_deref()
    }

    /// Whether the request names a per-request (2026-07-28) revision in `_meta`.
    pub fn is_modern(&self) -> bool {
        Asked::of(self.call.meta()).is_modern()
    }

    /// The member Streamable HTTP mirrors in `Mcp-Name`: the `uri` of `resources/read`,
    /// the `name` of `tools/call` and `prompts/get`. `None` if the method mirrors none,
    /// or its params lack it or did not decode.
    pub fn name(&self) -> Option<&str> {
        let member = self.mirrored_member()?;
        match (&*self.call, member) {
            (Call::Read(p), _) => Some(&p.uri),
            (Call::Extension(p), _) => p.rest.get(member)?.as_str(),
            (Call::Unknown(peek) | Call::Invalid { peek, .. }, "uri") => peek.uri.as_deref(),
            (Call::Unknown(peek) | Call::Invalid { peek, .. }, _) => peek.name.as_deref(),
            _ => None,
        }
    }

    /// The params member `Mcp-Name` mirrors for this method, if it mirrors one.
    pub fn mirrored_member(&self) -> Option<&'static str> {
        match &*self.method {
            ReadResource::NAME => Some("uri"),
            "tools/call" | "prompts/get" => Some("name"),
            _ => None,
        }
    }
}

/// A decoded notification.
#[derive(Debug)]
pub struct Notice(NoticeKind);

#[derive(Debug)]
enum NoticeKind {
    Initialized,
    Cancelled(Option<RequestId>),
    Other(Box<str>),
}

/// What [`Server::run`](super::Server::run) did with a request.
pub enum Outcome {
    /// Refused before running (by the gate, or because its params did not decode):
    /// nothing happened.
    Refused(Refusal),
    /// Answered at once, without a revision (`initialize`, `ping` before it).
    Answered(Reply),
    /// Running: the future yields the reply, or `None` when the client cancelled it.
    Running(BoxFuture<'static, Option<Reply>>),
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Refused(r) => f.debug_tuple("Outcome::Refused").field(&r.reply).finish(),
            Outcome::Answered(r) => f.debug_tuple("Outcome::Answered").field(r).finish(),
            Outcome::Running(_) => f.write_str("Outcome::Running(..)"),
        }
    }
}

/// A request refused before it ran.
pub struct Refusal {
    reply: Reply,
    status: u16,
}

impl Refusal {
    fn new(
        session: &Session,
        id: RequestId,
        e: &RequestError,
        version: Option<ProtocolVersion>,
    ) -> Self {
        Refusal {
            reply: Reply::error(Some(id), e.to_error_object(version)),
            status: e.http_status(session.is_stateless()),
        }
    }

    /// The HTTP status of the refusal over Streamable HTTP (see
    /// [`RequestError::http_status`]).
    pub fn http_status(&self) -> u16 {
        self.status
    }

    /// The error reply.
    pub fn into_reply(self) -> Reply {
        self.reply
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

/// Params that carry a request `_meta`.
pub(crate) trait HasMeta {
    fn meta(&self) -> Option<&RequestMeta>;
}

macro_rules! calls {
    ($($variant:ident = $method:ty, $eras:ident;)*) => {
        /// A request's params, decoded into the type its method declares.
        #[derive(Debug)]
        enum Call {
            $(
                $variant(<$method as Method>::Params),
            )*
            /// `tools/list` and `tools/call` (the tools bridge), and extension methods.
            Extension(ExtensionParams),
            /// A method this server does not serve; what its params say, when readable.
            Unknown(Peek),
            /// Params that did not decode; what they say, when readable.
            Invalid {
                error: String,
                eras: Eras,
                peek: Peek,
            },
        }

        impl Call {
            fn decode(server: &Server, method: &str, params: Option<&RawValue>) -> Call {
                match method {
                    $(
                        <$method as Method>::NAME => {
                            decode::<<$method as Method>::Params>(params, Eras::$eras, Call::$variant)
                        }
                    )*
                    _ if server.serves_extension(method) => {
                        decode(params, Eras::Both, Call::Extension)
                    }
                    _ => Call::Unknown(Peek::of(params)),
                }
            }

            fn meta(&self) -> Option<&RequestMeta> {
                match self {
                    $(
                        Call::$variant(p) => p.meta(),
                    )*
                    Call::Extension(p) => p.meta.as_ref(),
                    Call::Unknown(peek) | Call::Invalid { peek, .. } => peek.meta.as_ref(),
                }
            }

            /// What the gate sees of the method.
            fn kind<'m>(&self, method: &'m str) -> Kind<'m> {
                match (method, self) {
                    (Initialize::NAME, _) => Kind::Initialize,
                    (Ping::NAME, _) => Kind::Ping,
                    $(
                        (_, Call::$variant(_)) => Kind::Served(method, Eras::$eras),
                    )*
                    (_, Call::Extension(_)) => Kind::Served(method, Eras::Both),
                    (_, Call::Invalid { eras, .. }) => Kind::Served(method, *eras),
                    (_, Call::Unknown(_)) => Kind::Unknown(method),
                }
            }
        }
    };
}

calls! {
    Initialize = Initialize, Legacy;
    Ping = Ping, Legacy;
    SetLevel = SetLevel, Legacy;
    Discover = Discover, Modern;
    List = ListResources, Both;
    DirectoryRead = DirectoryRead, Both;
    Read = ReadResource, Both;
    Metadata = ResourceMetadata, Both;
    Templates = ListResourceTemplates, Both;
    Complete = Complete, Both;
    Subscribe = Subscribe, Legacy;
    Unsubscribe = Unsubscribe, Legacy;
    Listen = SubscriptionsListen, Modern;
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
    ExtensionParams,
    EmptyParams,
    rsrc_protocol::lifecycle::SetLevelParams,
    rsrc_protocol::lifecycle::InitializeParams,
    rsrc_protocol::resources::ListResourcesParams,
    rsrc_protocol::resources::ListResourceTemplatesParams,
    rsrc_protocol::resources::ReadResourceParams,
    rsrc_protocol::resources::ResourceParams,
    rsrc_protocol::completion::CompleteParams,
    rsrc_protocol::subscriptions::SubscriptionsListenParams
);

/// Decodes `params` into `P`, or records why not.
fn decode<P: DeserializeOwned>(
    params: Option<&RawValue>,
    eras: Eras,
    wrap: impl FnOnce(P) -> Call,
) -> Call {
    match jsonrpc::decode_params::<P>(params) {
        Ok(p) => wrap(p),
        Err(e) => Call::Invalid {
            error: format!("invalid params: {e}"),
            eras,
            peek: Peek::of(params),
        },
    }
}

/// What params that did not decode into their method's type (or whose method is not
/// served) still say: the `_meta`, to format an error for the revision it names, and the
/// members `Mcp-Name` may mirror. Empty if even that cannot be read.
#[derive(Debug, Default, Deserialize)]
struct Peek {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(default, deserialize_with = "string_or_none")]
    uri: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    name: Option<String>,
}

impl Peek {
    fn of(params: Option<&RawValue>) -> Peek {
        jsonrpc::decode_params(params).unwrap_or_default()
    }
}

fn string_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    })
}

/// Results from this size on hold part of the budget of content in flight until sent.
const RESERVE_FROM: usize = 256 * 1024;

/// Distinguishes registrations of the same id over time.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Where a request came from: its session, and where its notifications go.
struct Origin<'a> {
    session: &'a Arc<Session>,
    notifier: &'a Notifier,
}

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

/// Decodes one message (see [`Server::prepare`](super::Server::prepare)).
pub(super) fn prepare(server: &Server, bytes: &[u8]) -> Incoming {
    match jsonrpc::decode(bytes) {
        Err(e) => {
            tracing::debug!(error = %e, "undecodable message");
            Incoming::Malformed(Reply::error(e.id.clone(), e.to_error_object()))
        }
        Ok(message) => prepare_message(server, message),
    }
}

/// Prepares a message the transport already decoded with [`jsonrpc::decode`].
pub(super) fn prepare_message(server: &Server, message: Message<'_>) -> Incoming {
    match message {
        Message::Request(Request { id, method, params }) => Incoming::Request(Prepared {
            call: Box::new(Call::decode(server, &method, params)),
            method: method.into_owned().into_boxed_str(),
            id,
        }),
        Message::Notification(n) => Incoming::Notification(notice(&n)),
        Message::Response(r) => {
            tracing::debug!(id = ?r.id, "ignoring a response: this server sends no requests");
            Incoming::Response
        }
    }
}

fn notice(n: &Notification<'_>) -> Notice {
    Notice(match n.method.as_ref() {
        Initialized::NAME => NoticeKind::Initialized,
        Cancelled::NAME => match jsonrpc::decode_params::<CancelledParams>(n.params) {
            Ok(p) => {
                tracing::debug!(id = ?p.request_id, reason = ?p.reason, "cancellation");
                NoticeKind::Cancelled(p.request_id)
            }
            Err(e) => {
                tracing::debug!(error = %e, "malformed cancellation ignored");
                NoticeKind::Cancelled(None)
            }
        },
        other => NoticeKind::Other(other.into()),
    })
}

/// Applies a notification to `session`.
pub(super) fn notify(session: &Session, notice: &Notice) {
    match &notice.0 {
        NoticeKind::Initialized => session.mark_initialized(),
        NoticeKind::Cancelled(Some(id)) => {
            let found = session.cancel(id);
            tracing::debug!(%id, found, "cancelled");
        }
        NoticeKind::Cancelled(None) => tracing::debug!("cancellation without a request id ignored"),
        NoticeKind::Other(method) => tracing::trace!(%method, "notification ignored"),
    }
}

/// Gates a prepared request and runs it (see [`Server::run`](super::Server::run)).
pub(super) fn run(
    server: &Server,
    session: &Arc<Session>,
    request: Prepared,
    notifier: &Notifier,
) -> Outcome {
    let Prepared { id, method, call } = request;
    let call = *call;
    let decision = gate::decide(session.place(), Asked::of(call.meta()), call.kind(&method));
    let version = match (&call, decision) {
        (Call::Invalid { error, .. }, decision) => {
            let (e, v) = gate::bad_params(decision, error.clone());
            return Outcome::Refused(Refusal::new(session, id, &e, v));
        }
        (_, Decision::Refuse(e, v)) => return Outcome::Refused(Refusal::new(session, id, &e, v)),
        (_, Decision::Pong) => return Outcome::Answered(Reply::result(id, EmptyResult::default())),
        (_, Decision::Initialize) => {
            let Call::Initialize(p) = call else {
                unreachable!("the gate initializes only initialize requests");
            };
            return match handlers::initialize(server, session, p) {
                Ok(result) => Outcome::Answered(Reply::result(id, result)),
                Err(e) => {
                    Outcome::Refused(Refusal::new(session, id, &e, session.negotiated_version()))
                }
            };
        }
        (_, Decision::Serve(v)) => v,
    };
    let origin = Origin { session, notifier };
    let start = Start {
        server,
        origin: &origin,
        id,
        version,
    };
    match call {
        Call::Ping(p) => start.run(p, handlers::ping),
        Call::SetLevel(p) => {
            let session = Arc::clone(session);
            start.run(p, move |_, _, p| async move {
                session.set_log_level(p.level);
                Ok(EmptyResult::default())
            })
        }
        Call::Discover(p) => start.run(p, handlers::discover),
        Call::List(p) => start.run(p, handlers::list),
        Call::DirectoryRead(p) => start.run(p, handlers::directory_read),
        Call::Read(p) => start.run(p, handlers::read),
        Call::Metadata(p) => start.run(p, handlers::metadata),
        Call::Templates(p) => start.run(p, handlers::templates),
        Call::Complete(p) => start.run(p, handlers::complete),
        Call::Subscribe(p) => {
            let session = Arc::clone(session);
            start.run(p, move |srv, ctx, p| {
                handlers::subscribe(srv, ctx, p, session)
            })
        }
        Call::Unsubscribe(p) => {
            let session = Arc::clone(session);
            start.run(p, move |srv, ctx, p| {
                handlers::unsubscribe(srv, ctx, p, session)
            })
        }
        Call::Listen(p) => start.run(p, handlers::listen),
        // The tools bridge's methods when it is on; an application's own otherwise.
        Call::Extension(p) => match &*method {
            "tools/list" if server.state.tools.is_some() => start.run(p, tools::list),
            "tools/call" if server.state.tools.is_some() => start.run(p, tools::call),
            _ => start.run(p, handlers::extension(&method)),
        },
        Call::Initialize(_) | Call::Unknown(_) | Call::Invalid { .. } => {
            // The gate refuses these before: decided above.
            let e = RequestError::Internal(format!("{method} reached no handler"));
            Outcome::Refused(Refusal::new(session, start.id, &e, Some(version)))
        }
    }
}

/// A request the gate let through, about to start.
struct Start<'a> {
    server: &'a Server,
    origin: &'a Origin<'a>,
    id: RequestId,
    version: ProtocolVersion,
}

impl Start<'_> {
    /// Registers the request in its session and wraps its handler with cancellation,
    /// accounting of large results, panic isolation, and the fitting of its result to
    /// the request's revision.
    fn run<P, F, Fut, R>(self, params: P, handler: F) -> Outcome
    where
        P: HasMeta + Send + 'static,
        F: FnOnce(Server, RequestContext, P) -> Fut + Send + 'static,
        Fut: Future<Output = Result<R, RequestError>> + Send + 'static,
        R: EncodeResult + Fit + 'static,
    {
        let Start {
            server,
            origin,
            id,
            version,
        } = self;
        let session = origin.session;
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let Some(token) = session.begin(&id, serial) else {
            let e = RequestError::InvalidRequest(format!(
                "a request with id {id} is already in flight"
            ));
            return Outcome::Refused(Refusal::new(session, id, &e, Some(version)));
        };
        let meta = params.meta();
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
            notifier: origin.notifier.clone(),
            budget: Some(server.budget().clone()),
        });
        let guard = InflightGuard {
            session: Arc::clone(session),
            id: id.clone(),
            serial,
            token: token.clone(),
        };
        let server = server.clone();
        Outcome::Running(Box::pin(async move {
            let _guard = guard;
            let work = AssertUnwindSafe({
                let ctx = ctx.clone();
                let server = server.clone();
                async move {
                    let mut result = handler(server.clone(), ctx.clone(), params).await?;
                    result.fit(version, server.info());
                    // A large result whose provider reserved nothing (a cache hit, a
                    // provider that does not account) is accounted before it is sent.
                    let size = result.size_hint();
                    if size >= RESERVE_FROM && !ctx.holds_reservation() {
                        ctx.reserve(size as u64).await;
                    }
                    Ok::<_, RequestError>(result)
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
                Ok(Ok(result)) => {
                    Reply::result(id, result).with_reservation(ctx.take_reservation())
                }
                Ok(Err(e)) => {
                    if let Some(detail) = e.internal_detail() {
                        tracing::error!(%id, error = %detail, "request failed");
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
}

/// The reply to a message the transport discarded for exceeding `limit` bytes; `prefix`
/// is its beginning, from which the request id is recovered when possible.
pub(super) fn oversized(prefix: &[u8], limit: usize) -> Reply {
    Reply::error(
        jsonrpc::id_from_prefix(prefix),
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("message discarded: it is longer than the limit of {limit} bytes"),
        ),
    )
}
