//! The context basket's export: the resources in it, read now, as one bundle of embedded
//! resources (JSON, MCP's `{"type": "resource", "resource": …}` blocks) or as Markdown.
//!
//! Invariants: a bundle holds at most [`BUNDLE_ITEMS`] resources and [`BUNDLE_BYTES`] of
//! contents (what does not fit is listed as left out, never cut in the middle); a resource
//! that cannot be read is listed with its error, and the rest are still exported; a
//! document is exported once, in the format the page shows first (a PDF's text, say), a
//! collection with every entry its read returned.

use base64::Engine as _;
use http::{HeaderValue, header};
use rsrc::protocol::resources::ReadResourceResult;
use rsrc::protocol::{Body, ResourceContents};
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{ApiError, App, call};
use super::reads::first_shown;
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};

/// Resources in one bundle.
const BUNDLE_ITEMS: usize = 500;
/// Bytes of contents in one bundle.
const BUNDLE_BYTES: usize = 64 * 1024 * 1024;

#[derive(Deserialize)]
pub(super) struct Item {
    server: usize,
    uri: String,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Format {
    Json,
    Markdown,
}

#[derive(Deserialize)]
pub(super) struct Request {
    format: Format,
    items: Vec<Item>,
}

/// What was read for one item.
struct Read {
    server: String,
    uri: String,
    outcome: Result<Vec<ResourceContents>, String>,
}

/// The entries of a read that go into a bundle.
fn exported(read: ReadResourceResult, uri: &str) -> Vec<ResourceContents> {
    let document = read.contents.iter().all(|c| c.resource.uri == uri);
    if document && !read.contents.is_empty() {
        let shown = first_shown(&read);
        read.contents.into_iter().nth(shown).into_iter().collect()
    } else {
        read.contents
    }
}

pub(super) async fn export(State(app): State<App>, Json(request): Json<Request>) -> Response {
    match build(&app, request).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn build(app: &App, request: Request) -> Result<Response, ApiError> {
    if request.items.is_empty() || request.items.len() > BUNDLE_ITEMS {
        return Err(ApiError::bad(format!(
            "a bundle holds 1 to {BUNDLE_ITEMS} resources"
        )));
    }
    let mut reads = Vec::with_capacity(request.items.len());
    let mut bytes = 0usize;
    for item in request.items {
        let slot = app
            .servers
            .get(item.server)
            .ok_or_else(|| ApiError::bad(format!("there is no server {}", item.server)))?;
        let server = slot.label().to_owned();
        let outcome = if bytes >= BUNDLE_BYTES {
            Err(format!(
                "left out: the bundle is full ({BUNDLE_BYTES} bytes)"
            ))
        } else {
            match slot.client() {
                Err(e) => Err(ApiError::from(e).message()),
                Ok(client) => match call(slot, client.read(&item.uri)).await {
                    Err(e) => Err(e.message()),
                    Ok(read) => {
                        let entries = exported(read, &item.uri);
                        let size: usize = entries.iter().map(|c| c.body.len()).sum();
                        if bytes + size > BUNDLE_BYTES {
                            Err(format!(
                                "left out: it would make the bundle larger than {BUNDLE_BYTES} bytes"
                            ))
                        } else {
                            bytes += size;
                            Ok(entries)
                        }
                    }
                },
            }
        };
        reads.push(Read {
            server,
            uri: item.uri,
            outcome,
        });
    }
    let (body, content_type, name) = match request.format {
        Format::Json => (as_json(&reads), "application/json", "context.json"),
        Format::Markdown => (
            as_markdown(&reads),
            "text/markdown; charset=utf-8",
            "context.md",
        ),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(r)
}

fn as_json(reads: &[Read]) -> String {
    let mut resources = Vec::new();
    let mut errors = Vec::new();
    for r in reads {
        match &r.outcome {
            Ok(entries) => {
                for c in entries {
                    let mut resource = json!({"uri": c.resource.uri});
                    if let Some(m) = &c.resource.mime_type {
                        resource["mimeType"] = json!(m);
                    }
                    match &c.body {
                        Body::Text(t) => resource["text"] = json!(t.as_str()),
                        Body::Blob(b) => {
                            resource["blob"] =
                                json!(base64::engine::general_purpose::STANDARD.encode(b));
                        }
                    }
                    resources.push(json!({
                        "type": "resource",
                        "resource": resource,
                        "_meta": {"rsrc/server": r.server},
                    }));
                }
            }
            Err(e) => errors.push(json!({"server": r.server, "uri": r.uri, "error": e})),
        }
    }
    let mut out: Value = json!({"resources": resources});
    if !errors.is_empty() {
        out["errors"] = json!(errors);
    }
    serde_json::to_string_pretty(&out).unwrap_or_default()
}

/// A fence for `text`: longer than any run of backticks in it.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Text for a Markdown line: no line breaks, no backticks to end the code span.
fn inline(text: &str) -> String {
    text.replace(['\r', '\n', '`'], " ")
}

fn as_markdown(reads: &[Read]) -> String {
    let mut out = String::from("# Context\n");
    for r in reads {
        out.push_str(&format!("\n## `{}`\n\n", inline(&r.uri)));
        out.push_str(&format!("From {}.\n", inline(&r.server)));
        match &r.outcome {
            Err(e) => out.push_str(&format!("\nNot included: {}\n", inline(e))),
            Ok(entries) => {
                for c in entries {
                    let mime = c.resource.mime_type.as_deref().unwrap_or("unknown type");
                    if c.resource.uri != r.uri {
                        out.push_str(&format!("\n### `{}`\n", inline(&c.resource.uri)));
                    }
                    match &c.body {
                        Body::Text(t) => {
                            let text = t.as_str();
                            let f = fence(text);
                            let lang = mime.rsplit('/').next().unwrap_or("").trim();
                            let lang: String =
                                lang.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
                            out.push_str(&format!("\n{f}{lang}\n{text}"));
                            if !text.ends_with('\n') {
                                out.push('\n');
                            }
                            out.push_str(&format!("{f}\n"));
                        }
                        Body::Blob(b) => out.push_str(&format!(
                            "\n({}, {} bytes of binary content: not included)\n",
                            inline(mime),
                            b.len()
                        )),
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsrc::protocol::Resource;

    fn text(uri: &str, body: &str) -> ResourceContents {
        ResourceContents::text(
            Resource::new(uri, "n").with_mime_type("text/markdown"),
            body,
        )
    }

    #[test]
    fn markdown_fences_outlast_any_backticks_inside() {
        let reads = [Read {
            server: "s".into(),
            uri: "x:///a`b".into(),
            outcome: Ok(vec![text("x:///a`b", "````\ncode\n````")]),
        }];
        let md = as_markdown(&reads);
        assert!(
            md.contains("\n`````markdown\n````\ncode\n````\n`````\n"),
            "{md}"
        );
        assert!(md.contains("## `x:///a b`"), "{md}");
    }

    #[test]
    fn json_bundles_embed_resources_and_list_failures() {
        let reads = [
            Read {
                server: "s".into(),
                uri: "x:///a".into(),
                outcome: Ok(vec![
                    text("x:///a", "A"),
                    ResourceContents::blob(Resource::new("x:///b", "b"), vec![1u8, 2]),
                ]),
            },
            Read {
                server: "s".into(),
                uri: "x:///gone".into(),
                outcome: Err("not found".into()),
            },
        ];
        let v: Value = serde_json::from_str(&as_json(&reads)).unwrap();
        assert_eq!(
            v["resources"][0],
            json!({"type":"resource","resource":{"uri":"x:///a","mimeType":"text/markdown","text":"A"},"_meta":{"rsrc/server":"s"}})
        );
        assert_eq!(v["resources"][1]["resource"]["blob"], "AQI=");
        assert_eq!(v["errors"][0]["uri"], "x:///gone");
    }

    #[test]
    fn a_document_is_exported_once_a_collection_whole() {
        let doc = ReadResourceResult {
            contents: vec![
                ResourceContents::blob(
                    Resource::new("x:///r.pdf", "r").with_mime_type("application/pdf"),
                    vec![0u8],
                ),
                text("x:///r.pdf", "the text"),
            ],
            ..Default::default()
        };
        let kept = exported(doc, "x:///r.pdf");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].body.as_text(), Some("the text"));
        let collection = ReadResourceResult {
            contents: vec![text("x:///c/a", "A"), text("x:///c/b", "B")],
            ..Default::default()
        };
        assert_eq!(exported(collection, "x:///c").len(), 2);
    }
}
