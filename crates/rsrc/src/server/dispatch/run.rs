//! Step two of a request: [`Server::run`](crate::Server::run) puts a prepared
//! request through the gate ([`super::super::gate`]) and either refuses it
//! ([`Outcome::Refused`]: nothing ran) or runs it, wrapping its handler with registration
//! in the session, cancellation and panic isolation.
//!
//! Invariants: a request is answered exactly once, or not at all if the client cancelled
//! it; a panic in a handler or provider becomes `-32603` for that request only; every
//! result is fitted to its revision in one place ([`Fit`]), and a large one accounted in
//! the budget of content in flight before it is sent. Every request, refused or run, is
//! recorded once in `mcp_server_operation_duration_seconds`; one that runs does so in
//! its SERVER span (`mcp.request`), a child of the trace its client carried in.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::FutureExt as _;
use metrics::SharedString;
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::lifecycle::EmptyResult;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::super::fit::Fit;
use super::super::gate::{self, Asked, Decision};
use super::super::inside::ServerState;
use super::super::reply::{EncodeResult, Reply};
use super::super::session::Session;
use super::super::{handlers, tools};
use super::prepare::{Call, ENGINE_METHODS, HasMeta, Prepared};
use crate::context::{ContextParts, Notifier, RequestContext};
use crate::error::RequestError;
use crate::future::BoxFuture;
use crate::observe::{self, TraceCarrier, Transport};

/// What [`Server::run`](crate::Server::run) did with a request.
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
    /// A refusal, recorded as a failed `op`.
    fn recorded(
        mut op: Operation,
        session: &Session,
        id: RequestId,
        e: &RequestError,
        version: Option<ProtocolVersion>,
    ) -> Self {
        let object = e.to_error_object(version);
        op.version = version;
        op.finish(Some(observe::error_type(object.code)));
        Refusal {
            reply: Reply::error(Some(id), object),
            status: e.http_status(session.is_stateless()),
        }
    }

    /// The HTTP status of the refusal over Streamable HTTP (see
    /// `RequestError::http_status`).
    pub fn http_status(&self) -> u16 {
        self.status
    }

    /// The error reply.
    pub fn into_reply(self) -> Reply {
        self.reply
    }
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

/// One request being answered: recorded once in `mcp_server_operation_duration_seconds`,
/// and its span given its outcome, however it ends. One dropped before it finished (its
/// transport went away, the shutdown grace ran out) is recorded as `aborted`.
struct Operation {
    method: SharedString,
    transport: Transport,
    started: Instant,
    /// The revision it is answered in, once known.
    version: Option<ProtocolVersion>,
    /// Its SERVER span, once it runs.
    span: tracing::Span,
    done: bool,
}

impl Operation {
    fn new(server: &Arc<ServerState>, session: &Session, method: &str) -> Operation {
        Operation {
            method: method_label(server, method),
            transport: session.transport(),
            started: Instant::now(),
            version: None,
            span: tracing::Span::none(),
            done: false,
        }
    }

    /// Records its end: `error` is the `error_type` of a failure, `None` for a result.
    fn finish(&mut self, error: Option<&'static str>) {
        self.done = true;
        let took = self.started.elapsed();
        observe::operation(
            self.method.clone(),
            self.version.map_or("", ProtocolVersion::as_str),
            self.transport,
            error,
            took,
        );
        // One line per request at debug level, in the request's span.
        let _in = self.span.enter();
        tracing::debug!(error = error.unwrap_or_default(), ?took, "answered");
        if let Some(error) = error {
            self.span.record("error.type", error);
            if error.starts_with('-') {
                // A JSON-RPC code (not `cancelled`, `aborted` or `_OTHER`).
                self.span.record("rpc.response.status_code", error);
            }
            self.span.record("otel.status_code", "ERROR");
        }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        if !self.done {
            self.finish(Some("aborted"));
        }
    }
}

