//! Streamable HTTP: one endpoint (default `/mcp`) serving both protocol eras, with
//! secure defaults.
//!
//! A request passes, in order: the `Host` and `Origin` allowlists (DNS-rebinding
//! defence; 400 without `Host`, 403 otherwise), the refusal of tokens in the query
//! string, the bearer-token check when configured (401), then per method. A POST is
//! checked for `Content-Type` (415) and `Accept` (406), its body is read under a size
//! limit while streaming (413) and a time limit (408), and the `MCP-Protocol-Version`
//! header picks the era:
//! - a 2026-07-28 value: stateless, [`modern`] — the `Mcp-Method`/`Mcp-Name` headers are
//!   checked against the body, each request is served on a session of its own, and
//!   closing its stream cancels it;
//! - a 2025 value, or none (2025-03-26 assumed): [`legacy`] sessions with
//!   `Mcp-Session-Id`, the GET stream and `Last-Event-ID` resumption;
//! - anything else: 400 with `-32022` and the supported versions.
//!
//! Invariants:
//! - A response only ever answers the HTTP request that asked: replies are never routed
//!   by JSON-RPC id, so clients reusing ids cannot see each other's results.
//! - A rejected request allocates no session; sessions are capped and expire when idle.
//! - Every wait is bounded: header reads, body reads, idle keep-alive connections.

mod auth;
mod checks;
mod legacy;
mod modern;
mod respond;
mod sse;
mod stall;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{self, ErrorCode};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::server::Server;

pub use auth::{AuthConfig, TokenVerifier};
#[cfg(feature = "jwt")]
pub use auth::{JwtError, JwtVerifier};
use respond::{
    Settled, error_response, method_not_allowed, rejection, reply_response, settle, sse_response,
    status_only, too_many_streams, unnumbered_sse, with_permit,
};

/// `Mcp-Session-Id`.
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// Headers a request may carry at most once (repeated: 400).
const SINGLE_HEADERS: [HeaderName; 8] = [
    header::HOST,
    header::ORIGIN,
    header::AUTHORIZATION,
    SESSION_ID,
    PROTOCOL_VERSION,
    LAST_EVENT_ID,
    modern::MCP_METHOD,
    modern::MCP_NAME,
];

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The MCP endpoint (default `/mcp`).
    pub path: String,
    /// `Host` values accepted; empty means the loopback names with the bound port. `"*"`
    /// accepts any (only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted when the header is present; empty means the default
    /// hosts over http and https. `"*"` accepts any.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes (default 4 MiB).
    pub max_body: usize,
    /// Longest time to receive a request body (default 30 s).
    pub body_timeout: Duration,
    /// Longest time to receive a request's headers, and to wait for the next request on
    /// an idle keep-alive connection (default 10 s).
    pub header_read_timeout: Duration,
    /// Most connections open at once; more wait in the listen backlog (default 1024).
    pub max_connections: usize,
    /// How long a response may wait on a client that does not read it before the
    /// connection is closed: in every such period at least 16 KiB must be sent
    /// (default 30 s).
    pub write_stall_timeout: Duration,
    /// Most legacy sessions at once (default 4096).
    pub max_sessions: usize,
    /// A legacy session unused this long ends (default 30 min).
    pub session_idle: Duration,
    /// Interval of SSE keep-alive comments on idle streams (default 15 s).
    pub keep_alive: Duration,
    /// Notifications queued per request; more are dropped (default 256).
    pub notification_queue: usize,
    /// Requests running at once in one legacy session; more get 429 (default 64).
    pub max_in_flight: usize,
    /// Long-lived streams open at once (GET streams, `subscriptions/listen`); more get
    /// 503, so that they cannot take every connection (default 256).
    pub max_streams: usize,
    /// Events kept per legacy stream for `Last-Event-ID` replay (default 1024).
    pub replay_events: usize,
    /// Bytes kept per legacy stream for replay, beyond its newest event (default 1 MiB).
    pub replay_bytes: usize,
    /// Bytes kept for replay by all streams together, beyond each one's newest event
    /// (default 64 MiB).
    pub replay_budget: usize,
    /// How long in-flight requests may run once shutdown begins (default 10 s).
    pub shutdown_grace: Duration,
    /// Bearer-token authentication; `None` serves without it.
    pub auth: Option<AuthConfig>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1024,
            max_sessions: 4096,
            session_idle: Duration::from_secs(30 * 60),
            keep_alive: Duration::from_secs(15),
            notification_queue: 256,
            max_in_flight: 64,
            max_streams: 256,
            replay_events: 1024,
            replay_bytes: 1024 * 1024,
            replay_budget: 64 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
            write_stall_timeout: Duration::from_secs(30),
            auth: None,
        }
    }
}

