//! The params of an outgoing message: the caller's params as a JSON object, with the
//! request's `_meta` inserted, the same way over every link.
//!
//! Invariant: a `_meta` given is always sent, and only in `params._meta`; params that are
//! not an object are sent as they are.

use rsrc_protocol::RequestMeta;

use crate::error::ClientError;

/// `params` as a JSON object, with `meta` as its `_meta` when given.
pub(crate) fn with_meta<P: serde::Serialize>(
    params: &P,
    meta: Option<&RequestMeta>,
    method: &str,
) -> Result<serde_json::Value, ClientError> {
    let mut value = serde_json::to_value(params)
        .map_err(|e| ClientError::Protocol(format!("cannot encode {method} params: {e}")))?;
    if let (Some(meta), Some(obj)) = (meta, value.as_object_mut()) {
        let meta = serde_json::to_value(meta)
            .map_err(|e| ClientError::Protocol(format!("cannot encode _meta: {e}")))?;
        obj.insert("_meta".into(), meta);
    }
    Ok(value)
}
