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

use globset::{Glob, GlobMatcher};
use rsrc_protocol::resources::{ListResourceTemplatesParams, ReadResourceParams, Resource};
use rsrc_protocol::{Body, ProtocolVersion};
use serde_json::{Map, Value, json};

use super::Server;
use super::handlers;
use crate::context::RequestContext;
use crate::cursor::{InvalidCursor, ListKind};
use crate::error::RequestError;
use crate::extension::{ExtensionParams, ExtensionResult};
use crate::provider::{ListRequest, Listed, SearchRequest};

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
    /// `/`). The tools neither list, find nor read them, and answer as for a resource
    /// that does not exist; the resource methods still serve them.
    pub excluded: Vec<String>,
}

impl ToolsConfig {
    /// Whether the tools offer `uri`.
    fn offers(&self, uri: &str) -> bool {
        !self.excluded.iter().any(|base| {
            uri.strip_prefix(base.as_str())
                .is_some_and(|rest| rest.is_empty() || base.ends_with('/') || rest.starts_with('/'))
        })
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

/// The tools, as `tools/list` returns them.
fn definitions(config: &ToolsConfig) -> Value {
    let read_only = json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false});
    let resource_item = json!({
        "type": "object",
        "properties": {
            "uri": {"type": "string"}, "name": {"type": "string"}, "title": {"type": "string"},
            "description": {"type": "string"}, "mimeType": {"type": "string"},
            "size": {"type": "integer"}, "collection": {"type": "boolean"}
        },
        "required": ["uri", "name", "collection"]
    });
    let page_of = |key: &str, item: &Value| {
        json!({
            "type": "object",
            "properties": {key: {"type": "array", "items": item}, "nextCursor": {"type": "string"}},
            "required": [key]
        })
    };
    json!([
        {
            "name": "list_resources",
            "title": "List resources",
            "description": format!(
                "Lists the resources this server offers (files, database rows, repository \
                 files…): everything, or the children of the collection `uri`. At most {} per \
                 call; pass `cursor` from the previous result to go on. `filter` keeps only \
                 names or URIs matching a glob such as `*.md`.", config.page),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "description": "A collection to list the children of."},
                    "cursor": {"type": "string", "description": "Where the previous call stopped."},
                    "filter": {"type": "string", "description": "A glob on names and URIs, e.g. *.md"}
                }
            },
            "outputSchema": page_of("resources", &resource_item),
            "annotations": read_only
        },
        {
            "name": "read_resource",
            "title": "Read a resource",
            "description": format!(
                "Reads the resource `uri`. Text comes back {} characters at a time: the result \
                 says where it was cut, and `offset` reads on from there. A resource offered \
                 in several formats is read in the first text one unless `mime_type` names \
                 another.", config.max_text),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "description": "The resource's URI."},
                    "mime_type": {"type": "string", "description": "One of the formats the resource is offered in."},
                    "offset": {"type": "integer", "minimum": 0, "description": "The first character to return (default 0)."},
                    "length": {"type": "integer", "minimum": 1, "description": format!("How many characters to return (at most {}).", config.max_text)}
                },
                "required": ["uri"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "uri": {"type": "string"}, "mimeType": {"type": "string"},
                    "formats": {"type": "array", "items": {"type": "string"}},
                    "offset": {"type": "integer"}, "returned": {"type": "integer"},
                    "total": {"type": "integer"}, "nextOffset": {"type": "integer"},
                    "size": {"type": "integer"}, "collection": {"type": "boolean"}
                },
                "required": ["uri", "formats"]
            },
            "annotations": read_only
        },
        {
            "name": "search_resources",
            "title": "Search resources",
            "description": format!(
                "Finds resources whose name, title, URI or description contains every word of \
                 `query` (case-insensitive). At most {} results per call; pass `cursor` to go \
                 on.", config.page),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
                    "cursor": {"type": "string", "description": "Where the previous call stopped."}
                },
                "required": ["query"]
            },
            "outputSchema": page_of("resources", &resource_item),
            "annotations": read_only
        },
        {
            "name": "list_resource_templates",
            "title": "List resource templates",
            "description": "Lists the URI templates of resources that exist without being \
                listed (e.g. file:///{+path}): fill one in and read the URI with read_resource.",
            "inputSchema": {
                "type": "object",
                "properties": {"cursor": {"type": "string", "description": "Where the previous call stopped."}}
            },
            "outputSchema": page_of("resourceTemplates", &json!({
                "type": "object",
                "properties": {
                    "uriTemplate": {"type": "string"}, "name": {"type": "string"},
                    "title": {"type": "string"}, "description": {"type": "string"},
                    "mimeType": {"type": "string"}
                },
                "required": ["uriTemplate", "name"]
            })),
            "annotations": read_only
        }
    ])
}

