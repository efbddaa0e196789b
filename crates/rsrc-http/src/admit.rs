//! What every request passes before it reaches an era, in this order: one copy of each
//! header that decides who calls or what is called (400), `Host` and `Origin` against
//! the allowlists (DNS-rebinding defence; 400 without `Host`, 403 otherwise), no token in
//! the query string (400), the bearer token when configured (401); then, for a POST,
//! `Content-Type` (415) and `Accept` (406), and its body read under a size limit while
//! streaming (413) and a time limit (408); and what `MCP-Protocol-Version` names.
//!
//! Invariant: a request refused here has allocated nothing (no session, no stream) and
//! reached no handler; the statuses are the ones the specifications name.

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderName};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use rsrc::observe;
use rsrc::server::gate::{HeaderEra, header_era};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::http::headers::{LAST_EVENT_ID, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use rsrc_protocol::jsonrpc::ErrorCode;

use crate::auth::{self, Owner};
use crate::checks;
use crate::respond::rejection;
use crate::state::Endpoint;

/// Headers a request may carry at most once (repeated: 400).
const SINGLE_HEADERS: [HeaderName; 8] = [
    header::HOST,
    header::ORIGIN,
    header::AUTHORIZATION,
    HeaderName::from_static(SESSION_ID),
    HeaderName::from_static(PROTOCOL_VERSION),
    HeaderName::from_static(LAST_EVENT_ID),
    HeaderName::from_static(METHOD),
    HeaderName::from_static(NAME),
];

/// What `MCP-Protocol-Version` says.
pub(crate) enum HeaderVersion {
    Absent,
    Legacy,
    Modern(ProtocolVersion),
    Unsupported(String),
}

pub(crate) fn era_of(headers: &HeaderMap) -> HeaderVersion {
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

/// The checks every request to the endpoint passes first; with authentication on, who
/// made it.
pub(crate) fn screen(sh: &Endpoint, req: &Request) -> Result<Option<Owner>, Response> {
    check_host_origin(sh, req.headers(), req.uri())?;
    if req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.split('=').next() == Some("access_token"))
    }) {
        return Err(auth::query_token_refused());
    }
    match &sh.config.auth {
        Some(auth) => auth.check(req.headers()).map(Some),
        None => Ok(None),
    }
}

/// `Host` and `Origin` against the allowlists, and the headers that must be stated once.
pub(crate) fn check_host_origin(
    sh: &Endpoint,
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
    if !sh.hosts.allows(host) {
        tracing::debug!(host, "refused: Host not allowed");
        observe::http_refusal("host");
        return Err(rejection(
            StatusCode::FORBIDDEN,
            ErrorCode::INVALID_REQUEST,
            "Host not allowed",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| sh.origins.allows(o));
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

/// A POST's headers and body: JSON, accepting both answers, and not too large or slow.
pub(crate) async fn read_post_body(
    sh: &Endpoint,
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
    read_body(sh, headers, body).await
}

async fn read_body(sh: &Endpoint, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
    let limit = sh.config.max_body;
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
    match tokio::time::timeout(sh.config.body_timeout, Limited::new(body, limit).collect()).await {
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
