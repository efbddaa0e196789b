//! Revision 2026-07-28 over HTTP: stateless requests whose mirrored headers
//! (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) must agree with the body (SEP-2243).
//!
//! Invariants:
//! - The headers are compared with the members the engine will act on, read with the
//!   engine's own envelope decoder; a mirrored member that is repeated or not a string
//!   says nothing definite and is refused with `-32020`, never passed on unchecked.
//! - Each request runs on a session of its own: nothing one request does is visible to
//!   another, and dropping its response (the client closed the stream) cancels it.
//! - Status codes: `-32601` refused before running → 404; any other refusal, and
//!   `-32020`/`-32021`/`-32022` → 400; results and errors from running the request → 200.

use std::borrow::Cow;
use std::sync::Arc;

use axum::response::Response;
use base64::Engine as _;
use http::{HeaderMap, HeaderName, StatusCode};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{self, ErrorCode, ErrorObject, Message, Request, RequestId};
use rsrc_protocol::methods::{Method as _, SubscriptionsListen};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    Settled, Shared, error_response, reply_response, settle, sse_response, status_only,
    unnumbered_sse,
};
use crate::context::Notifier;
use crate::server::{Handled, Reply, Session};

pub(super) const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(super) const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The members of a JSON object in order, duplicates included, values left raw.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                    members.push((k, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'a> Members<'a> {
    /// The one string member `key`: `Ok(None)` if absent; `Err` if repeated or not a
    /// string (the body would then not say one thing the header could be checked
    /// against).
    fn string(&self, key: &str) -> Result<Option<Cow<'a, str>>, String> {
        let mut found = self.0.iter().filter(|(k, _)| k == key);
        let Some((_, raw)) = found.next() else {
            return Ok(None);
        };
        if found.next().is_some() {
            return Err(format!("params member {key:?} appears more than once"));
        }
        serde_json::from_str::<Cow<'a, str>>(raw.get())
            .map(Some)
            .map_err(|_| format!("params member {key:?} is not a string"))
    }

    fn object(&self, key: &str) -> Result<Option<Members<'a>>, String> {
        let mut found = self.0.iter().filter(|(k, _)| k == key);
        let Some((_, raw)) = found.next() else {
            return Ok(None);
        };
        if found.next().is_some() {
            return Err(format!("params member {key:?} appears more than once"));
        }
        serde_json::from_str::<Members<'a>>(raw.get())
            .map(Some)
            .map_err(|_| format!("params member {key:?} is not an object"))
    }
}

fn params<'a>(req: &Request<'a>) -> Result<Option<Members<'a>>, String> {
    req.params
        .map(|raw| serde_json::from_str::<Members<'a>>(raw.get()))
        .transpose()
        .map_err(|_| "params is not an object".to_owned())
}

/// The revision a request's `_meta` names, if it names one.
fn meta_version<'a>(params: &Members<'a>) -> Result<Option<Cow<'a, str>>, String> {
    match params.object("_meta")? {
        Some(meta) => meta.string(rsrc_protocol::meta::PROTOCOL_VERSION_KEY),
        None => Ok(None),
    }
}

/// Whether a message carries a per-request revision in its `_meta`.
pub(super) fn speaks_modern(message: &Message<'_>) -> bool {
    let Message::Request(req) = message else {
        return false;
    };
    params(req)
        .ok()
        .flatten()
        .and_then(|p| meta_version(&p).ok().flatten())
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(ProtocolVersion::is_modern)
}

pub(super) fn request_id<'m>(message: &'m Message<'_>) -> Option<&'m RequestId> {
    match message {
        Message::Request(r) => Some(&r.id),
        _ => None,
    }
}

/// A header's value, decoding the `=?base64?…?=` sentinel; `Err` for a value that is
/// not visible ASCII or not valid base64 UTF-8.
fn header_text<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
) -> Result<Option<Cow<'h, str>>, String> {
    let Some(v) = headers.get(name) else {
        return Ok(None);
    };
    let text = v
        .to_str()
        .map_err(|_| format!("the {name} header contains characters outside visible ASCII"))?;
    match text
        .strip_prefix("=?base64?")
        .and_then(|t| t.strip_suffix("?="))
    {
        None => Ok(Some(Cow::Borrowed(text))),
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("the {name} header is not valid base64: {e}"))?;
            String::from_utf8(bytes)
                .map(|s| Some(Cow::Owned(s)))
                .map_err(|_| format!("the {name} header does not decode to UTF-8"))
        }
    }
}

/// The header checks of SEP-2243 for a request; `Err` carries the `-32020` message.
fn check_headers(
    headers: &HeaderMap,
    req: &Request<'_>,
    version: ProtocolVersion,
) -> Result<(), String> {
    let method = header_text(headers, &MCP_METHOD)?.ok_or("missing Mcp-Method header")?;
    if method != req.method {
        return Err(format!(
            "Header mismatch: Mcp-Method header value {method:?} does not match body value {:?}",
            req.method
        ));
    }
    // The body is read exactly as far as the headers mirror it; a member that is
    // repeated, or of the wrong type, cannot be checked and is refused.
    let p = params(req)?;
    if let Some(v) = p.as_ref().map(meta_version).transpose()?.flatten()
        && v != version.as_str()
    {
        return Err(format!(
            "Header mismatch: MCP-Protocol-Version header value {:?} does not match _meta value {v:?}",
            version.as_str()
        ));
    }
    let mirrored_member = match req.method.as_ref() {
        "resources/read" => Some("uri"),
        "tools/call" | "prompts/get" => Some("name"),
        _ => None,
    };
    if let Some(member) = mirrored_member {
        let name = header_text(headers, &MCP_NAME)?.ok_or("missing Mcp-Name header")?;
        let body = p.as_ref().map(|p| p.string(member)).transpose()?.flatten();
        match body {
            Some(body) if name != body => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header value {name:?} does not match body value {body:?}"
                ));
            }
            Some(_) => {}
            None => {
                return Err(format!(
                    "Mcp-Name header without params.{member} in the body"
                ));
            }
        }
    }
    Ok(())
}

