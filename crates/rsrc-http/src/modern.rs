//! Revision 2026-07-28 over HTTP: stateless requests whose mirrored headers
//! (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) must agree with the body (SEP-2243).
//!
//! Invariants:
//! - The headers are compared with the values the engine will act on: the request as
//!   [`Server::prepare`](rsrc::Server::prepare) decoded it. A mirrored member that the
//!   typed request does not hold as one string says nothing definite and is refused with
//!   `-32020`, never passed on unchecked.
//! - Each request runs on a session of its own: nothing one request does is visible to
//!   another, and dropping its response (the client closed the stream) cancels it.
//! - Status codes: the engine says whether it refused a request before running it, and
//!   with which status (`-32601` → 404, any other refusal → 400, see
//!   [`Refusal::http_status`](rsrc::server::Refusal::http_status)); header mismatches are
//!   400; a request that ran answers 200, whatever its result.

use std::borrow::Cow;
use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};
use rsrc::Notifier;
use rsrc::server::{Incoming, Outcome, Prepared, Session};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::http::headers::{METHOD, NAME, decode_value};
use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};
use rsrc_protocol::methods::{Method as _, SubscriptionsListen};

use crate::checks::traced;
use crate::respond::{
    Settled, error_response, reply_response, settle, sse_response, status_only, too_many_streams,
    unnumbered_sse,
};
use crate::state::Endpoint;

/// A header's value, the `=?base64?…?=` sentinel decoded; `Err` for a value that is not
/// visible ASCII or not valid base64 UTF-8.
fn header_text<'h>(map: &'h HeaderMap, name: &str) -> Result<Option<Cow<'h, str>>, String> {
    let Some(v) = map.get(name) else {
        return Ok(None);
    };
    let text = v
        .to_str()
        .map_err(|_| format!("the {name} header contains characters outside visible ASCII"))?;
    decode_value(text)
        .map(Some)
        .map_err(|e| format!("the {name} header {e}"))
}

/// The header checks of SEP-2243 for a request, against the typed request the engine
/// will run; `Err` carries the `-32020` message.
pub(crate) fn check_headers(
    headers: &HeaderMap,
    req: &Prepared,
    version: ProtocolVersion,
) -> Result<(), String> {
    let method = header_text(headers, METHOD)?.ok_or("missing Mcp-Method header")?;
    if method != req.method() {
        return Err(format!(
            "Header mismatch: Mcp-Method header value {method:?} does not match body value {:?}",
            req.method()
        ));
    }
    if let Some(v) = req.revision()
        && v != version.as_str()
    {
        return Err(format!(
            "Header mismatch: MCP-Protocol-Version header value {:?} does not match _meta value {v:?}",
            version.as_str()
        ));
    }
    if let Some(member) = req.mirrored_member() {
        let name = header_text(headers, NAME)?.ok_or("missing Mcp-Name header")?;
        // The value the engine will act on; none when the body does not say one thing.
        match req.name() {
            Some(body) if name != body => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header value {name:?} does not match body value {body:?}"
                ));
            }
            Some(_) => {}
            None => {
                return Err(format!(
                    "Mcp-Name header without a string params.{member} in the body"
                ));
            }
        }
    }
    Ok(())
}

