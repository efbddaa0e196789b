//! Errors of the two server layers, and the one place that maps them to the wire: JSON-RPC
//! codes and, beside them, HTTP statuses.
//!
//! [`ResourceError`] is the one list of what a [`Provider`](crate::Provider) can answer
//! instead of a result: not found, invalid, timeout, unavailable, internal. Every variant
//! carries the URI it is about (filled in with the request's URI when a provider raised it
//! without one) and a message the client may see — except [`ResourceError::Internal`],
//! whose detail is logged and replaced by "internal error" on the wire. Providers never
//! build JSON-RPC error objects themselves, so the same failure looks the same on the wire
//! whichever provider met it.
//!
//! [`RequestError`] is what the engine itself finds wrong with a request.
//! [`RequestError::to_error_object`] is the single mapping to JSON-RPC codes, and the only
//! code that depends on the revision: resource-not-found is `-32002` up to 2025-11-25 and
//! `-32602` from 2026-07-28, both with `data.uri`. [`RequestError::http_status`] gives the
//! status of a refused request where the Streamable HTTP transport names one.

use std::fmt;

use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};
use rsrc_uri_template::ParseError;
use serde_json::json;

/// Why a provider could not serve a request: the one list every provider answers with.
///
/// | variant | JSON-RPC code | message on the wire |
/// |---|---|---|
/// | `NotFound` | `-32002` (≤ 2025-11-25), `-32602` (2026-07-28) | "Resource not found" |
/// | `Invalid` | `-32602` | its message |
/// | `Timeout` | `-32603` | its message |
/// | `Unavailable` | `-32603` | its message |
/// | `Internal` | `-32603` | "internal error" (the detail is logged) |
///
/// Each carries `data.uri` on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceError {
    /// Nothing exists at this URI — or the provider will not say (outside what it serves,
    /// hidden, refused), which must look exactly the same.
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The request cannot be served as asked: a malformed URI, a document asked for its
    /// children, a read over a limit, a position that no longer applies.
    Invalid {
        /// The URI asked for.
        uri: String,
        /// What is wrong, for the client.
        message: String,
    },
    /// The source took longer than its time limit.
    Timeout {
        /// The URI asked for.
        uri: String,
        /// What took too long, for the client.
        message: String,
    },
    /// The source is busy or unreachable (a database locked by a writer, a lost
    /// connection): asking again later may succeed.
    Unavailable {
        /// The URI asked for.
        uri: String,
        /// What is unavailable, for the client.
        message: String,
    },
    /// The provider failed.
    Internal {
        /// The URI asked for.
        uri: String,
        /// What failed: logged, never sent (it may name host paths or queries).
        detail: String,
    },
}

impl ResourceError {
    /// Nothing exists at `uri`. Also the answer to anything a provider refuses to confirm
    /// exists.
    pub fn not_found(uri: impl Into<String>) -> Self {
        ResourceError::NotFound { uri: uri.into() }
    }

    /// The request for `uri` cannot be served as asked; `message` says why.
    pub fn invalid(uri: impl Into<String>, message: impl Into<String>) -> Self {
        ResourceError::Invalid {
            uri: uri.into(),
            message: message.into(),
        }
    }

    /// `uri` is malformed for this provider.
    pub fn invalid_uri(uri: impl Into<String>, reason: impl fmt::Display) -> Self {
        let uri = uri.into();
        let message = format!("invalid URI {uri:?}: {reason}");
        ResourceError::Invalid { uri, message }
    }

    /// `uri` is a document, so it has no children to list.
    pub fn not_a_collection(uri: impl Into<String>) -> Self {
        let uri = uri.into();
        let message = format!("{uri} is not a collection: it has no children to list");
        ResourceError::Invalid { uri, message }
    }

    /// `uri` is `size` bytes (or at least that many), more than the limit of `limit`.
    pub fn too_large(uri: impl Into<String>, size: u64, limit: u64) -> Self {
        let uri = uri.into();
        let message = format!("{uri} is {size} bytes, more than the read limit of {limit} bytes");
        ResourceError::Invalid { uri, message }
    }

    /// A cursor position the provider cannot continue from (the engine seals positions,
    /// so this means the data changed shape under it).
    pub fn bad_position(uri: impl Into<String>) -> Self {
        ResourceError::invalid(uri, "invalid cursor")
    }

