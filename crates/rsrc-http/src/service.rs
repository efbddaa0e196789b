//! [`HttpService`]: the HTTP face of a [`Server`] — the axum router to serve (or nest in
//! an application), and the dispatch of each request to its rules by method and era.
//!
//! Invariant: the service is the top of the transport: it builds the endpoint's state
//! ([`Endpoint`]) and hands it to the rules (`admit.rs`, `modern.rs`, `legacy/`), which
//! never see the service itself.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::header::{self, HeaderValue};
use http::{Method, StatusCode};
use rsrc::server::Server;
use rsrc::server::gate::unsupported_version;
use rsrc_protocol::jsonrpc;
use tokio_util::sync::CancellationToken;

use crate::admit::{self, HeaderVersion, era_of};
use crate::auth::Owner;
use crate::checks::{self, Allowlist};
use crate::config::HttpConfig;
use crate::respond::{error_response, method_not_allowed, status_only};
use crate::sse::Budget;
use crate::state::Endpoint;
use crate::table::Sessions;
use crate::{legacy, modern};

/// The HTTP face of a [`Server`]: an axum router to serve (or nest in an application),
/// and the legacy sessions behind it.
#[derive(Clone, Debug)]
pub struct HttpService {
    shared: Arc<Endpoint>,
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
        let sessions = Sessions::new(
            config.max_sessions,
            config.session_idle,
            server.session_store(config.session_idle),
        );
        let service = HttpService {
            shared: Arc::new(Endpoint {
                server: server.clone(),
                hosts: Allowlist::new(hosts),
                origins: Allowlist::new(origins),
                sessions,
                stop: CancellationToken::new(),
                replay_budget: Budget::new(config.replay_budget),
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

    /// The MCP endpoint's path.
    pub(crate) fn path(&self) -> &str {
        &self.shared.config.path
    }

    /// How many legacy sessions are open.
    pub fn sessions(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Ends idle legacy sessions (also done on every `initialize` at the cap, and
    /// periodically by `serve_http`).
    pub fn expire_sessions(&self) {
        self.shared.sessions.expire();
    }

    /// Starts shutting down: ends the standalone streams, which carry no request;
    /// requests in flight (and their streams) run on to their end.
    pub fn close(&self) {
        self.shared.stop.cancel();
    }

    /// Ends every legacy session this instance holds, cancelling what still runs (the
    /// last step of a shutdown, once the grace period is over).
    pub(crate) fn end_sessions(&self) {
        self.shared.sessions.end_all();
    }
}

async fn endpoint(State(sh): State<Arc<Endpoint>>, req: Request) -> Response {
    let owner = match admit::screen(&sh, &req) {
        Ok(owner) => owner,
        Err(refusal) => return refusal,
    };
    match *req.method() {
        Method::POST => post(&sh, req, owner).await,
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
    if let Err(refusal) = admit::check_host_origin(&sh, req.headers(), req.uri()) {
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

/// A POST, to the rules of the era its `MCP-Protocol-Version` names.
async fn post(sh: &Arc<Endpoint>, req: Request, owner: Option<Owner>) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match admit::read_post_body(sh, &parts.headers, body).await {
        Ok(b) => b,
        Err(refusal) => return refusal,
    };
    match era_of(&parts.headers) {
        HeaderVersion::Modern(v) => modern::post(sh, &parts.headers, &bytes, v).await,
        HeaderVersion::Legacy | HeaderVersion::Absent => {
            legacy::post(sh, &parts.headers, owner, &bytes).await
        }
        HeaderVersion::Unsupported(requested) => error_response(
            StatusCode::BAD_REQUEST,
            jsonrpc::id_from_prefix(&bytes).as_ref(),
            &unsupported_version(&requested),
        ),
    }
}
