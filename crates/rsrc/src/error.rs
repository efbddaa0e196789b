//! Errors of the two server layers and the one place that maps them to wire codes.
//!
//! [`ResourceError`] is what a [`Provider`](crate::Provider) returns; [`RequestError`] is
//! what the engine itself finds wrong with a request. [`RequestError::to_error_object`] is
//! the single mapping to JSON-RPC codes, and the only code that depends on the revision:
//! resource-not-found is `-32002` up to 2025-11-25 and `-32602` from 2026-07-28, both with
//! `data.uri`.

use std::fmt;

use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};
use serde_json::json;

/// Why a provider could not serve a request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceError {
    /// Nothing exists at this URI (or it is outside what the provider serves).
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// `resources/list` with a `uri` that names a document, not a collection.
    NotACollection {
        /// The URI asked for.
        uri: String,
    },
    /// The URI is malformed for this provider.
    InvalidUri {
        /// The URI asked for.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The resource is larger than the configured limit.
    TooLarge {
        /// The URI asked for.
        uri: String,
        /// Its size in bytes (or at least this many).
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// Other invalid params, with a message for the client.
    InvalidParams(String),
    /// The provider failed; the message is logged, the client sees a generic one.
    Internal(String),
    /// A specific JSON-RPC error, passed through as is.
    Rpc(ErrorObject),
}

impl ResourceError {
    /// Nothing exists at `uri`.
    pub fn not_found(uri: impl Into<String>) -> Self {
        ResourceError::NotFound { uri: uri.into() }
    }

    /// `uri` is a document, so it has no children to list.
    pub fn not_a_collection(uri: impl Into<String>) -> Self {
        ResourceError::NotACollection { uri: uri.into() }
    }

    /// `uri` is malformed.
    pub fn invalid_uri(uri: impl Into<String>, reason: impl Into<String>) -> Self {
        ResourceError::InvalidUri {
            uri: uri.into(),
            reason: reason.into(),
        }
    }

    /// An internal failure.
    pub fn internal(message: impl fmt::Display) -> Self {
        ResourceError::Internal(message.to_string())
    }

    /// Names `uri` in an error raised without one (a handler's [`NotFound`], or `None`
    /// where content was expected): the engine calls it with the URI of the request, so
    /// every not-found on the wire carries `data.uri`.
    pub(crate) fn at(self, uri: &str) -> Self {
        match self {
            ResourceError::NotFound { uri: u } if u.is_empty() => ResourceError::not_found(uri),
            e => e,
        }
    }
}

/// "Nothing exists here", raised where the URI is not at hand (in a handler of the
/// `#[resources]` macro, say): the engine fills in the URI of the request, so the client
/// still gets `data.uri` and the not-found code of its revision.
///
/// ```
/// # use rsrc::{NotFound, ResourceError};
/// fn page(id: &str) -> Result<String, ResourceError> {
///     if id != "abc123" {
///         return Err(NotFound.into());
///     }
///     Ok("Project Roadmap".into())
/// }
/// # assert!(page("x").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NotFound;

impl From<NotFound> for ResourceError {
    fn from(_: NotFound) -> Self {
        ResourceError::NotFound { uri: String::new() }
    }
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("resource not found")
    }
}

impl std::error::Error for NotFound {}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceError::NotFound { uri } => write!(f, "resource not found: {uri}"),
            ResourceError::NotACollection { uri } => {
                write!(f, "{uri} is not a collection: it has no children to list")
            }
            ResourceError::InvalidUri { uri, reason } => write!(f, "invalid URI {uri:?}: {reason}"),
            ResourceError::TooLarge { uri, size, limit } => write!(
                f,
                "{uri} is {size} bytes, more than the read limit of {limit} bytes"
            ),
            ResourceError::InvalidParams(m) | ResourceError::Internal(m) => f.write_str(m),
            ResourceError::Rpc(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ResourceError {}

/// What the engine found wrong with a request, before or around the provider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RequestError {
    /// The provider's error.
    Resource(ResourceError),
    /// Unknown method, or one this revision does not have.
    MethodNotFound(String),
    /// Params did not decode or are inconsistent.
    InvalidParams(String),
    /// The message is not acceptable in this state (not initialized, duplicate id, …).
    InvalidRequest(String),
    /// A 2026-07-28 request named a revision this server does not serve.
    UnsupportedVersion { requested: String },
    /// The server failed (a provider panicked, a result could not be encoded).
    Internal(String),
}

