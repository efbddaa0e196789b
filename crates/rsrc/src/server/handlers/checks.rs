//! The checks every handler shares: a client's URI canonicalized and validated once, a
//! provider's cursor position bounded, a bad cursor told as invalid params. Invariant:
//! no URI reaches a provider or a subscription before [`canonicalize`] accepted it.

use crate::cursor::InvalidCursor;
use crate::error::{RequestError, ResourceError};
use crate::provider::MAX_POSITION_BYTES;
use crate::server::inside::ServerState;

impl From<InvalidCursor> for RequestError {
    fn from(e: InvalidCursor) -> Self {
        RequestError::InvalidParams(e.to_string())
    }
}

/// Maps a client's URI (or IRI) to the URI every provider and subscription sees
/// (RFC 3987 §3.1), and validates it: the one check of a client's URI, made before
/// the router or a provider sees it.
pub(in crate::server) fn canonicalize(
    srv: &ServerState,
    uri: &mut String,
) -> Result<(), RequestError> {
    if let std::borrow::Cow::Owned(mapped) = crate::uri::to_uri(uri)
        .map_err(|reason| RequestError::from(ResourceError::invalid_uri(uri.as_str(), reason)))?
    {
        *uri = mapped;
    }
    crate::uri::validate(uri, srv.config().max_uri_len)
        .map_err(|reason| ResourceError::invalid_uri(uri.as_str(), reason))?;
    // The request's span names the resource it is about (a bounded, validated URI).
    tracing::Span::current().record("mcp.resource.uri", uri.as_str());
    Ok(())
}

/// Refuses a cursor position a provider made larger than [`MAX_POSITION_BYTES`].
pub(in crate::server) fn check_position(pos: &[u8]) -> Result<(), RequestError> {
    if pos.len() > MAX_POSITION_BYTES {
        return Err(RequestError::Internal(format!(
            "a provider returned a {}-byte cursor position (limit {MAX_POSITION_BYTES})",
            pos.len()
        )));
    }
    Ok(())
}
