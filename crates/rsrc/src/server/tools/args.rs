//! What every tool shares: its arguments read from the call, and how it fails.
//! Invariant: a bad argument or a refused resource is a [`ToolError`], which the call
//! turns into an `isError` result; only an unknown tool is a JSON-RPC error.

use serde_json::{Map, Value};

use crate::error::RequestError;
use crate::server::handlers;
use crate::server::inside::ServerState;
use crate::server::tools_config::ToolsConfig;

/// Most provider calls one tool call makes (a provider may return short pages).
pub(super) const MAX_CALLS: usize = 64;

pub(super) enum ToolError {
    /// What the resource method refused.
    Request(RequestError),
    /// A bad argument.
    Argument(String),
}

impl From<RequestError> for ToolError {
    fn from(e: RequestError) -> Self {
        ToolError::Request(e)
    }
}

impl From<crate::error::ResourceError> for ToolError {
    fn from(e: crate::error::ResourceError) -> Self {
        ToolError::Request(e.into())
    }
}

pub(super) type Outcome = Result<Value, ToolError>;

pub(super) fn string_arg<'a>(
    args: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::Argument(format!("`{key}` must be a string"))),
    }
}

pub(super) fn count_arg(args: &Map<String, Value>, key: &str) -> Result<Option<usize>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| ToolError::Argument(format!("`{key}` must be a whole number ≥ 0"))),
    }
}

/// The canonical form of a URI argument, or the refusal the resource methods give (for
/// an excluded URI, that of a resource that does not exist).
pub(super) fn uri_arg(
    srv: &ServerState,
    config: &ToolsConfig,
    uri: &str,
) -> Result<String, ToolError> {
    let mut uri = uri.to_owned();
    handlers::canonicalize(srv, &mut uri)?;
    if !config.offers(&uri) {
        return Err(crate::error::ResourceError::not_found(&uri).into());
    }
    Ok(uri)
}
