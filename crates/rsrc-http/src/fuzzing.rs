//! The checks of the `http_headers` fuzz target, behind the `fuzzing` feature (never in
//! a production build).
//!
//! Invariant: any bytes are a fair input; a panic here is a bug in the header checks.

use std::net::SocketAddr;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use rsrc::server::{Incoming, Server};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::http::headers::{METHOD, NAME, PROTOCOL_VERSION};

use crate::admit::era_of;
use crate::checks;
use crate::modern::check_headers;

/// The header checks on arbitrary bytes: no value panics them, and the era of any
/// `MCP-Protocol-Version` is decided.
pub fn http_headers(data: &[u8]) {
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
    let mut map = HeaderMap::new();
    map.insert(HeaderName::from_static(PROTOCOL_VERSION), value.clone());
    let _ = era_of(&map);
    // The modern checks: the same bytes as the mirrored headers and as a message.
    map.insert(HeaderName::from_static(METHOD), value.clone());
    map.insert(HeaderName::from_static(NAME), value);
    static SERVER: std::sync::OnceLock<Option<Server>> = std::sync::OnceLock::new();
    if let Some(server) = SERVER.get_or_init(|| Server::builder("fuzz", "0").build().ok())
        && let Incoming::Request(request) = server.prepare(data)
    {
        let _ = check_headers(&map, &request, ProtocolVersion::LATEST);
    }
}
