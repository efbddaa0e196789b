//! Reading a resource from the page: its contents prepared for display (text inline up to
//! [`INLINE_TEXT`], Markdown rendered and sanitised, CSV as a table, bytes as hex), the
//! raw contents by their `href`, and a resource's metadata.
//!
//! Invariant: raw contents (`/api/content/…`) are only ever sent as `text/plain` or
//! `application/octet-stream` attachments under a sandboxing policy: whatever a server
//! calls them, they never become a document of this origin.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use rsrc::protocol::Body as Contents;
use rsrc::protocol::resources::ReadResourceResult;
use rsrc_client::ClientError;
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{ApiError, ApiResult, App, call, json_of};
use super::guard::CONTENT_CSP;
use super::render::{self, View};

/// Largest text sent inside a read's JSON; a longer one is fetched from its `href`.
const INLINE_TEXT: usize = 256 * 1024;

#[derive(Deserialize)]
pub(super) struct UriQuery {
    server: usize,
    uri: String,
}

/// One entry of a read, prepared for the page.
fn entry(read: u64, index: usize, c: &rsrc::protocol::ResourceContents) -> Value {
    let (text, bytes) = match &c.body {
        Contents::Text(t) => (Some(t.as_str()), t.as_bytes()),
        Contents::Blob(b) => (None, b.as_ref()),
    };
    let view = render::view(
        c.resource.mime_type.as_deref(),
        &c.resource.uri,
        text.is_some(),
    );
    let mut e = json!({
        "index": index,
        "resource": &c.resource,
        "kind": if text.is_some() { "text" } else { "blob" },
        "size": bytes.len(),
        "view": view,
        "href": format!("/api/content/{read}/{index}"),
    });
    if let Some(text) = text {
        if text.len() <= INLINE_TEXT {
            e["text"] = json!(text);
        }
        match view {
            View::Markdown if text.len() <= render::MARKDOWN_MAX => {
                e["html"] = json!(render::markdown(text));
            }
            View::Csv if text.len() <= render::CSV_MAX => e["table"] = json_of(&render::csv(text)),
            _ => {}
        }
    } else {
        e["hex"] = json!(render::hex(bytes));
    }
    e
}

/// The entry shown first: the first, unless only another one can be shown as text (a PDF
/// and its text).
pub(super) fn first_shown(read: &ReadResourceResult) -> usize {
    let first_is_bytes = read
        .contents
        .first()
        .is_some_and(|c| c.body.as_text().is_none());
    if first_is_bytes
        && let Some(i) = read
            .contents
            .iter()
            .position(|c| c.body.as_text().is_some())
    {
        let first = &read.contents[0].resource;
        if render::view(first.mime_type.as_deref(), &first.uri, false) != View::Image {
            return i;
        }
    }
    0
}

pub(super) async fn read(State(app): State<App>, Query(q): Query<UriQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let result = Arc::new(call(slot, client.read(&q.uri)).await?);
    let id = app.reads.keep(Arc::clone(&result));
    let prepared = Arc::clone(&result);
    // Rendering a large document takes a while: off the runtime's threads.
    let entries = tokio::task::spawn_blocking(move || {
        prepared
            .contents
            .iter()
            .enumerate()
            .map(|(i, c)| entry(id, i, c))
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| ApiError::bad(format!("preparing the contents failed: {e}")))?;
    Ok(Json(json!({
        "uri": q.uri,
        "contents": entries,
        "shown": first_shown(&result),
        "ttlMs": result.ttl_ms,
        "cacheScope": result.cache_scope,
        "resultType": result.result_type,
        "_meta": result.meta,
    })))
}

#[derive(Deserialize)]
pub(super) struct ContentQuery {
    #[serde(default)]
    download: Option<String>,
}

/// A file name for a download: the URI's last segment, reduced to safe characters.
fn file_name(uri: &str) -> String {
    let path = uri.split_once(':').map_or(uri, |(_, path)| path);
    let last = path
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let safe: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if safe.trim_matches(['.', '_']).is_empty() {
        "resource".into()
    } else {
        safe
    }
}

pub(super) async fn content(
    State(app): State<App>,
    Path((read, index)): Path<(u64, usize)>,
    Query(q): Query<ContentQuery>,
) -> Response {
    let Some(entry) = app
        .reads
        .get(read)
        .and_then(|r| r.contents.get(index).cloned())
    else {
        return ApiError::not_found("this content is no longer kept: read the resource again")
            .into_response();
    };
    let (content_type, bytes) = match entry.body {
        Contents::Text(t) => ("text/plain; charset=utf-8", t.into_bytes()),
        Contents::Blob(b) => ("application/octet-stream", b),
    };
    let disposition = if q.download.is_some() {
        format!(
            "attachment; filename=\"{}\"",
            file_name(&entry.resource.uri)
        )
    } else {
        "attachment".to_owned()
    };
    let mut r = Response::new(Body::from(bytes));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_CSP),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    r
}

pub(super) async fn metadata(State(app): State<App>, Query(q): Query<UriQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    match client.metadata(&q.uri).await {
        Ok(resource) => Ok(Json(json!({"resource": resource}))),
        // Not declared (rsrc's SEP-2093 extension), or declared but unknown after all.
        Err(e) if matches!(e, ClientError::NotOffered(_)) || e.is_method_not_found() => {
            Ok(Json(json!({"unsupported": true})))
        }
        Err(e) => {
            slot.failed(&e);
            Err(e.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_are_reduced_to_safe_characters() {
        assert_eq!(file_name("file:///docs/report.pdf"), "report.pdf");
        assert_eq!(
            file_name("x:///a/\"evil\r\nname\".sh?x=1"),
            "_evil__name_.sh"
        );
        assert_eq!(file_name("x:///"), "resource");
        assert_eq!(file_name("x:///.."), "resource");
    }
}