/// The HTTP face of a [`Server`]: an axum router to serve (or nest in an application),
/// and the legacy sessions behind it.
#[derive(Clone, Debug)]
pub struct HttpService {
    shared: Arc<Endpoint>,
}

#[derive(Debug)]
struct Endpoint {
    server: Server,
    config: HttpConfig,
    hosts: checks::Allowlist,
    origins: checks::Allowlist,
    sessions: legacy::Sessions,
    /// Cancelled at shutdown: ends standalone streams, and asks subscription streams to
    /// end gracefully.
    stop: CancellationToken,
    replay_budget: Arc<sse::Budget>,
    streams: Arc<tokio::sync::Semaphore>,
}

impl HttpService {
    /// Serves `server` with `config`, reachable at `bound` (whose port the default
    /// `Host`/`Origin` allowlists use).
    pub fn new(server: &Server, config: HttpConfig, bound: SocketAddr) -> Self {
        let hosts = if config.allowed_hosts.is_empty() {
            checks::default_hosts(bound)
        } else {
            config.allowed_hosts.clone()
        };
        let origins = if config.allowed_origins.is_empty() {
            checks::origins_of(&hosts)
        } else {
            config.allowed_origins.clone()
        };
        let sessions = legacy::Sessions::new(
            config.max_sessions,
            config.session_idle,
            server.session_store(config.session_idle),
        );
        let service = HttpService {
            shared: Arc::new(Endpoint {
                server: server.clone(),
                hosts: checks::Allowlist::new(hosts),
                origins: checks::Allowlist::new(origins),
                sessions,
                stop: CancellationToken::new(),
                replay_budget: sse::Budget::new(config.replay_budget),
                streams: Arc::new(tokio::sync::Semaphore::new(config.max_streams.max(1))),
                config,
            }),
        };
        if let Some(store) = service.shared.sessions.store() {
            let shared = Arc::downgrade(&service.shared);
            store.on_change(Box::new(move |id| {
                if let Some(sh) = shared.upgrade() {
                    legacy::reload(&sh, id);
                }
            }));
        }
        service
    }

    /// The routes: the MCP endpoint and, with authentication, the protected-resource
    /// metadata (RFC 9728).
    pub fn router(&self) -> axum::Router {
        let mut router =
            axum::Router::new().route(&self.shared.config.path, axum::routing::any(endpoint));
        if let Some(auth) = &self.shared.config.auth {
            for path in auth.metadata_paths(&self.shared.config.path) {
                router = router.route(&path, axum::routing::any(metadata));
            }
        }
        router.with_state(Arc::clone(&self.shared))
    }

    /// How many legacy sessions are open.
    pub fn sessions(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Ends idle legacy sessions (also done on every `initialize` at the cap, and
    /// periodically by [`serve_http`]).
    pub fn expire_sessions(&self) {
        self.shared.sessions.expire();
    }

    /// Starts shutting down: ends the standalone streams, which carry no request;
    /// requests in flight (and their streams) run on to their end.
    pub fn close(&self) {
        self.shared.stop.cancel();
    }
}

/// Serves `server` on `listener` until `shutdown` completes, then stops accepting, lets
/// in-flight requests finish within [`HttpConfig::shutdown_grace`], and closes streams.
pub async fn serve_http<F>(
    server: &Server,
    listener: TcpListener,
    config: HttpConfig,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let bound = listener.local_addr()?;
    let grace = config.shutdown_grace;
    let idle = config.session_idle;
    let write_stall = config.write_stall_timeout;
    let limit = Arc::new(tokio::sync::Semaphore::new(config.max_connections.max(1)));
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .keep_alive(true)
        .max_headers(100);
    let service = HttpService::new(server, config, bound);
    let app = service.router();
    let graceful = GracefulShutdown::new();
    let reaper = {
        let service = service.clone();
        tokio::spawn(async move {
            let period = (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
            loop {
                tokio::time::sleep(period).await;
                service.expire_sessions();
            }
        })
    };
    tracing::info!(address = %bound, path = %service.shared.config.path, "serving Streamable HTTP");
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&limit).acquire_owned() => p.map_err(io::Error::other)?,
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY");
        }
        let stream = stall::Progress::new(stream, write_stall);
        let conn =
            http1.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
            drop(permit);
        });
    }
    drop(listener);
    reaper.abort();
    tracing::info!("shutting down: no new connections; finishing requests in flight");
    // Long-lived streams end now; requests in flight get the grace period.
    service.close();
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            ?grace,
            "requests still in flight after the grace period: abandoned"
        );
    }
    // Whatever still runs (a request whose client went away) is cancelled.
    service.shared.sessions.end_all();
    Ok(())
}

