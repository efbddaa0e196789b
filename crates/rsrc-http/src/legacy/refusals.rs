//! The refusals the 2025 handlers share: an unknown or ended session (404), a session
//! store that cannot answer (503, retry soon), the session cap reached (503).
//!
//! Invariant: each refusal is counted (`rsrc_http_refusals_total` by reason) and tells
//! the client what to do next: send `initialize` again, or retry after `Retry-After`.

use axum::response::Response;
use http::{HeaderValue, StatusCode};
use rsrc_protocol::jsonrpc::ErrorCode;

use crate::respond::rejection;

pub(crate) fn unknown_session() -> Response {
    rsrc::observe::http_refusal("session_unknown");
    rejection(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "unknown or ended session: send initialize again",
    )
}

pub(crate) fn store_unavailable(what: &str) -> Response {
    rsrc::observe::http_refusal("session_store");
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        format!("{what}: the session store is unavailable; retry later"),
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

pub(crate) fn too_many_sessions() -> Response {
    rsrc::observe::http_refusal("session_cap");
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "too many sessions are active; retry later",
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}