/// The `mcp.method.name` of a request: the engine's methods and the tools bridge's by
/// name, an application's own (bounded by what it registered) by name, anything else
/// `_OTHER`.
fn method_label(server: &Arc<ServerState>, method: &str) -> SharedString {
    if let Some(known) = ENGINE_METHODS
        .iter()
        .chain(&["tools/list", "tools/call"])
        .find(|m| **m == method)
    {
        return SharedString::const_str(known);
    }
    if server.extension_method(method).is_some() {
        return SharedString::from(method.to_owned());
    }
    SharedString::const_str("_OTHER")
}

/// Gates a prepared request and runs it (see [`Server::run`](crate::Server::run)).
pub(in crate::server) fn run(
    server: &Arc<ServerState>,
    session: &Arc<Session>,
    request: Prepared,
    notifier: &Notifier,
) -> Outcome {
    let Prepared {
        id,
        method,
        call,
        carried,
        held,
    } = request;
    let call = *call;
    let mut op = Operation::new(server, session, &method);
    let decision = gate::decide(
        gate::place(session),
        Asked::of(call.meta()),
        call.kind(&method),
    );
    let version = match (&call, decision) {
        (Call::Invalid { error, .. }, decision) => {
            let (e, v) = gate::bad_params(decision, error.clone());
            return Outcome::Refused(Refusal::recorded(op, session, id, &e, v));
        }
        (_, Decision::Refuse(e, v)) => {
            return Outcome::Refused(Refusal::recorded(op, session, id, &e, v));
        }
        (_, Decision::Pong) => {
            op.version = session.negotiated_version();
            op.finish(None);
            return Outcome::Answered(Reply::result(id, EmptyResult::default()));
        }
        (_, Decision::Initialize) => {
            let Call::Initialize(p) = call else {
                unreachable!("the gate initializes only initialize requests");
            };
            return match handlers::initialize(server, session, p) {
                Ok(result) => {
                    op.version = session.negotiated_version();
                    op.finish(None);
                    Outcome::Answered(Reply::result(id, result))
                }
                Err(e) => Outcome::Refused(Refusal::recorded(
                    op,
                    session,
                    id,
                    &e,
                    session.negotiated_version(),
                )),
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
        method: &method,
        op,
        carried: carried.as_deref(),
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
        Call::Listen(p) => start.run(p, move |srv, ctx, p| handlers::listen(srv, ctx, p, held)),
        // The tools bridge's methods when it is on; an application's own otherwise.
        Call::Extension(p) => match &*method {
            "tools/list" if server.tools().is_some() => start.run(p, tools::list),
            "tools/call" if server.tools().is_some() => start.run(p, tools::call),
            _ => start.run(p, handlers::extension(&method)),
        },
        Call::Initialize(_) | Call::Unknown(_) | Call::Invalid { .. } => {
            // The gate refuses these before: decided above.
            let e = RequestError::Internal(format!("{method} reached no handler"));
            Outcome::Refused(Refusal::recorded(
                start.op,
                session,
                start.id,
                &e,
                Some(version),
            ))
        }
    }
}

/// The request's SERVER span (the OpenTelemetry conventions for MCP), sampled or not as
/// the application's [`RequestTracing`](observe::RequestTracing) decides from the trace
/// context its client carried in (`params._meta`'s first, SEP-414, else the transport's),
/// and made a child of that trace. Disabled (and free) when no subscriber wants it.
fn request_span(
    server: &Arc<ServerState>,
    method: &str,
    id: &RequestId,
    version: ProtocolVersion,
    session: &Session,
    meta: Option<&rsrc_protocol::meta::RequestMeta>,
    carried: Option<&[Option<String>; 2]>,
) -> tracing::Span {
    use tracing::field::Empty;
    let tracing = server
        .request_tracing()
        .map(|tracing| (tracing, carrier(meta, carried)));
    let sampled = tracing.is_none_or(|(tracing, carrier)| tracing.sampled(carrier));
    // One set of fields, under the target that says whether the trace is sampled.
    macro_rules! span {
        ($target:expr) => {
            tracing::info_span!(
                target: $target,
                "mcp.request",
                otel.name = method,
                otel.kind = "server",
                otel.status_code = Empty,
                mcp.method.name = method,
                mcp.protocol.version = version.as_str(),
                mcp.session.id = Empty,
                mcp.resource.uri = Empty,
                jsonrpc.request.id = %observe::Capped(id),
                rpc.response.status_code = Empty,
                error.type = Empty,
                network.transport = session.transport().as_str(),
                trace_id = Empty,
            )
        };
    }
    let span = if sampled {
        span!(observe::REQUEST_TARGET)
    } else {
        span!(observe::UNSAMPLED_TARGET)
    };
    if let Some((tracing, carrier)) = tracing {
        tracing.adopt(&span, carrier, sampled);
    }
    if let Some(id) = session.http_id() {
        span.record("mcp.session.id", id);
    }
    span
}

/// The trace context a request carries: `params._meta`'s (SEP-414), else the one its
/// transport carried (over HTTP, the `traceparent` and `tracestate` headers).
fn carrier<'a>(
    meta: Option<&'a rsrc_protocol::meta::RequestMeta>,
    carried: Option<&'a [Option<String>; 2]>,
) -> TraceCarrier<'a> {
    let field = |name: &str| {
        meta.and_then(|m| m.other.get(name))
            .and_then(serde_json::Value::as_str)
    };
    let mut carrier = TraceCarrier {
        traceparent: field("traceparent"),
        tracestate: field("tracestate"),
        baggage: field("baggage"),
    };
    if carrier.traceparent.is_none()
        && let Some([parent, state]) = carried
    {
        carrier.traceparent = parent.as_deref();
        carrier.tracestate = state.as_deref();
    }
    carrier
}