async fn endpoint(State(sh): State<Arc<Endpoint>>, req: Request) -> Response {
    let owner = match sh.screen(&req) {
        Ok(owner) => owner,
        Err(refusal) => return refusal,
    };
    match *req.method() {
        Method::POST => sh.post(req, owner).await,
        Method::GET => match era_of(req.headers()) {
            HeaderVersion::Modern(_) => method_not_allowed(),
            _ => legacy::get(&sh, req.headers(), owner).await,
        },
        Method::DELETE => match era_of(req.headers()) {
            HeaderVersion::Modern(_) => method_not_allowed(),
            _ => legacy::delete(&sh, req.headers(), owner).await,
        },
        _ => method_not_allowed(),
    }
}

async fn metadata(State(sh): State<Arc<Endpoint>>, req: Request) -> Response {
    if let Err(refusal) = sh.check_host_origin(req.headers(), req.uri()) {
        return refusal;
    }
    let Some(auth) = &sh.config.auth else {
        return status_only(StatusCode::NOT_FOUND);
    };
    if req.method() != Method::GET {
        return method_not_allowed();
    }
    let mut res = Response::new(Body::from(auth.metadata_document()));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// What `MCP-Protocol-Version` says.
enum HeaderVersion {
    Absent,
    Legacy,
    Modern(ProtocolVersion),
    Unsupported(String),
}

fn era_of(headers: &HeaderMap) -> HeaderVersion {
    use crate::server::gate::{HeaderEra, header_era};
    let Some(v) = headers.get(PROTOCOL_VERSION) else {
        return HeaderVersion::Absent;
    };
    let Ok(v) = v.to_str() else {
        return HeaderVersion::Unsupported(String::from_utf8_lossy(v.as_bytes()).into_owned());
    };
    match header_era(v) {
        HeaderEra::Modern(pv) => HeaderVersion::Modern(pv),
        HeaderEra::Legacy => HeaderVersion::Legacy,
        HeaderEra::Unsupported => HeaderVersion::Unsupported(v.to_owned()),
    }
}

impl Endpoint {
    /// The checks every request to the endpoint passes first; with authentication on,
    /// who made it.
    fn screen(&self, req: &Request) -> Result<Option<auth::Owner>, Response> {
        self.check_host_origin(req.headers(), req.uri())?;
        if req.uri().query().is_some_and(|q| {
            q.split('&')
                .any(|kv| kv.split('=').next() == Some("access_token"))
        }) {
            return Err(auth::query_token_refused());
        }
        match &self.config.auth {
            Some(auth) => auth.check(req.headers()).map(Some),
            None => Ok(None),
        }
    }

    fn check_host_origin(&self, headers: &HeaderMap, uri: &http::Uri) -> Result<(), Response> {
        // A header that decides who may call, or what is called, must be stated once: with
        // two `Host`s (RFC 9112 §3.2: 400), or two session ids or tokens, a check could
        // read one copy while something else acts on the other.
        if let Some(name) = SINGLE_HEADERS
            .iter()
            .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        {
            tracing::debug!(header = %name, "refused: header repeated");
            return Err(rejection(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                format!("the {name} header is given more than once"),
            ));
        }
        // An absolute-form request target carries the authority (RFC 9112 §3.2.2).
        let host = match uri.authority() {
            Some(a) => Some(a.as_str()),
            None => headers.get(header::HOST).and_then(|h| h.to_str().ok()),
        };
        let Some(host) = host else {
            return Err(rejection(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "missing Host header",
            ));
        };
        if !self.hosts.allows(host) {
            tracing::debug!(host, "refused: Host not allowed");
            return Err(rejection(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Host not allowed",
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed = origin.to_str().is_ok_and(|o| self.origins.allows(o));
            if !allowed {
                tracing::debug!(origin = ?origin, "refused: Origin not allowed");
                return Err(rejection(
                    StatusCode::FORBIDDEN,
                    ErrorCode::INVALID_REQUEST,
                    "Origin not allowed",
                ));
            }
        }
        Ok(())
    }

    async fn post(self: &Arc<Self>, req: Request, owner: Option<auth::Owner>) -> Response {
        let (parts, body) = req.into_parts();
        if !checks::is_json(parts.headers.get(header::CONTENT_TYPE)) {
            return rejection(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Content-Type must be application/json",
            );
        }
        let accept = parts.headers.get(header::ACCEPT);
        if !checks::accepts(accept, "application", "json")
            || !checks::accepts(accept, "text", "event-stream")
        {
            return rejection(
                StatusCode::NOT_ACCEPTABLE,
                ErrorCode::INVALID_REQUEST,
                "Accept must allow both application/json and text/event-stream",
            );
        }
        let bytes = match self.read_body(&parts.headers, body).await {
            Ok(b) => b,
            Err(refusal) => return refusal,
        };
        match era_of(&parts.headers) {
            HeaderVersion::Modern(v) => modern::post(self, &parts.headers, &bytes, v).await,
            HeaderVersion::Legacy | HeaderVersion::Absent => {
                legacy::post(self, &parts.headers, owner, &bytes).await
            }
            HeaderVersion::Unsupported(requested) => {
                let e = crate::error::RequestError::UnsupportedVersion { requested }
                    .to_error_object(Some(ProtocolVersion::LATEST));
                error_response(
                    StatusCode::BAD_REQUEST,
                    jsonrpc::id_from_prefix(&bytes).as_ref(),
                    &e,
                )
            }
        }
    }

    /// A place for one more long-lived stream, if the cap allows.
    fn stream_permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.streams).try_acquire_owned().ok()
    }

    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
        let limit = self.config.max_body;
        let too_large = || {
            rejection(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::INVALID_REQUEST,
                format!("request body larger than {limit} bytes"),
            )
        };
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        match tokio::time::timeout(
            self.config.body_timeout,
            Limited::new(body, limit).collect(),
        )
        .await
        {
            Err(_) => Err(rejection(
                StatusCode::REQUEST_TIMEOUT,
                ErrorCode::INVALID_REQUEST,
                "request body not received in time",
            )),
            Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "request body unreadable");
                Err(rejection(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "request body could not be read",
                ))
            }
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
        }
    }
}