/// `tools/list`.
pub(super) async fn list(
    srv: Server,
    ctx: RequestContext,
    _p: ExtensionParams,
) -> Result<ExtensionResult, RequestError> {
    let config = srv.tools_config()?;
    let mut result = json!({"tools": definitions(config)});
    // The tools change only with the server: cached like the templates.
    let (ttl_ms, scope) =
        handlers::cache_fields(ctx.protocol_version(), srv.config().templates_cache);
    if let (Some(ttl_ms), Some(scope)) = (ttl_ms, scope) {
        result["ttlMs"] = ttl_ms.into();
        result["cacheScope"] = json!(scope);
    }
    Ok(ExtensionResult(result))
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
    Ok(ExtensionResult(result))
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

/// A resource as a tool result item.
fn item(r: &Resource) -> Value {
    let mut o = Map::new();
    o.insert("uri".into(), r.uri.clone().into());
    o.insert("name".into(), r.name.clone().into());
    for (key, value) in [
        ("title", &r.title),
        ("description", &r.description),
        ("mimeType", &r.mime_type),
    ] {
        if let Some(v) = value {
            o.insert(key.into(), v.clone().into());
        }
    }
    if let Some(size) = r.size {
        o.insert("size".into(), size.into());
    }
    o.insert("collection".into(), r.is_collection().into());
    Value::Object(o)
}

/// A `resource_link` content block for `item`.
fn link(item: &Value) -> Value {
    let mut link = item.as_object().cloned().unwrap_or_default();
    link.remove("collection");
    link.insert("type".into(), "resource_link".into());
    Value::Object(link)
}

/// The compact table of a page of items, and what to do next.
fn table(items: &[Value], next: Option<&str>, empty: &str) -> String {
    if items.is_empty() && next.is_none() {
        return empty.to_owned();
    }
    let mut out = String::new();
    for i in items {
        let kind = if i["collection"] == true {
            "dir"
        } else {
            "doc"
        };
        let mime = i["mimeType"].as_str().unwrap_or("-");
        let size = i["size"].as_u64().map_or("-".to_owned(), |s| s.to_string());
        // Names come from served content: a line break or tab in one must not forge rows.
        let title = i["title"]
            .as_str()
            .or(i["name"].as_str())
            .unwrap_or_default();
        out.push_str(&format!(
            "{kind}\t{}\t{}\t{size}\t{}\n",
            i["uri"].as_str().unwrap_or_default(),
            one_line(mime),
            one_line(title)
        ));
    }
    if let Some(c) = next {
        out.push_str(&format!("More follow: call again with cursor \"{c}\".\n"));
    }
    out
}

/// `text` with its control characters (line breaks, tabs, escapes) shown as `\u{…}`.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A page of items as a tool result.
fn page_result(key: &str, items: Vec<Value>, next: Option<String>, text: String) -> Value {
    let mut content = vec![json!({"type": "text", "text": Value::String(text)})];
    if key == "resources" {
        content.extend(items.iter().map(link));
    }
    let mut structured = Value::Object(Map::from_iter([(key.to_owned(), Value::Array(items))]));
    if let Some(c) = next {
        structured["nextCursor"] = c.into();
    }
    json!({"content": content, "structuredContent": structured})
}

/// Walks the listing (of `parent`, or everything) from `cursor`, keeping what `keep`
/// accepts: at most `page` kept, at most `scan` examined. Returns the kept items and where
/// to go on.
async fn scan(
    srv: &Server,
    ctx: &RequestContext,
    config: &ToolsConfig,
    parent: Option<&str>,
    mut cursor: Option<String>,
    keep: impl Fn(&Resource) -> bool,
) -> Result<(Vec<Value>, Option<String>), ToolError> {
    let mut kept = Vec::new();
    let (mut examined, mut calls) = (0, 0);
    loop {
        // Pages no larger than what is still wanted, so the cursor lands exactly where
        // this call stops.
        let want = config.page - kept.len();
        let limit = want.min(config.scan - examined).max(1);
        let (page, next, _) = handlers::listing(srv, ctx, parent, cursor.as_deref(), limit).await?;
        examined += page.len();
        calls += 1;
        for listed in &page {
            if let Some(r) = listed.to_resource()
                && config.offers(&r.uri)
                && keep(&r)
            {
                kept.push(item(&r));
            }
        }
        cursor = next;
        // Providers may return short (even empty) pages: the calls are bounded too.
        if cursor.is_none()
            || kept.len() >= config.page
            || examined >= config.scan
            || calls >= MAX_CALLS
        {
            return Ok((kept, cursor));
        }
    }
}

async fn list_resources(
    srv: &Server,
    ctx: &RequestContext,
    config: &ToolsConfig,
    args: &Map<String, Value>,
) -> Outcome {
    let parent = string_arg(args, "uri")?
        .map(|u| uri_arg(srv, config, u))
        .transpose()?;
    let cursor = string_arg(args, "cursor")?.map(str::to_owned);
    let filter = match string_arg(args, "filter")? {
        None => None,
        Some(pattern) => Some(glob(pattern)?),
    };
    let (items, next) = scan(srv, ctx, config, parent.as_deref(), cursor, |r| {
        filter
            .as_ref()
            .is_none_or(|g| g.is_match(&r.name) || g.is_match(&r.uri))
    })
    .await?;
    let text = table(&items, next.as_deref(), "No resources.");
    Ok(page_result("resources", items, next, text))
}

fn glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::Argument(format!("`filter` is not a glob: {e}")))
}

