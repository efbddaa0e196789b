//! `read_resource`: a resource read through the resource handler, in one format, its
//! text cut into pieces a context window holds.
//!
//! Invariants: at most `max_text` characters of text per call, cut on character
//! boundaries, with a note and `nextOffset` saying where to read on; binary content over
//! `max_blob` is described, not embedded; a collection is pointed to `list_resources`;
//! a format the resource is not offered in is a bad argument naming those it is.

use std::sync::Arc;

use rsrc_protocol::Body;
use rsrc_protocol::resources::ReadResourceParams;
use serde_json::{Map, Value, json};

use super::args::{Outcome, ToolError, count_arg, string_arg, uri_arg};
use crate::context::RequestContext;
use crate::server::handlers;
use crate::server::inside::ServerState;
use crate::server::tools_config::ToolsConfig;

pub(super) async fn read_resource(
    srv: &Arc<ServerState>,
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
            let (part, total) = chars(text.as_str(), offset, length);
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
    fn text_is_cut_on_character_boundaries() {
        assert_eq!(chars("héllo", 0, 2), (Some("hé"), 5));
        assert_eq!(chars("héllo", 1, 10), (Some("éllo"), 5));
        assert_eq!(chars("héllo", 4, 10), (Some("o"), 5));
        assert_eq!(chars("héllo", 5, 10), (None, 5));
        assert_eq!(chars("", 0, 10), (Some(""), 0));
    }
}