/// The header checks on arbitrary bytes, for the fuzz target (`rsrc::fuzzing`): no value
/// panics them, and the era of any `MCP-Protocol-Version` is decided.
#[doc(hidden)]
pub fn fuzz_headers(data: &[u8]) {
    let Ok(value) = HeaderValue::from_bytes(data) else {
        return;
    };
    let _ = checks::accepts(Some(&value), "text", "event-stream");
    let _ = checks::accepts(Some(&value), "application", "json");
    let _ = checks::is_json(Some(&value));
    let bound = SocketAddr::from(([127, 0, 0, 1], 8080));
    let hosts = checks::Allowlist::new(checks::default_hosts(bound));
    let origins = checks::Allowlist::new(checks::origins_of(&checks::default_hosts(bound)));
    if let Ok(text) = value.to_str() {
        let _ = (hosts.allows(text), origins.allows(text));
    }
    let mut headers = HeaderMap::new();
    headers.insert(PROTOCOL_VERSION, value.clone());
    let _ = era_of(&headers);
    // The modern checks: the same bytes as the mirrored headers and as a message.
    headers.insert(modern::MCP_METHOD, value.clone());
    headers.insert(modern::MCP_NAME, value);
    static SERVER: std::sync::OnceLock<Option<Server>> = std::sync::OnceLock::new();
    if let Some(server) = SERVER.get_or_init(|| Server::builder("fuzz", "0").build().ok())
        && let crate::server::Incoming::Request(request) = server.prepare(data)
    {
        let _ = modern::check_headers(&headers, &request, ProtocolVersion::LATEST);
    }
}
