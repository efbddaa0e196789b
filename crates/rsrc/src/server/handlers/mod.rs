//! One handler per method. Each takes decoded params and the request's context (which
//! knows the revision) and returns the typed result, with the caching hint that applies
//! (the provider's, else the server's default); fitting the result to the revision
//! (`resultType`, `_meta.serverInfo`, and dropping the caching members before 2026-07-28)
//! is done once for every method by the dispatcher ([`Fit`](super::fit::Fit)). Handlers
//! reach the engine through its inside API (`inside.rs`).
//!
//! Invariants:
//! - Every URI from a client is validated before a provider sees it.
//! - A provider only sees cursor positions this server sealed for the same listing.
//! - A read never answers an empty `contents` for a document: that is a provider bug and
//!   becomes an internal error, never a false "exists but empty".
//! - Every resource leaving the server carries both SEP-2093 spellings of its kind while
//!   the server serves rsrc's extension, and none of SEP-2093's members otherwise
//!   ([`FitExtension`](super::fit::FitExtension), applied by each handler whose result
//!   holds resources).

mod complete;
mod lifecycle;
mod listing;
mod read;
mod subscriptions;

pub(super) use complete::{complete, extension};
pub(super) use lifecycle::{discover, initialize, ping};
pub(super) use listing::{directory_read, list, listing, templates};
pub(super) use read::{metadata, read};
pub(super) use subscriptions::{listen, listener_of, subscribe, unsubscribe};

use super::Server;
use crate::cursor::InvalidCursor;
use crate::error::{RequestError, ResourceError};
use crate::provider::MAX_POSITION_BYTES;

impl From<InvalidCursor> for RequestError {
    fn from(e: InvalidCursor) -> Self {
        RequestError::InvalidParams(e.to_string())
    }
}

/// Maps a client's URI (or IRI) to the URI every provider and subscription sees
/// (RFC 3987 §3.1), and validates it: the one check of a client's URI, made before
/// [`Server::route`] or a provider sees it.
pub(super) fn canonicalize(srv: &Server, uri: &mut String) -> Result<(), RequestError> {
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

pub(super) fn check_position(pos: &[u8]) -> Result<(), RequestError> {
    if pos.len() > MAX_POSITION_BYTES {
        return Err(RequestError::Internal(format!(
            "a provider returned a {}-byte cursor position (limit {MAX_POSITION_BYTES})",
            pos.len()
        )));
    }
    Ok(())
}
