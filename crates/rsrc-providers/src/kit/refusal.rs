//! The refusal that looks like not-found: how every provider answers a URI it will not
//! serve (malformed for it, outside what it was pointed at, hidden, a special file, a ref
//! it does not serve).
//!
//! Invariant: a refusal is indistinguishable on the wire from a missing resource, so a
//! client learns nothing about what exists outside what it may see; the reason goes to the
//! log (at debug level) and nowhere else.

use rsrc::ResourceError;

/// `uri` is refused for `reason`: logged, and answered exactly like a missing resource.
pub(crate) fn refused(uri: &str, reason: &str) -> ResourceError {
    tracing::debug!(%uri, reason, "refused");
    ResourceError::not_found(uri)
}
