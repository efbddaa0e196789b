//! What `tools/list` says of each tool: its name, description, input and output schemas
//! and annotations.
//!
//! Invariants: every tool is read-only, idempotent and closed-world; the limits the
//! descriptions name are the configured ones; each `outputSchema` describes the
//! `structuredContent` its tool returns.

use serde_json::{Value, json};

use crate::server::tools_config::ToolsConfig;

/// The tools, as `tools/list` returns them.
pub(super) fn definitions(config: &ToolsConfig) -> Value {
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
                 names matching a glob such as `*.md`, or URIs when it holds a `/` \
                 (`file:///docs/**`).", config.page),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "description": "A collection to list the children of."},
                    "cursor": {"type": "string", "description": "Where the previous call stopped."},
                    "filter": {"type": "string", "description": "A glob on names (*.md), or on URIs when it holds a / (file:///docs/**)"}
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