    /// Serving `uri` took longer than the time limit; `message` says which.
    pub fn timeout(uri: impl Into<String>, message: impl Into<String>) -> Self {
        ResourceError::Timeout {
            uri: uri.into(),
            message: message.into(),
        }
    }

    /// The source of `uri` is busy or unreachable now; `message` says why.
    pub fn unavailable(uri: impl Into<String>, message: impl Into<String>) -> Self {
        ResourceError::Unavailable {
            uri: uri.into(),
            message: message.into(),
        }
    }

    /// An internal failure; `detail` is logged, never sent. The engine fills in the URI.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ResourceError::Internal {
            uri: String::new(),
            detail: detail.to_string(),
        }
    }

    /// The URI the error is about (empty until the engine fills it in).
    pub fn uri(&self) -> &str {
        match self {
            ResourceError::NotFound { uri }
            | ResourceError::Invalid { uri, .. }
            | ResourceError::Timeout { uri, .. }
            | ResourceError::Unavailable { uri, .. }
            | ResourceError::Internal { uri, .. } => uri,
        }
    }

    /// Names `uri` in an error raised without one (a handler's [`NotFound`], an internal
    /// failure, `None` where content was expected): the engine calls it with the URI of
    /// the request, so every error on the wire carries `data.uri`.
    pub(crate) fn at(mut self, uri: &str) -> Self {
        match &mut self {
            ResourceError::NotFound { uri: u }
            | ResourceError::Invalid { uri: u, .. }
            | ResourceError::Timeout { uri: u, .. }
            | ResourceError::Unavailable { uri: u, .. }
            | ResourceError::Internal { uri: u, .. }
                if u.is_empty() =>
            {
                uri.clone_into(u);
            }
            _ => {}
        }
        self
    }

    /// The wire error in a request of a modern (2026-07-28) or legacy revision.
    fn to_error_object(&self, modern: bool) -> ErrorObject {
        let (code, message) = match self {
            ResourceError::NotFound { .. } if modern => {
                (ErrorCode::INVALID_PARAMS, "Resource not found")
            }
            ResourceError::NotFound { .. } => (ErrorCode::RESOURCE_NOT_FOUND, "Resource not found"),
            ResourceError::Invalid { message, .. } => (ErrorCode::INVALID_PARAMS, message.as_str()),
            ResourceError::Timeout { message, .. } | ResourceError::Unavailable { message, .. } => {
                (ErrorCode::INTERNAL_ERROR, message.as_str())
            }
            ResourceError::Internal { .. } => (ErrorCode::INTERNAL_ERROR, "internal error"),
        };
        let object = ErrorObject::new(code, message);
        match self.uri() {
            "" => object,
            uri => object.with_data(json!({ "uri": uri })),
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
            ResourceError::Invalid { message, .. }
            | ResourceError::Timeout { message, .. }
            | ResourceError::Unavailable { message, .. } => f.write_str(message),
            ResourceError::Internal { uri, detail } if uri.is_empty() => f.write_str(detail),
            ResourceError::Internal { uri, detail } => write!(f, "{uri}: {detail}"),
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
    /// What the transport mirrors of the request (HTTP headers, or the session it came
    /// in) does not say what its body says.
    HeaderMismatch(String),
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
            RequestError::Resource(e) => e.to_error_object(modern),
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
            RequestError::HeaderMismatch(m) => ErrorObject::new(ErrorCode::HEADER_MISMATCH, m),
            RequestError::Internal(_) => {
                ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error")
            }
        }
    }

    /// The HTTP status of a request refused with this error before it ran, on the
    /// stateless 2026-07-28 path (`stateless`) or in a legacy session. SEP-2243: an
    /// unknown method is 404, every other refusal 400. In a legacy session errors are
    /// answered in a 200 response, except a request that belongs outside any session
    /// (400). A request that ran answers 200, whatever its result.
    pub(crate) fn http_status(&self, stateless: bool) -> u16 {
        match self {
            RequestError::MethodNotFound(_) if stateless => 404,
            _ if stateless => 400,
            RequestError::HeaderMismatch(_) => 400,
            _ => 200,
        }
    }

    /// What is logged about a failure the client sees only as "internal error".
    pub(crate) fn internal_detail(&self) -> Option<String> {
        match self {
            RequestError::Internal(m) => Some(m.clone()),
            RequestError::Resource(e @ ResourceError::Internal { .. }) => Some(e.to_string()),
            _ => None,
        }
    }
}

