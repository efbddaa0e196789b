//! `search_resources`: each mount's own search, or a scan of its listing when its
//! provider does not search, mount after mount.
//!
//! Invariants: at most `page` results, `scan` resources scanned and [`MAX_CALLS`](super::args::MAX_CALLS)
//! provider calls per call; the cursor is sealed to the search's words, so it continues
//! that search only; positions from providers are checked like the listing's; excluded
//! URIs are never found.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::args::{MAX_CALLS, Outcome, ToolError, string_arg};
use super::shape::{item, page_result, table};
use crate::context::RequestContext;
use crate::cursor::{InvalidCursor, ListKind};
use crate::error::RequestError;
use crate::provider::{ListEntry, ListRequest, SearchRequest};
use crate::server::handlers;
use crate::server::inside::ServerState;
use crate::server::tools_config::ToolsConfig;

pub(super) async fn search_resources(
    srv: &Arc<ServerState>,
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
    let sealer = srv.sealer();
    let mounts = srv.mounts();
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
                    filter: None,
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
                .filter_map(ListEntry::to_resource)
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