/// A POST of revision `version`.
pub(crate) async fn post(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    body: &[u8],
    version: ProtocolVersion,
) -> Response {
    let request = match sh.server.prepare(body) {
        Incoming::Request(request) => traced(request, headers),
        Incoming::Malformed(reply) => return reply_response(StatusCode::BAD_REQUEST, reply),
        // A notification concerns no session here: there is nothing it could change.
        Incoming::Notification(_) => return status_only(StatusCode::ACCEPTED),
        Incoming::Response => {
            return error_response(
                StatusCode::BAD_REQUEST,
                None,
                &ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("a client sends no responses in revision {version}"),
                ),
            );
        }
    };
    if let Err(why) = check_headers(headers, &request, version) {
        rsrc::observe::http_refusal("header_mismatch");
        return error_response(
            StatusCode::BAD_REQUEST,
            Some(request.id()),
            &ErrorObject::new(ErrorCode::HEADER_MISMATCH, why),
        );
    }
    // A subscription stream lives long: it needs one of the places for streams.
    let permit = if request.method() == SubscriptionsListen::NAME {
        match sh.stream_permit() {
            Some(p) => Some(p),
            None => return too_many_streams(Some(request.id())),
        }
    } else {
        None
    };
    let session = Arc::new(Session::stateless(Notifier::discard()).closing_with(sh.stop.clone()));
    let (notifier, notes) = Notifier::channel(sh.config.notification_queue);
    let outcome = sh.server.run(&session, request, &notifier);
    drop(notifier);
    match outcome {
        Outcome::Refused(refusal) => {
            let status =
                StatusCode::from_u16(refusal.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            reply_response(status, refusal.into_reply())
        }
        Outcome::Answered(reply) => reply_response(StatusCode::OK, reply),
        Outcome::Running(fut) => match settle(fut, notes).await {
            Settled::Json(Some(reply)) => reply_response(StatusCode::OK, reply),
            Settled::Json(None) => sse_response(futures_util::stream::empty()),
            Settled::Stream(events) => unnumbered_sse(events, sh.config.keep_alive, permit),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use http::{HeaderName, HeaderValue};

    const MCP_METHOD: HeaderName = HeaderName::from_static(METHOD);
    const MCP_NAME: HeaderName = HeaderName::from_static(NAME);

    fn check(body: &str, headers: &HeaderMap) -> Result<(), String> {
        let server = rsrc::Server::builder("t", "1")
            .tools(rsrc::ToolsConfig::default())
            .build()
            .unwrap();
        let Incoming::Request(req) = server.prepare(body.as_bytes()) else {
            panic!("not a request")
        };
        check_headers(headers, &req, ProtocolVersion::V2026_07_28)
    }

    const READ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    #[test]
    fn method_and_name_must_match_the_body() {
        let mut h = HeaderMap::new();
        assert!(check(READ, &h).unwrap_err().contains("Mcp-Method"));
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/list"));
        assert!(check(READ, &h).unwrap_err().contains("does not match"));
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        assert!(check(READ, &h).unwrap_err().contains("Mcp-Name"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a%20b"));
        assert!(check(READ, &h).unwrap_err().contains("does not match"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a b"));
        assert_eq!(check(READ, &h), Ok(()));
    }

    #[test]
    fn base64_sentinel_values_are_decoded_before_comparing() {
        let mut h = HeaderMap::new();
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        let encoded = base64::engine::general_purpose::STANDARD.encode("file:///a b");
        h.insert(
            MCP_NAME,
            HeaderValue::from_str(&format!("=?base64?{encoded}?=")).unwrap(),
        );
        assert_eq!(check(READ, &h), Ok(()));
        h.insert(MCP_NAME, HeaderValue::from_static("=?base64?!!!?="));
        assert!(check(READ, &h).unwrap_err().contains("base64"));
    }

    #[test]
    fn a_body_that_says_two_things_is_refused() {
        let mut h = HeaderMap::new();
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///public"));
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///public","uri":"file:///secret"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///public","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#,
        ] {
            assert!(check(body, &h).is_err(), "{body}");
        }
        // Members the headers do not mirror are not compared.
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///public","name":1}}"#;
        assert_eq!(check(ok, &h), Ok(()));
        // A repeated name: the header is compared with the one the engine acts on.
        let mut tool = HeaderMap::new();
        tool.insert(MCP_METHOD, HeaderValue::from_static("tools/call"));
        tool.insert(MCP_NAME, HeaderValue::from_static("safe"));
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe","name":"danger"}}"#;
        assert!(check(twice, &tool).is_err());
    }

    #[test]
    fn the_meta_version_must_match_the_header() {
        let body = READ.replace("2026-07-28", "2025-11-25");
        let mut h = HeaderMap::new();
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a b"));
        assert!(
            check(&body, &h)
                .unwrap_err()
                .contains("MCP-Protocol-Version")
        );
    }
}