/// A request the gate let through, about to start.
struct Start<'a> {
    server: &'a Arc<ServerState>,
    origin: &'a Origin<'a>,
    id: RequestId,
    version: ProtocolVersion,
    method: &'a str,
    op: Operation,
    carried: Option<&'a [Option<String>; 2]>,
}

impl Start<'_> {
    /// Registers the request in its session and wraps its handler with cancellation,
    /// accounting of large results, panic isolation, and the fitting of its result to
    /// the request's revision.
    fn run<P, F, Fut, R>(self, params: P, handler: F) -> Outcome
    where
        P: HasMeta + Send + 'static,
        F: FnOnce(Arc<ServerState>, RequestContext, P) -> Fut + Send + 'static,
        Fut: Future<Output = Result<R, RequestError>> + Send + 'static,
        R: EncodeResult + Fit + 'static,
    {
        let Start {
            server,
            origin,
            id,
            version,
            method,
            op,
            carried,
        } = self;
        let session = origin.session;
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let Some(token) = session.begin(&id, serial) else {
            let e = RequestError::InvalidRequest(format!(
                "a request with id {id} is already in flight"
            ));
            return Outcome::Refused(Refusal::recorded(op, session, id, &e, Some(version)));
        };
        let meta = params.meta();
        let span = request_span(server, method, &id, version, session, meta, carried);
        let mut op = op;
        op.version = Some(version);
        op.span = span.clone();
        let (log_level, client_info) = gate::context(version, meta, session);
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
        Outcome::Running(Box::pin(
            async move {
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
                        op.finish(Some("cancelled"));
                        return None;
                    }
                    outcome = work => outcome,
                };
                ctx.finish();
                let method = op.method.clone();
                let mut failed = |e: &RequestError| {
                    let object = e.to_error_object(Some(version));
                    op.finish(Some(observe::error_type(object.code)));
                    Reply::error(Some(id.clone()), object)
                };
                Some(match outcome {
                    Ok(Ok(result)) => {
                        op.finish(None);
                        Reply::result(id, result).with_reservation(ctx.take_reservation())
                    }
                    Ok(Err(e)) => {
                        if let Some(detail) = e.internal_detail() {
                            tracing::error!(
                                method = &*method,
                                id = %observe::Capped(&id),
                                error = %detail,
                                "request failed"
                            );
                        }
                        failed(&e)
                    }
                    Err(panic) => {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| (*s).to_owned())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a non-string panic payload".into());
                        tracing::error!(
                            method = &*method,
                            id = %observe::Capped(&id),
                            panic = %what,
                            "a handler panicked; the server continues"
                        );
                        failed(&RequestError::Internal(what))
                    }
                })
            }
            .instrument(span),
        ))
    }
}
