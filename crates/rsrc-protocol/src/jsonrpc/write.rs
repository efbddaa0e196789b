//! Writing messages: results, errors, requests and notifications, straight into a writer.
//!
//! Invariant: every message written carries `"jsonrpc": "2.0"`, and an error whose
//! request id could not be read is written with `"id": null`, as JSON-RPC 2.0 §5 requires.

use std::io;

use serde::Serialize;

use super::error::ErrorObject;
use super::id::RequestId;
use super::message::JSONRPC_VERSION;

#[derive(Serialize)]
struct ResultEnvelope<'a, R> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct RequestEnvelope<'a, P> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct NotificationEnvelope<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

/// Writes a result response (no trailing newline).
pub fn write_result<W: io::Write, R: Serialize>(
    out: W,
    id: &RequestId,
    result: &R,
) -> serde_json::Result<()> {
    serde_json::to_writer(
        out,
        &ResultEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            result,
        },
    )
}

/// Writes an error response. An unknown id is written as `null`, as JSON-RPC 2.0
/// requires for errors where the id could not be determined.
pub fn write_error<W: io::Write>(
    out: W,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> serde_json::Result<()> {
    serde_json::to_writer(
        out,
        &ErrorEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            error,
        },
    )
}

/// Writes a request.
pub fn write_request<W: io::Write, P: Serialize>(
    out: W,
    id: &RequestId,
    method: &str,
    params: Option<&P>,
) -> serde_json::Result<()> {
    serde_json::to_writer(
        out,
        &RequestEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            method,
            params,
        },
    )
}

/// Writes a notification.
pub fn write_notification<W: io::Write, P: Serialize>(
    out: W,
    method: &str,
    params: Option<&P>,
) -> serde_json::Result<()> {
    serde_json::to_writer(
        out,
        &NotificationEnvelope {
            jsonrpc: JSONRPC_VERSION,
            method,
            params,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::ErrorCode;
    use super::*;
    use crate::jsonrpc::{Message, decode};

    #[test]
    fn error_responses_write_null_for_an_unknown_id() {
        let mut out = Vec::new();
        write_error(
            &mut out,
            None,
            &ErrorObject::new(ErrorCode::PARSE_ERROR, "bad"),
        )
        .unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }

    #[test]
    fn extreme_integer_ids_are_echoed_exactly() {
        let Ok(Message::Request(r)) =
            decode(br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#)
        else {
            panic!("not a request")
        };
        let mut out = Vec::new();
        write_result(&mut out, &r.id, &serde_json::json!({})).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}"#
        );
    }
}
