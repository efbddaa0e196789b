//! The envelope of one message, decoded in two stages: leniently into a [`RawMessage`],
//! then classified into a [`Message`] with exactly what is wrong named otherwise.
//! Invariant: a member given twice, or a key in the wrong case, never passes as another.

use super::error::{ErrorCode, ErrorObject};
use super::id::{IdField, RequestId};
use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de;
use serde_json::value::RawValue;

/// The JSON-RPC version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// Stage one: a message with every member optional and the payloads left raw.
#[derive(Debug, Deserialize)]
pub struct RawMessage<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    id: IdField,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// Only the id of a message, read when the full envelope did not decode, so that the
/// error can still name the request.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: IdField,
}

/// A decoded message.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request: it has an id and expects a response.
    Request(Request<'a>),
    /// A notification: no id, never answered.
    Notification(Notification<'a>),
    /// A response to a request this side sent.
    Response(Response<'a>),
}

/// A request, with its params still raw.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The id to echo.
    pub id: RequestId,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw params, if present and not `null`.
    pub params: Option<&'a RawValue>,
}

/// A notification, with its params still raw.
#[derive(Debug, Clone)]
pub struct Notification<'a> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw params, if present and not `null`.
    pub params: Option<&'a RawValue>,
}

/// A response, with its result still raw.
#[derive(Debug, Clone)]
pub struct Response<'a> {
    /// The id of the request answered; `None` when the peer could not read it.
    pub id: Option<RequestId>,
    /// The raw result, or the error.
    pub outcome: Result<&'a RawValue, ErrorObject>,
}

/// Why a message could not be decoded: the error code to answer with, and the id when
/// it could still be read.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// `-32700` for malformed JSON, `-32600` for a valid JSON value that is not a message.
    pub code: ErrorCode,
    /// The id of the offending request, when it could be read.
    pub id: Option<RequestId>,
    /// What is wrong.
    pub message: String,
}

impl DecodeError {
    fn invalid(id: Option<RequestId>, message: impl Into<String>) -> Self {
        DecodeError {
            code: ErrorCode::INVALID_REQUEST,
            id,
            message: message.into(),
        }
    }

    /// The error object to send back.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(self.code, self.message.clone())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for DecodeError {}

/// Decodes one message (stage one and stage two).
///
/// Malformed JSON gives `-32700`; a JSON value that is not a valid message gives `-32600`,
/// carrying the request id whenever it can be read unambiguously.
pub fn decode(bytes: &[u8]) -> Result<Message<'_>, DecodeError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => {
            return Err(DecodeError {
                code: ErrorCode::PARSE_ERROR,
                id: None,
                message: "empty message".into(),
            });
        }
        Some(b'[') => {
            // Validate the syntax first so that malformed arrays still get -32700.
            return Err(match serde_json::from_slice::<de::IgnoredAny>(bytes) {
                Ok(_) => DecodeError::invalid(None, "JSON-RPC batches are not supported by MCP"),
                Err(e) => parse_error(&e),
            });
        }
        Some(_) => {}
    }
    match serde_json::from_slice::<RawMessage<'_>>(bytes) {
        Ok(raw) => raw.classify(),
        Err(e) if e.is_data() => {
            // Valid JSON, wrong shape. Read the id on its own so that the error can name it;
            // if even that fails (a duplicate id, say) the id stays unknown.
            let id = serde_json::from_slice::<IdOnly>(bytes)
                .ok()
                .and_then(|m| m.id.valid().cloned());
            Err(DecodeError::invalid(id, format!("invalid message: {e}")))
        }
        Err(e) => Err(parse_error(&e)),
    }
}

fn parse_error(e: &serde_json::Error) -> DecodeError {
    DecodeError {
        code: ErrorCode::PARSE_ERROR,
        id: None,
        message: format!("parse error: {e}"),
    }
}

