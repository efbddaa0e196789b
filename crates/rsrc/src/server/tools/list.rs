//! `list_resources` and `list_resource_templates`: the listing walked through the
//! resource handlers, cut to a page; `list_resources`'s `filter` is the server's own
//! SEP-2564 filter (`crate::filter`).
//!
//! Invariants: at most `page` items kept, at most `scan` resources examined and
//! [`MAX_CALLS`](super::args::MAX_CALLS) provider calls per call, each page asked no larger than what is still
//! wanted so that the cursor lands where the call stops (a filtered listing examines at
//! most `scan` in one handler call, and the call stops there); excluded URIs are never
//! listed, nor templates whose fixed start lies in one.

use std::sync::Arc;

use rsrc_protocol::resources::{ListFilter, ListResourceTemplatesParams};
use serde_json::{Map, Value, json};

use super::args::{MAX_CALLS, Outcome, ToolError, string_arg, uri_arg};
use super::shape::{item, one_line, page_result, table};
use crate::context::RequestContext;
use crate::filter::Filter;
use crate::server::handlers;
use crate::server::inside::ServerState;
use crate::server::tools_config::ToolsConfig;

/// Walks the listing (of `parent`, or everything) from `cursor` under `filter`: at most
/// `page` kept, at most `scan` examined. Returns the kept items and where to go on.
async fn scan(
    srv: &Arc<ServerState>,
    ctx: &RequestContext,
    config: &ToolsConfig,
    parent: Option<&str>,
    mut cursor: Option<String>,
    filter: Option<&Filter>,
) -> Result<(Vec<Value>, Option<String>), ToolError> {
    let mut kept = Vec::new();
    let (mut examined, mut calls) = (0, 0);
    loop {
        // Pages no larger than what is still wanted, so the cursor lands exactly where
        // this call stops.
        let want = config.page - kept.len();
        let limit = want.min(config.scan - examined).max(1);
        let (page, next, _) =
            handlers::listing(srv, ctx, parent, cursor.as_deref(), limit, filter).await?;
        examined += page.len();
        calls += 1;
        for listed in &page {
            if let Some(r) = listed.to_resource()
                && config.offers(&r.uri)
            {
                kept.push(item(&r));
            }
        }
        cursor = next;
        // Providers may return short (even empty) pages: the calls are bounded too. A
        // filtered page has examined what one call may (`scan`), however short it is.
        if cursor.is_none()
            || filter.is_some()
            || kept.len() >= config.page
            || examined >= config.scan
            || calls >= MAX_CALLS
        {
            return Ok((kept, cursor));
        }
    }
}

pub(super) async fn list_resources(
    srv: &Arc<ServerState>,
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
        Some(pattern) => glob(pattern, config)?,
    };
    let (items, next) = scan(srv, ctx, config, parent.as_deref(), cursor, filter.as_ref()).await?;
    let text = table(&items, next.as_deref(), "No resources.");
    Ok(page_result("resources", items, next, text))
}

/// The tool's `filter`: one glob on names, or on URIs when it holds a `/`, as the
/// server's filter, examining at most `scan` resources.
fn glob(pattern: &str, config: &ToolsConfig) -> Result<Option<Filter>, ToolError> {
    let patterns = Some(vec![pattern.to_owned()]);
    let filter = if pattern.contains('/') {
        ListFilter {
            uri_patterns: patterns,
            ..ListFilter::default()
        }
    } else {
        ListFilter {
            name_patterns: patterns,
            ..ListFilter::default()
        }
    };
    match Filter::new(&filter) {
        Ok(filter) => Ok(filter.map(|f| f.with_scan(config.scan))),
        Err(e) => Err(ToolError::Argument(format!(
            "`filter` {pattern:?} is not a glob: {}",
            e.reason()
        ))),
    }
}

pub(super) async fn list_resource_templates(
    srv: &Arc<ServerState>,
    ctx: &RequestContext,
    config: &ToolsConfig,
    args: &Map<String, Value>,
) -> Outcome {
    let cursor = string_arg(args, "cursor")?.map(str::to_owned);
    let result = handlers::templates(
        srv.clone(),
        ctx.clone(),
        ListResourceTemplatesParams {
            cursor,
            filter: None,
            meta: None,
        },
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
