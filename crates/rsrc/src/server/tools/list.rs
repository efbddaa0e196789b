//! `list_resources` and `list_resource_templates`: the listing walked through the
//! resource handlers, filtered and cut to a page.
//!
//! Invariants: at most `page` items kept, at most `scan` resources examined and
//! [`MAX_CALLS`] provider calls per call, each page asked no larger than what is still
//! wanted so that the cursor lands where the call stops; excluded URIs are never listed,
//! nor templates whose fixed start lies in one.

use globset::{Glob, GlobMatcher};
use rsrc_protocol::resources::{ListResourceTemplatesParams, Resource};
use serde_json::{Map, Value, json};

use super::shape::{item, one_line, page_result, table};
use super::{MAX_CALLS, Outcome, ToolError, ToolsConfig, string_arg, uri_arg};
use crate::context::RequestContext;
use crate::server::{Server, handlers};

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

pub(super) async fn list_resources(
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

pub(super) async fn list_resource_templates(
    srv: &Server,
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
