//! [`Reply`]: a response waiting to be encoded straight into a transport's output buffer.
//!
//! Invariant: encoding never fails on the wire. If a result cannot be serialized (a
//! provider put a non-finite number somewhere, say), the bytes written so far are rolled
//! back and an internal-error response with the same id is written instead.

use rsrc_protocol::jsonrpc::{self, ErrorCode, ErrorObject, RequestId};
use serde::Serialize;

/// A serializable result, type-erased.
trait EncodeResult: Send {
    fn encode(&self, id: &RequestId, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

impl<T: Serialize + Send> EncodeResult for T {
    fn encode(&self, id: &RequestId, out: &mut Vec<u8>) -> serde_json::Result<()> {
        jsonrpc::write_result(out, id, self)
    }
}

enum Body {
    Result(RequestId, Box<dyn EncodeResult>),
    Error(Option<RequestId>, ErrorObject),
}

/// A response to one request.
pub struct Reply {
    body: Body,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.body {
            Body::Result(id, _) => f.debug_tuple("Reply::Result").field(id).finish(),
            Body::Error(id, e) => f.debug_tuple("Reply::Error").field(id).field(e).finish(),
        }
    }
}

impl Reply {
    /// A result response.
    pub(crate) fn result<T: Serialize + Send + 'static>(id: RequestId, result: T) -> Reply {
        Reply {
            body: Body::Result(id, Box::new(result)),
        }
    }

    /// An error response; `id` is `None` when the request's id could not be read.
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Reply {
        Reply {
            body: Body::Error(id, error),
        }
    }

    /// The id this reply answers.
    pub fn id(&self) -> Option<&RequestId> {
        match &self.body {
            Body::Result(id, _) => Some(id),
            Body::Error(id, _) => id.as_ref(),
        }
    }

    /// The error, if this is an error response.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match &self.body {
            Body::Error(_, e) => Some(e),
            Body::Result(..) => None,
        }
    }

    /// Appends the encoded response (no trailing newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let written = match &self.body {
            Body::Result(id, result) => result.encode(id, out),
            Body::Error(id, e) => jsonrpc::write_error(&mut *out, id.as_ref(), e),
        };
        if let Err(e) = written {
            tracing::error!(error = %e, id = ?self.id(), "a result could not be encoded");
            out.truncate(start);
            let fallback = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error");
            // Writing into a Vec with a plain error object cannot fail.
            let _ = jsonrpc::write_error(out, self.id(), &fallback);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn an_unencodable_result_becomes_an_internal_error_with_the_same_id() {
        // Maps with non-string keys cannot be JSON.
        let mut bad = HashMap::new();
        bad.insert(vec![1u8], 1);
        let mut out = b"prefix".to_vec();
        Reply::result(RequestId::Number(4), bad).encode(&mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"prefix{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"internal error"}}"#
        );
    }
}