async fn search_resources(
    srv: &Server,
    ctx: &RequestContext,
    config: &ToolsConfig,
    args: &Map<String, Value>,
) -> Outcome {
    let query = string_arg(args, "query")?.unwrap_or_default();
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return Err(ToolError::Argument(
            "`query` needs at least one word".into(),
        ));
    }
    // A cursor continues the same search only.
    let scope = words.join(" ");
    let sealer = &srv.state.sealer;
    let mounts = &srv.state.router.mounts;
    // A position is empty for "the start of this mount", else 1 and the provider's bytes.
    let (mut index, mut after) = match string_arg(args, "cursor")? {
        None => (0u16, None),
        Some(c) => {
            let (m, inner) = sealer
                .open(c, ListKind::Search, &scope)
                .map_err(RequestError::from)?;
            let after = match inner.split_first() {
                None => None,
                Some((1, rest)) => Some(rest.to_vec()),
                Some(_) => return Err(RequestError::from(InvalidCursor).into()),
            };
            if usize::from(m) >= mounts.len() {
                return Err(RequestError::from(InvalidCursor).into());
            }
            (m, after)
        }
    };
    let (mut kept, mut examined, mut calls) = (Vec::new(), 0, 0);
    let mut next = None;
    while let Some(mount) = mounts.get(usize::from(index)) {
        let want = config.page - kept.len();
        let req = SearchRequest {
            words: &words,
            after: after.as_deref(),
            limit: want,
        };
        calls += 1;
        let page = match mount.provider.search(ctx, req).await? {
            Some(page) => page,
            None => {
                // The provider does not search: scan its listing, within the bound.
                let list = ListRequest {
                    parent: None,
                    after: after.as_deref(),
                    limit: want.min(config.scan - examined).max(1),
                };
                let mut page = mount.provider.list(ctx, list).await?;
                examined += page.resources.len();
                page.resources
                    .retain(|l| l.to_resource().is_some_and(|r| req.matches_resource(&r)));
                page
            }
        };
        kept.extend(
            page.resources
                .iter()
                .filter_map(Listed::to_resource)
                .filter(|r| config.offers(&r.uri))
                .map(|r| item(&r)),
        );
        let done = kept.len() >= config.page || examined >= config.scan || calls >= MAX_CALLS;
        match page.next {
            Some(pos) => {
                handlers::check_position(&pos)?;
                if done {
                    let mut inner = Vec::with_capacity(pos.len() + 1);
                    inner.push(1);
                    inner.extend_from_slice(&pos);
                    next = Some(sealer.seal(ListKind::Search, &scope, index, &inner));
                    break;
                }
                after = Some(pos);
            }
            None => {
                index += 1;
                after = None;
                if done {
                    if usize::from(index) < mounts.len() {
                        next = Some(sealer.seal(ListKind::Search, &scope, index, &[]));
                    }
                    break;
                }
            }
        }
    }
    let empty = format!("Nothing matches {query:?}.");
    let text = table(&kept, next.as_deref(), &empty);
    Ok(page_result("resources", kept, next, text))
}

