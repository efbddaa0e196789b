//! What every request passes before it reaches an era, in this order: one copy of each
//! header that decides who calls or what is called (400), `Host` and `Origin` against
//! the allowlists (DNS-rebinding defence; 400 without `Host`, 403 otherwise), no token in
//! the query string (400), the bearer token when configured (401); then, for a POST,
//! `Content-Type` (415) and `Accept` (406), and its body read under a size limit while
//! streaming (413) and a time limit (408); and what `MCP-Protocol-Version` names.
//!
//! Invariant: a request refused here has allocated nothing (no session, no stream) and
//! reached no handler; the statuses are the ones the specifications name.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::ErrorCode;

use super::respond::rejection;
use super::{Endpoint, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID, auth, checks, modern};
use crate::observe;
use crate::server::Server;

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

/// What `MCP-Protocol-Version` says.
pub(super) enum HeaderVersion {
    Absent,
    Legacy,
    Modern(ProtocolVersion),
    Unsupported(String),
}

pub(super) fn era_of(headers: &HeaderMap) -> HeaderVersion {
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
    pub(super) fn screen(&self, req: &Request) -> Result<Option<auth::Owner>, Response> {
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

    pub(super) fn check_host_origin(
        &self,
        headers: &HeaderMap,
        uri: &http::Uri,
    ) -> Result<(), Response> {
        // A header that decides who may call, or what is called, must be stated once: with
        // two `Host`s (RFC 9112 §3.2: 400), or two session ids or tokens, a check could
        // read one copy while something else acts on the other.
        if let Some(name) = SINGLE_HEADERS
            .iter()
            .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        {
            tracing::debug!(header = %name, "refused: header repeated");
            observe::http_refusal("header");
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
            observe::http_refusal("host");
            return Err(rejection(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "missing Host header",
            ));
        };
        if !self.hosts.allows(host) {
            tracing::debug!(host, "refused: Host not allowed");
            observe::http_refusal("host");
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
                observe::http_refusal("origin");
                return Err(rejection(
                    StatusCode::FORBIDDEN,
                    ErrorCode::INVALID_REQUEST,
                    "Origin not allowed",
                ));
            }
        }
        Ok(())
    }

    /// A POST's headers and body: JSON, accepting both answers, and not too large or
    /// slow.
    pub(super) async fn read_post_body(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<Bytes, Response> {
        if !checks::is_json(headers.get(header::CONTENT_TYPE)) {
            observe::http_refusal("content_type");
            return Err(rejection(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Content-Type must be application/json",
            ));
        }
        let accept = headers.get(header::ACCEPT);
        if !checks::accepts(accept, "application", "json")
            || !checks::accepts(accept, "text", "event-stream")
        {
            observe::http_refusal("accept");
            return Err(rejection(
                StatusCode::NOT_ACCEPTABLE,
                ErrorCode::INVALID_REQUEST,
                "Accept must allow both application/json and text/event-stream",
            ));
        }
        self.read_body(headers, body).await
    }

    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
        let limit = self.config.max_body;
        let too_large = || {
            observe::http_refusal("body_size");
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
            Err(_) => Err({
                observe::http_refusal("body_timeout");
                rejection(
                    StatusCode::REQUEST_TIMEOUT,
                    ErrorCode::INVALID_REQUEST,
                    "request body not received in time",
                )
            }),
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