impl From<ResourceError> for RequestError {
    fn from(e: ResourceError) -> Self {
        RequestError::Resource(e)
    }
}

impl RequestError {
    /// The wire error for a request of revision `version`. Before a revision is known
    /// (a legacy request ahead of `initialize`), the newest legacy rules apply.
    pub(crate) fn to_error_object(&self, version: Option<ProtocolVersion>) -> ErrorObject {
        let modern = version.is_some_and(ProtocolVersion::is_modern);
        match self {
            RequestError::Resource(e) => resource_error_object(e, modern),
            RequestError::MethodNotFound(m) => ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {m}"),
            ),
            RequestError::InvalidParams(m) => ErrorObject::new(ErrorCode::INVALID_PARAMS, m),
            RequestError::InvalidRequest(m) => ErrorObject::new(ErrorCode::INVALID_REQUEST, m),
            RequestError::UnsupportedVersion { requested } => ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
            )
            .with_data(json!({
                "supported": ProtocolVersion::ALL.map(ProtocolVersion::as_str),
                "requested": requested,
            })),
            RequestError::Internal(_) => {
                ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error")
            }
        }
    }
}

fn resource_error_object(e: &ResourceError, modern: bool) -> ErrorObject {
    match e {
        ResourceError::NotFound { uri } => {
            let code = if modern {
                ErrorCode::INVALID_PARAMS
            } else {
                ErrorCode::RESOURCE_NOT_FOUND
            };
            ErrorObject::new(code, "Resource not found").with_data(json!({ "uri": uri }))
        }
        ResourceError::NotACollection { uri }
        | ResourceError::InvalidUri { uri, .. }
        | ResourceError::TooLarge { uri, .. } => {
            ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string())
                .with_data(json!({ "uri": uri }))
        }
        ResourceError::InvalidParams(m) => ErrorObject::new(ErrorCode::INVALID_PARAMS, m),
        ResourceError::Internal(_) => ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error"),
        ResourceError::Rpc(obj) => {
            // A provider must not emit a code a 2026-07-28 client would misread: the
            // legacy not-found code becomes the modern one.
            if modern && obj.code == ErrorCode::RESOURCE_NOT_FOUND {
                ErrorObject {
                    code: ErrorCode::INVALID_PARAMS,
                    ..obj.clone()
                }
            } else {
                obj.clone()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_code_depends_on_the_revision() {
        let e = RequestError::Resource(ResourceError::not_found("file:///x"));
        let legacy = e.to_error_object(Some(ProtocolVersion::V2025_11_25));
        assert_eq!(legacy.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(legacy.data.unwrap()["uri"], "file:///x");
        let modern = e.to_error_object(Some(ProtocolVersion::V2026_07_28));
        assert_eq!(modern.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(modern.data.unwrap()["uri"], "file:///x");
    }

    #[test]
    fn internal_details_are_not_sent() {
        let e = RequestError::Resource(ResourceError::internal("disk on fire at /secret"));
        let obj = e.to_error_object(None);
        assert_eq!(obj.code, ErrorCode::INTERNAL_ERROR);
        assert!(!obj.message.contains("secret"));
    }

    #[test]
    fn unsupported_version_lists_what_is_supported() {
        let obj = RequestError::UnsupportedVersion {
            requested: "1900-01-01".into(),
        }
        .to_error_object(None);
        assert_eq!(obj.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        let data = obj.data.unwrap();
        assert_eq!(data["requested"], "1900-01-01");
        assert_eq!(data["supported"][0], "2026-07-28");
    }
}