async fn list_resource_templates(
    srv: &Server,
    ctx: &RequestContext,
    config: &ToolsConfig,
    args: &Map<String, Value>,
) -> Outcome {
    let cursor = string_arg(args, "cursor")?.map(str::to_owned);
    let result = handlers::templates(
        srv.clone(),
        ctx.clone(),
        ListResourceTemplatesParams { cursor, meta: None },
    )
    .await?;
    // A template whose fixed start lies in an excluded URI only names what is excluded.
    let items: Vec<Value> = result
        .resource_templates
        .iter()
        .filter(|t| config.offers(t.uri_template.split('{').next().unwrap_or_default()))
        .take(config.page.max(1))
        .map(|t| {
            let mut o = json!({"uriTemplate": t.uri_template, "name": t.name});
            for (key, value) in [
                ("title", &t.title),
                ("description", &t.description),
                ("mimeType", &t.mime_type),
            ] {
                if let Some(v) = value {
                    o[key] = v.clone().into();
                }
            }
            o
        })
        .collect();
    let mut text = String::new();
    for t in &items {
        let about = t["description"]
            .as_str()
            .or(t["title"].as_str())
            .or(t["name"].as_str())
            .unwrap_or_default();
        text.push_str(&format!(
            "{}\t{}\n",
            one_line(t["uriTemplate"].as_str().unwrap_or_default()),
            one_line(about)
        ));
    }
    if text.is_empty() {
        text = "No templates.".into();
    }
    Ok(page_result(
        "resourceTemplates",
        items,
        result.next_cursor,
        text,
    ))
}

