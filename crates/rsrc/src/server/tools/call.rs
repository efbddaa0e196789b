//! `tools/list` and `tools/call`: the dispatch to each tool, and how a failure reads.
//! Invariant: a tool's failure is a result with `isError: true` whose text is the message
//! the resource method gives.

use std::sync::Arc;

use rsrc_protocol::ProtocolVersion;
use serde_json::{Map, Value, json};

use super::args::ToolError;
use super::definitions::definitions;
use super::list::{list_resource_templates, list_resources};
use super::read::read_resource;
use super::search::search_resources;
use crate::context::RequestContext;
use crate::error::RequestError;
use crate::extension::{ExtensionParams, ExtensionResult};
use crate::server::inside::ServerState;

/// `tools/list`.
pub(in crate::server) async fn list(
    srv: Arc<ServerState>,
    _ctx: RequestContext,
    _p: ExtensionParams,
) -> Result<ExtensionResult, RequestError> {
    let config = srv.tools_config()?;
    // The tools change only with the server: cached like the templates.
    Ok(ExtensionResult {
        value: json!({"tools": definitions(config)}),
        cache: Some(srv.config().templates_cache),
    })
}

/// `tools/call`.
pub(in crate::server) async fn call(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    p: ExtensionParams,
) -> Result<ExtensionResult, RequestError> {
    let config = srv.tools_config()?.clone();
    let name = match p.rest.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => {
            return Err(RequestError::InvalidParams(
                "tools/call needs a \"name\"".into(),
            ));
        }
    };
    let args = match p.rest.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(RequestError::InvalidParams(
                "tools/call \"arguments\" must be an object".into(),
            ));
        }
    };
    let v = ctx.protocol_version();
    let outcome = match name.as_str() {
        "list_resources" => list_resources(&srv, &ctx, &config, &args).await,
        "read_resource" => read_resource(&srv, &ctx, &config, &args).await,
        "search_resources" => search_resources(&srv, &ctx, &config, &args).await,
        "list_resource_templates" => list_resource_templates(&srv, &ctx, &config, &args).await,
        other => {
            return Err(RequestError::InvalidParams(format!(
                "unknown tool: {other}"
            )));
        }
    };
    let result = outcome.unwrap_or_else(|e| failure(&e, v));
    Ok(ExtensionResult::new(result))
}

/// A tool's failure: `isError` with the message the resource method would give.
fn failure(e: &ToolError, v: ProtocolVersion) -> Value {
    let message = match e {
        ToolError::Request(e) => e.to_error_object(Some(v)).message,
        ToolError::Argument(m) => m.clone(),
    };
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}
