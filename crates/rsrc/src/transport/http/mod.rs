//! Streamable HTTP: one endpoint (default `/mcp`) serving both protocol eras, with
//! secure defaults.
//!
//! A request first passes the checks every request passes (`admit.rs`: headers stated
//! once, `Host` and `Origin`, no token in the query, the bearer token; for a POST its
//! content type, what it accepts and its body), then per method; a POST's
//! `MCP-Protocol-Version` header picks the era:
//! - a 2026-07-28 value: stateless, [`modern`] — the `Mcp-Method`/`Mcp-Name` headers are
//!   checked against the body, each request is served on a session of its own, and
//!   closing its stream cancels it;
//! - a 2025 value, or none (2025-03-26 assumed): [`legacy`] sessions with
//!   `Mcp-Session-Id`, the GET stream and `Last-Event-ID` resumption;
//! - anything else: 400 with `-32022` and the supported versions.
//!
//! This file holds the service (the router and what its handlers share) and the dispatch
//! by method and era. Beside it: `config.rs` the settings, `serve.rs` the accept loop,
//! `admit.rs` the checks, `checks.rs` the header values they compare, `auth.rs` bearer
//! tokens, `respond.rs` the responses both eras share, `pieces.rs` a message's bytes as
//! the connection drains, `sse/` the event streams and their replay logs, `stall.rs` the
//! writer that must make progress.
//!
//! Invariants:
//! - A response only ever answers the HTTP request that asked: replies are never routed
//!   by JSON-RPC id, so clients reusing ids cannot see each other's results.
//! - A rejected request allocates no session; sessions are capped and expire when idle.
//! - Every wait is bounded: header reads, body reads, idle keep-alive connections.

mod admit;
mod auth;
mod checks;
mod config;
mod legacy;
mod modern;
mod pieces;
mod respond;
mod serve;
mod sse;
mod stall;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc;
use tokio_util::sync::CancellationToken;

use crate::server::Server;
use admit::{HeaderVersion, era_of};

#[doc(hidden)]
pub use admit::fuzz_headers;
pub use auth::{AuthConfig, TokenVerifier};
#[cfg(feature = "jwt")]
pub use auth::{JwtError, JwtVerifier};
pub use config::HttpConfig;
use respond::{
    Settled, error_response, method_not_allowed, rejection, reply_response, settle, sse_response,
    status_only, too_many_streams, unnumbered_sse, with_permit,
};
pub use serve::serve_http;

/// `Mcp-Session-Id`.
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

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

impl Endpoint {
    async fn post(self: &Arc<Self>, req: Request, owner: Option<auth::Owner>) -> Response {
        let (parts, body) = req.into_parts();
        let bytes = match self.read_post_body(&parts.headers, body).await {
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
}
