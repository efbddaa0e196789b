//! The tools bridge: the resources of a server offered as four tools, for hosts whose model
//! only ever calls tools (most of them read no resource on their own, and several never
//! show templates).
//!
//! `list_resources`, `read_resource`, `search_resources` and `list_resource_templates` are
//! answered by the resource handlers themselves, so a tool sees exactly what the resource
//! methods return, with the same error messages. On top of them the bridge only shapes
//! results for a model: resource links and a compact table, embedded text cut at a limit
//! with an explicit note saying how to read on, pages small enough for a context window.
//!
//! Invariants:
//! - Enabling the bridge changes nothing in the resource methods.
//! - A failure of a tool (a missing resource, a bad argument) is a result with
//!   `isError: true` whose text is the message the resource method gives; only an unknown
//!   tool name is a JSON-RPC error (`-32602`).
//! - Every successful result carries `structuredContent` matching the tool's
//!   `outputSchema`, plus content blocks for hosts that ignore it.
//! - Work per call is bounded: at most `page` items returned, at most `scan` resources
//!   examined by a filter or a search, at most `max_text` characters of text.
//!
//! This file holds the settings, `tools/list` and `tools/call` (the dispatch to each tool,
//! its arguments and how a failure reads); beside it, `definitions.rs` is what
//! `tools/list` says of each tool, `shape.rs` how results are shaped for a model (items,
//! links, the compact table), and `list.rs`, `search.rs` and `read.rs` the tools
//! themselves.

mod definitions;
mod list;
mod read;
mod search;
mod shape;

use rsrc_protocol::ProtocolVersion;
use serde_json::{Map, Value, json};

use super::Server;
use super::handlers;
use crate::context::RequestContext;
use crate::error::RequestError;
use crate::extension::{ExtensionParams, ExtensionResult};
use definitions::definitions;
use list::{list_resource_templates, list_resources};
use read::read_resource;
use search::search_resources;

/// Most provider calls one tool call makes (a provider may return short pages).
const MAX_CALLS: usize = 64;

/// The methods the bridge serves.
pub(crate) const METHODS: [&str; 2] = ["tools/list", "tools/call"];

/// The capability the bridge declares.
pub(crate) const CAPABILITY: &str = "tools";

/// Settings of the tools bridge ([`ServerBuilder::tools`](crate::ServerBuilder::tools)).
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Most characters of text one `read_resource` call returns (default 20,000).
    pub max_text: usize,
    /// Largest binary content embedded in a result, in bytes (default 1 MiB); larger
    /// content is described and linked instead.
    pub max_blob: usize,
    /// Most resources or templates one call returns (default 100).
    pub page: usize,
    /// Most resources a filtered listing or a search examines per call (default 10,000);
    /// the result then says where to continue.
    pub scan: usize,
    /// URIs kept out of the tools (default: none): each is a resource's URI, and what it
    /// holds is every URI below it (after a `/`, or right after a URI that ends with
    /// `/`), however it is spelled: URIs are compared in the canonical form providers
    /// resolve them to (percent-encodings decoded, scheme and authority in lowercase, dot
    /// segments removed). The tools neither list, find nor read them, and answer as for
    /// a resource that does not exist; the resource methods still serve them.
    pub excluded: Vec<String>,
}

impl ToolsConfig {
    /// Whether the tools offer `uri`: not if any spelling of it lies in an excluded URI.
    /// Both are compared in their canonical form ([`crate::uri::canonical`]: what every
    /// provider resolves them to), so no encoding, case or dot segment reaches an
    /// excluded resource; a URI is also held to be under an excluded one when it is
    /// only with its dot segments taken literally (as providers that refuse them do not
    /// need, but one taking `..` as a name would).
    fn offers(&self, uri: &str) -> bool {
        if self.excluded.is_empty() {
            return true;
        }
        let resolved = crate::uri::canonical(uri);
        let literal = crate::uri::decoded(uri);
        !self.excluded.iter().any(|base| {
            let base = crate::uri::canonical(base);
            below(&resolved, &base) || below(&literal, &base)
        })
    }
}

/// Whether `uri` is `base` or lies below it: after a `/`, `?` or `#`, or anywhere after
/// a base that ends with `/` (which also holds its own URI without the slash).
fn below(uri: &[u8], base: &[u8]) -> bool {
    match uri.strip_prefix(base) {
        Some(rest) => {
            rest.is_empty()
                || base.ends_with(b"/")
                || matches!(rest.first(), Some(b'/' | b'?' | b'#'))
        }
        None => base.strip_suffix(b"/").is_some_and(|b| b == uri),
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            max_text: 20_000,
            max_blob: 1024 * 1024,
            page: 100,
            scan: 10_000,
            excluded: Vec::new(),
        }
    }
}

/// `tools/list`.
pub(super) async fn list(
    srv: Server,
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
pub(super) async fn call(
    srv: Server,
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

enum ToolError {
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

type Outcome = Result<Value, ToolError>;

fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::Argument(format!("`{key}` must be a string"))),
    }
}

fn count_arg(args: &Map<String, Value>, key: &str) -> Result<Option<usize>, ToolError> {
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
fn uri_arg(srv: &Server, config: &ToolsConfig, uri: &str) -> Result<String, ToolError> {
    let mut uri = uri.to_owned();
    handlers::canonicalize(srv, &mut uri)?;
    if !config.offers(&uri) {
        return Err(crate::error::ResourceError::not_found(&uri).into());
    }
    Ok(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excluded_uri_hides_what_is_below_it_and_nothing_else() {
        let config = ToolsConfig {
            excluded: vec!["db://shop".into(), "file:///".into()],
            ..ToolsConfig::default()
        };
        assert!(!config.offers("db://shop"));
        assert!(!config.offers("db://shop/items/1"));
        assert!(config.offers("db://shopping/items/1"));
        assert!(!config.offers("file:///notes/a.md"));
        assert!(config.offers("git:///main/README.md"));
    }

    #[test]
    fn no_spelling_of_an_excluded_uri_is_offered() {
        let config = ToolsConfig {
            excluded: vec![
                "file:///secret".into(),
                "db://shop".into(),
                "skill://team/".into(),
            ],
            ..ToolsConfig::default()
        };
        for hidden in [
            "file:///%73ecret/key.txt",
            "file:///%73%65%63%72%65%74",
            "FILE:///secret/key.txt",
            "file:///open/../secret/key.txt",
            "file:///open/%2e%2e/secret/key.txt",
            "file:///./secret/key.txt",
            "file:///secret%2Fkey.txt",
            "file:///secret?x",
            "file:///secret/..",
            "file:///secret/../open/a.txt",
            "db://%73hop/items/1",
            "DB://SHOP/items/1",
            "db://Sh%4Fp",
            "skill://%74eam/s/SKILL.md",
            "skill://team",
        ] {
            assert!(!config.offers(hidden), "{hidden}");
        }
        for offered in [
            "file:///secrets/key.txt",
            "file:///open/secret",
            "file:///open/../open/a.txt",
            "db://shopping/items/1",
            "skill://teams/s/SKILL.md",
        ] {
            assert!(config.offers(offered), "{offered}");
        }
    }
}