/// Why a templated resource could not be declared.
///
/// Its `Debug` form is its message, as for [`DeclareError`].
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template is not valid RFC 6570.
    Parse(ParseError),
    /// A completion handler names a variable the template does not have.
    UnknownVariable(String),
    /// A list function was attached twice.
    SecondList,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::Parse(e) => write!(f, "invalid URI template: {e}"),
            TemplateError::UnknownVariable(v) => write!(f, "the template has no variable {v:?}"),
            TemplateError::SecondList => f.write_str("the template already has a list function"),
        }
    }
}

impl fmt::Debug for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for TemplateError {}

/// Why a declaration is invalid.
///
/// Its `Debug` form is its message, the same as `Display`'s: an error that reaches `main`
/// through `?` is printed with `Debug`, and reads as the message the guide quotes, not as
/// a structure. Match on the variants to tell them apart.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclareError {
    /// A template is invalid, or a completion names a variable it does not have.
    Template {
        /// The template, as declared.
        template: String,
        /// What is wrong.
        error: TemplateError,
    },
    /// Two resources have the same URI, or two templates the same text.
    Duplicate(String),
    /// A completion or list function names a template that was not declared.
    UnknownTemplate(String),
    /// A declared URI or template lies outside the prefix the provider is mounted at, so
    /// the router would never send a request for it there.
    OutsideMount {
        /// The declared URI or template.
        uri: String,
        /// The mount prefix.
        prefix: String,
    },
}

impl fmt::Display for DeclareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclareError::Template { template, error } => write!(f, "{template}: {error}"),
            DeclareError::Duplicate(uri) => write!(f, "{uri} is declared twice"),
            DeclareError::UnknownTemplate(t) => {
                write!(f, "no resource is declared with the template {t}")
            }
            DeclareError::OutsideMount { uri, prefix } => write!(
                f,
                "{uri} is declared under the mount prefix {prefix:?}, which it does not start \
                 with, so no request for it would reach it: mount the provider at a prefix of \
                 its URIs"
            ),
        }
    }
}

impl fmt::Debug for DeclareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for DeclareError {}

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
    fn internal_details_are_not_sent_but_the_uri_is() {
        let e = ResourceError::internal("disk on fire at /secret").at("file:///x");
        let obj = RequestError::Resource(e).to_error_object(None);
        assert_eq!(obj.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(obj.message, "internal error");
        let data = obj.data.unwrap();
        assert_eq!(data["uri"], "file:///x");
        assert!(!data.to_string().contains("secret"));
    }

    #[test]
    fn every_variant_names_its_uri_and_shows_its_message_except_internal() {
        let uri = "db://shop/t/1";
        for (e, code, message) in [
            (ResourceError::not_found(uri), -32002, "Resource not found"),
            (
                ResourceError::invalid(uri, "no such column"),
                -32602,
                "no such column",
            ),
            (ResourceError::timeout(uri, "too slow"), -32603, "too slow"),
            (ResourceError::unavailable(uri, "locked"), -32603, "locked"),
            (ResourceError::internal("boom"), -32603, "internal error"),
        ] {
            let obj = RequestError::Resource(e.at(uri)).to_error_object(None);
            assert_eq!(obj.code.0, code, "{message}");
            assert_eq!(obj.message, message);
            assert_eq!(obj.data.unwrap()["uri"], uri, "{message}");
        }
    }

    #[test]
    fn a_uri_given_by_the_provider_is_kept() {
        let e = ResourceError::not_found("file:///a").at("file:///b");
        assert_eq!(e.uri(), "file:///a");
    }

    #[test]
    fn stateless_refusals_are_404_for_unknown_methods_and_400_otherwise() {
        assert_eq!(
            RequestError::MethodNotFound("x".into()).http_status(true),
            404
        );
        assert_eq!(
            RequestError::InvalidParams("x".into()).http_status(true),
            400
        );
        assert_eq!(
            RequestError::HeaderMismatch("x".into()).http_status(true),
            400
        );
    }

    #[test]
    fn legacy_session_refusals_are_200_unless_the_request_belongs_outside_sessions() {
        assert_eq!(
            RequestError::MethodNotFound("x".into()).http_status(false),
            200
        );
        assert_eq!(
            RequestError::InvalidRequest("x".into()).http_status(false),
            200
        );
        assert_eq!(
            RequestError::HeaderMismatch("x".into()).http_status(false),
            400
        );
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