async fn read_resource(
    srv: &Server,
    ctx: &RequestContext,
    config: &ToolsConfig,
    args: &Map<String, Value>,
) -> Outcome {
    let Some(uri) = string_arg(args, "uri")? else {
        return Err(ToolError::Argument("`uri` is required".into()));
    };
    let wanted = string_arg(args, "mime_type")?;
    let offset = count_arg(args, "offset")?.unwrap_or(0);
    let length = count_arg(args, "length")?
        .unwrap_or(config.max_text)
        .clamp(1, config.max_text);
    let uri = uri_arg(srv, config, uri)?;
    let read = handlers::read(
        srv.clone(),
        ctx.clone(),
        ReadResourceParams {
            uri: uri.clone(),
            input_responses: None,
            request_state: None,
            meta: None,
        },
    )
    .await?;
    let formats: Vec<String> = read
        .contents
        .iter()
        .filter(|c| c.resource.uri == uri)
        .filter_map(|c| c.resource.mime_type.clone())
        .collect();
    let documents: Vec<_> = read
        .contents
        .iter()
        .filter(|c| c.resource.uri == uri)
        .collect();
    if documents.is_empty() {
        // A collection: what it holds is listed, not read.
        let text = format!(
            "{uri} is a collection: list what it holds with list_resources and uri \"{uri}\"."
        );
        return Ok(json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"uri": uri, "formats": [], "collection": true}
        }));
    }
    let chosen = match wanted {
        Some(m) => documents
            .iter()
            .find(|c| c.resource.mime_type.as_deref() == Some(m))
            .ok_or_else(|| {
                ToolError::Argument(format!(
                    "{uri} is not offered as {m}; it is offered as {}",
                    formats.join(", ")
                ))
            })?,
        None => documents
            .iter()
            .find(|c| matches!(c.body, Body::Text(_)))
            .unwrap_or(&documents[0]),
    };
    let mime = chosen.resource.mime_type.clone();
    let others: Vec<&String> = formats
        .iter()
        .filter(|f| Some(*f) != mime.as_ref())
        .collect();
    let mut notes = Vec::new();
    if !others.is_empty() {
        notes.push(format!(
            "Also offered as {} (pass mime_type to read it so).",
            others
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut embedded = json!({"uri": uri});
    if let Some(m) = &mime {
        embedded["mimeType"] = m.clone().into();
    }
    let mut structured = json!({"uri": uri, "formats": formats});
    if let Some(m) = &mime {
        structured["mimeType"] = m.clone().into();
    }
    match &chosen.body {
        Body::Text(text) => {
            let (part, total) = chars(text, offset, length);
            let Some(part) = part else {
                return Err(ToolError::Argument(format!(
                    "`offset` {offset} is past the end: {uri} has {total} characters"
                )));
            };
            let returned = part.chars().count();
            let end = offset + returned;
            embedded["text"] = part.into();
            structured["offset"] = offset.into();
            structured["returned"] = returned.into();
            structured["total"] = total.into();
            if end < total {
                structured["nextOffset"] = end.into();
                notes.insert(
                    0,
                    format!(
                        "Cut at character {end} of {total}. To read on, call read_resource with \
                         uri \"{uri}\" and offset {end}."
                    ),
                );
            }
        }
        Body::Blob(bytes) => {
            structured["size"] = bytes.len().into();
            if bytes.len() > config.max_blob {
                let what = mime.as_deref().unwrap_or("binary content");
                let text = format!(
                    "{uri} is {what} of {} bytes, more than the {} bytes a tool result carries.",
                    bytes.len(),
                    config.max_blob
                );
                let mut content = vec![json!({"type": "text", "text": text})];
                content.extend(
                    notes
                        .into_iter()
                        .map(|n| json!({"type": "text", "text": n})),
                );
                return Ok(json!({"content": content, "structuredContent": structured}));
            }
            use base64::Engine as _;
            embedded["blob"] = base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into();
        }
    }
    let mut content = vec![json!({"type": "resource", "resource": embedded})];
    content.extend(
        notes
            .into_iter()
            .map(|n| json!({"type": "text", "text": n})),
    );
    Ok(json!({"content": content, "structuredContent": structured}))
}

/// At most `length` characters of `text` from character `offset` (`None` if `offset` is
/// past the end, except at an empty end), and the number of characters in all.
fn chars(text: &str, offset: usize, length: usize) -> (Option<&str>, usize) {
    let total = text.chars().count();
    if offset > total || offset == total && total > 0 {
        return (None, total);
    }
    let start = text
        .char_indices()
        .nth(offset)
        .map_or(text.len(), |(i, _)| i);
    let rest = &text[start..];
    let end = rest
        .char_indices()
        .nth(length)
        .map_or(rest.len(), |(i, _)| i);
    (Some(&rest[..end]), total)
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
    fn names_cannot_forge_table_rows() {
        assert_eq!(one_line("a\tb\nc\u{1b}[31m"), "a\\u{9}b\\u{a}c\\u{1b}[31m");
        assert_eq!(one_line("plain é"), "plain é");
    }

    #[test]
    fn text_is_cut_on_character_boundaries() {
        assert_eq!(chars("héllo", 0, 2), (Some("hé"), 5));
        assert_eq!(chars("héllo", 1, 10), (Some("éllo"), 5));
        assert_eq!(chars("héllo", 4, 10), (Some("o"), 5));
        assert_eq!(chars("héllo", 5, 10), (None, 5));
        assert_eq!(chars("", 0, 10), (Some(""), 0));
    }
}