fn status_of(reply: &Reply, refused: bool) -> StatusCode {
    match reply.error_object().map(|e| e.code) {
        None => StatusCode::OK,
        Some(ErrorCode::METHOD_NOT_FOUND) if refused => StatusCode::NOT_FOUND,
        Some(_) if refused => StatusCode::BAD_REQUEST,
        Some(
            ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(_) => StatusCode::OK,
    }
}

/// A POST of revision `version`.
pub(super) async fn post(
    sh: &Arc<Shared>,
    headers: &HeaderMap,
    body: &[u8],
    version: ProtocolVersion,
) -> Response {
    let message = match jsonrpc::decode(body) {
        Ok(m) => m,
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, e.id.as_ref(), &e.to_error_object());
        }
    };
    match &message {
        Message::Response(_) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                None,
                &ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("a client sends no responses in revision {version}"),
                ),
            );
        }
        Message::Request(req) => {
            if let Err(why) = check_headers(headers, req, version) {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    Some(&req.id),
                    &ErrorObject::new(ErrorCode::HEADER_MISMATCH, why),
                );
            }
        }
        Message::Notification(_) => {}
    }
    // A subscription stream lives long: it needs one of the places for streams.
    let permit = match &message {
        Message::Request(req) if req.method == SubscriptionsListen::NAME => {
            match sh.stream_permit() {
                Some(p) => Some(p),
                None => return super::too_many_streams(Some(&req.id)),
            }
        }
        _ => None,
    };
    let session = Arc::new(Session::stateless(Notifier::discard()).closing_with(sh.stop.clone()));
    let (notifier, notes) = Notifier::channel(sh.config.notification_queue);
    let handled = sh.server.handle_decoded(&session, message, &notifier);
    drop(notifier);
    match handled {
        Handled::None => status_only(StatusCode::ACCEPTED),
        Handled::Reply(reply) => {
            let status = status_of(&reply, true);
            reply_response(status, reply)
        }
        Handled::Pending(fut) => match settle(fut, notes).await {
            Settled::Json(Some(reply)) => {
                let status = status_of(&reply, false);
                reply_response(status, reply)
            }
            Settled::Json(None) => sse_response(futures_util::stream::empty()),
            Settled::Stream(events) => unnumbered_sse(events, sh.config.keep_alive, permit),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn request(body: &str) -> (Vec<u8>, HeaderMap) {
        (body.as_bytes().to_vec(), HeaderMap::new())
    }

    fn check(body: &[u8], headers: &HeaderMap) -> Result<(), String> {
        let Ok(Message::Request(req)) = jsonrpc::decode(body) else {
            panic!("not a request")
        };
        check_headers(headers, &req, ProtocolVersion::V2026_07_28)
    }

    const READ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    #[test]
    fn method_and_name_must_match_the_body() {
        let (body, mut h) = request(READ);
        assert!(check(&body, &h).unwrap_err().contains("Mcp-Method"));
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/list"));
        assert!(check(&body, &h).unwrap_err().contains("does not match"));
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        assert!(check(&body, &h).unwrap_err().contains("Mcp-Name"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a%20b"));
        assert!(check(&body, &h).unwrap_err().contains("does not match"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a b"));
        assert_eq!(check(&body, &h), Ok(()));
    }

    #[test]
    fn base64_sentinel_values_are_decoded_before_comparing() {
        let (body, mut h) = request(READ);
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        let encoded = base64::engine::general_purpose::STANDARD.encode("file:///a b");
        h.insert(
            MCP_NAME,
            HeaderValue::from_str(&format!("=?base64?{encoded}?=")).unwrap(),
        );
        assert_eq!(check(&body, &h), Ok(()));
        h.insert(MCP_NAME, HeaderValue::from_static("=?base64?!!!?="));
        assert!(check(&body, &h).unwrap_err().contains("base64"));
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
            assert!(check(body.as_bytes(), &h).is_err(), "{body}");
        }
        // Members the headers do not mirror are not read.
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///public","name":1}}"#;
        assert_eq!(check(ok.as_bytes(), &h), Ok(()));
        let mut tool = HeaderMap::new();
        tool.insert(MCP_METHOD, HeaderValue::from_static("tools/call"));
        tool.insert(MCP_NAME, HeaderValue::from_static("safe"));
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe","name":"danger"}}"#;
        assert!(check(twice.as_bytes(), &tool).is_err());
    }

    #[test]
    fn the_meta_version_must_match_the_header() {
        let body = READ.replace("2026-07-28", "2025-11-25");
        let mut h = HeaderMap::new();
        h.insert(MCP_METHOD, HeaderValue::from_static("resources/read"));
        h.insert(MCP_NAME, HeaderValue::from_static("file:///a b"));
        assert!(
            check(body.as_bytes(), &h)
                .unwrap_err()
                .contains("MCP-Protocol-Version")
        );
    }
}