impl<'a> RawMessage<'a> {
    /// Stage two: decides what kind of message this is.
    pub fn classify(self) -> Result<Message<'a>, DecodeError> {
        let valid_id = self.id.valid().cloned();
        match self.jsonrpc.as_deref() {
            Some(JSONRPC_VERSION) => {}
            Some(other) => {
                return Err(DecodeError::invalid(
                    valid_id,
                    format!("unsupported jsonrpc version {other:?}; expected \"2.0\""),
                ));
            }
            None => {
                return Err(DecodeError::invalid(
                    valid_id,
                    "missing member \"jsonrpc\": \"2.0\"",
                ));
            }
        }
        let params = self.params;
        if let Some(method) = self.method {
            if self.result.is_some() || self.error.is_some() {
                return Err(DecodeError::invalid(
                    valid_id,
                    "a message cannot carry both \"method\" and \"result\"/\"error\"",
                ));
            }
            if let Some(p) = params {
                let first = p.get().as_bytes().first();
                if first != Some(&b'{') && first != Some(&b'[') {
                    return Err(DecodeError::invalid(
                        valid_id,
                        "\"params\" must be a structured value (an object)",
                    ));
                }
            }
            return match self.id {
                IdField::Absent => Ok(Message::Notification(Notification { method, params })),
                IdField::Valid(id) => Ok(Message::Request(Request { id, method, params })),
                IdField::Null => Err(DecodeError::invalid(None, "request id must not be null")),
                IdField::Invalid(why) => Err(DecodeError::invalid(None, why)),
            };
        }
        let id = match self.id {
            IdField::Valid(id) => Some(id),
            IdField::Null | IdField::Absent => None,
            IdField::Invalid(why) => return Err(DecodeError::invalid(None, why)),
        };
        match (self.result, self.error) {
            (Some(result), None) => {
                let Some(id) = id else {
                    return Err(DecodeError::invalid(None, "a result response needs an id"));
                };
                Ok(Message::Response(Response {
                    id: Some(id),
                    outcome: Ok(result),
                }))
            }
            (None, Some(error)) => {
                let error: ErrorObject = serde_json::from_str(error.get()).map_err(|e| {
                    DecodeError::invalid(id.clone(), format!("malformed \"error\": {e}"))
                })?;
                Ok(Message::Response(Response {
                    id,
                    outcome: Err(error),
                }))
            }
            (Some(_), Some(_)) => Err(DecodeError::invalid(
                id,
                "a response cannot carry both \"result\" and \"error\"",
            )),
            (None, None) => Err(DecodeError::invalid(
                id,
                "not a request, notification or response: no \"method\", \"result\" or \"error\"",
            )),
        }
    }
}

/// Decodes raw params into `P`. Absent params decode as an empty object, so parameter
/// structs whose members are all optional accept a request without params. MCP params
/// are always objects: an array (JSON-RPC's positional params) is an error, never
/// matched to members by position.
pub fn decode_params<P: serde::de::DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<P, serde_json::Error> {
    let text = params.map_or("{}", RawValue::get);
    if !text.trim_start().starts_with('{') {
        return Err(<serde_json::Error as serde::de::Error>::custom(
            "params must be an object (MCP has no positional params)",
        ));
    }
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> DecodeError {
        decode(input.as_bytes()).expect_err("should not decode")
    }

    #[test]
    fn request_ids_keep_their_type() {
        let Ok(Message::Request(r)) = decode(br#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(r.id, RequestId::String("7".into()));
        let Ok(Message::Request(r)) = decode(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#) else {
            panic!("not a request")
        };
        assert_eq!(r.id, RequestId::Number(7));
        assert_ne!(r.id.to_string(), RequestId::from("7").to_string());
    }

    #[test]
    fn float_null_and_oversized_ids_are_invalid_requests_without_id() {
        for input in [
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        ] {
            let e = err(input);
            assert_eq!(e.code, ErrorCode::INVALID_REQUEST, "{input}");
            assert_eq!(e.id, None, "{input}");
        }
    }

    #[test]
    fn duplicate_members_are_rejected() {
        let e = err(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(e.id, None, "an ambiguous id must not be echoed");
        let e = err(r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}"#);
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(e.id, Some(RequestId::Number(1)));
    }

    #[test]
    fn case_folded_keys_are_not_the_real_member() {
        // "ID" is an unknown member: this is a notification, not a request with id 1.
        let m = decode(br#"{"jsonrpc":"2.0","ID":1,"method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let e = err(r#"{"JSONRPC":"2.0","id":1,"method":"ping"}"#);
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(e.id, Some(RequestId::Number(1)));
        let e = err(r#"{"jsonrpc":"2.0","id":1,"Method":"ping"}"#);
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        for input in ["{", "{\"jsonrpc\":\"2.0\",", "nul", "[1,", "\u{1}", ""] {
            assert_eq!(err(input).code, ErrorCode::PARSE_ERROR, "{input:?}");
        }
    }

    #[test]
    fn valid_json_that_is_not_a_message_is_an_invalid_request() {
        for input in [
            "5",
            "\"x\"",
            "null",
            "[]",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
        ] {
            assert_eq!(err(input).code, ErrorCode::INVALID_REQUEST, "{input}");
        }
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":7}"#).id,
            Some(RequestId::Number(1))
        );
    }

    #[test]
    fn null_params_are_absent_params() {
        let Ok(Message::Request(r)) =
            decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#)
        else {
            panic!()
        };
        assert!(r.params.is_none());
    }

    #[test]
    fn responses_decode_with_result_or_error() {
        let Ok(Message::Response(r)) = decode(br#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#)
        else {
            panic!()
        };
        assert_eq!(r.id, Some(RequestId::Number(3)));
        assert_eq!(r.outcome.unwrap().get(), r#"{"a":1}"#);
        let Ok(Message::Response(r)) = decode(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","extra":1}}"#,
        ) else {
            panic!()
        };
        assert_eq!(r.id, None);
        assert_eq!(r.outcome.unwrap_err().code, ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn unknown_members_are_ignored() {
        let m = decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping","x-extra":{"deep":[1,2]}}"#);
        assert!(matches!(m, Ok(Message::Request(_))));
    }
}
