//! `resources/list` (the default listing and a collection's children),
//! `resources/directory/read` and `resources/templates/list`.
//!
//! Invariants: a provider only sees cursor positions this server sealed for the same
//! listing; a page assembled from several providers carries the shortest freshness and
//! the narrowest scope of their hints.

use rsrc_protocol::resources::{
    ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult,
};
use rsrc_protocol::{CacheHint, CacheScope};

use super::{canonicalize, check_position, mount_for};
use crate::context::RequestContext;
use crate::cursor::{InvalidCursor, ListKind};
use crate::error::RequestError;
use crate::provider::{ListEntry, ListRequest};
use crate::server::Server;

/// The hint of a page assembled from several providers: the shortest freshness and the
/// narrowest scope.
fn merge_hints(a: Option<CacheHint>, b: Option<CacheHint>) -> Option<CacheHint> {
    match (a, b) {
        (Some(a), Some(b)) => Some(CacheHint {
            ttl_ms: a.ttl_ms.min(b.ttl_ms),
            scope: if a.scope == CacheScope::Private || b.scope == CacheScope::Private {
                CacheScope::Private
            } else {
                CacheScope::Public
            },
        }),
        (a, b) => a.or(b),
    }
}

pub(in crate::server) async fn list(
    srv: Server,
    ctx: RequestContext,
    mut p: ListResourcesParams,
) -> Result<ListResourcesResult<ListEntry>, RequestError> {
    if let Some(uri) = &mut p.uri {
        canonicalize(&srv, uri)?;
    }
    let limit = srv.state.config.page_size;
    let (mut resources, next_cursor, hint) =
        listing(&srv, &ctx, p.uri.as_deref(), p.cursor.as_deref(), limit).await?;
    resources.iter_mut().for_each(ListEntry::normalize_kind);
    let hint = hint.unwrap_or(srv.state.config.list_cache);
    Ok(ListResourcesResult {
        resources,
        next_cursor,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    })
}

/// `resources/directory/read` (skills extension): `resources/list` with a required `uri`.
pub(in crate::server) async fn directory_read(
    srv: Server,
    ctx: RequestContext,
    p: ListResourcesParams,
) -> Result<ListResourcesResult<ListEntry>, RequestError> {
    if p.uri.is_none() {
        return Err(RequestError::InvalidParams(
            "resources/directory/read needs the directory's \"uri\"".into(),
        ));
    }
    list(srv, ctx, p).await
}

pub(in crate::server) type Listing = (Vec<ListEntry>, Option<String>, Option<CacheHint>);

/// A page of at most `limit` resources: the children of the (canonical) `uri`, or the
/// default listing; `cursor` is one this server sealed for the same listing.
pub(in crate::server) async fn listing(
    srv: &Server,
    ctx: &RequestContext,
    uri: Option<&str>,
    cursor: Option<&str>,
    limit: usize,
) -> Result<Listing, RequestError> {
    match uri {
        Some(uri) => list_children(srv, ctx, uri, cursor, limit).await,
        None => list_default(srv, ctx, cursor, limit).await,
    }
}

/// The default listing: every mount in order, a page filled across mounts.
async fn list_default(
    srv: &Server,
    ctx: &RequestContext,
    cursor: Option<&str>,
    limit: usize,
) -> Result<Listing, RequestError> {
    let mounts = &srv.state.router.mounts;
    let sealer = &srv.state.sealer;
    // A position is empty for "the start of this mount", else 1 followed by the
    // provider's bytes.
    let (mut index, mut after) = match cursor {
        None => (0u16, None),
        Some(c) => {
            let (m, inner) = sealer.open(c, ListKind::Resources, "")?;
            let after = match inner.split_first() {
                None => None,
                Some((1, rest)) => Some(rest.to_vec()),
                Some(_) => return Err(InvalidCursor.into()),
            };
            if usize::from(m) >= mounts.len() {
                return Err(InvalidCursor.into());
            }
            (m, after)
        }
    };
    let mut resources = Vec::new();
    let mut hint = None;
    let mut next = None;
    while let Some(mount) = mounts.get(usize::from(index)) {
        let page = mount
            .provider
            .list(
                ctx,
                ListRequest {
                    parent: None,
                    after: after.as_deref(),
                    limit: limit - resources.len(),
                },
            )
            .await?;
        hint = merge_hints(hint, page.cache);
        resources.extend(page.resources);
        if let Some(pos) = page.next {
            check_position(&pos)?;
            let mut inner = Vec::with_capacity(pos.len() + 1);
            inner.push(1);
            inner.extend_from_slice(&pos);
            next = Some(sealer.seal(ListKind::Resources, "", index, &inner));
            break;
        }
        index += 1;
        after = None;
        if resources.len() >= limit {
            if usize::from(index) < mounts.len() {
                next = Some(sealer.seal(ListKind::Resources, "", index, &[]));
            }
            break;
        }
    }
    Ok((resources, next, hint))
}

/// The children of one collection (SEP-2093 `resources/list` with `uri`).
async fn list_children(
    srv: &Server,
    ctx: &RequestContext,
    uri: &str,
    cursor: Option<&str>,
    limit: usize,
) -> Result<Listing, RequestError> {
    let (index, mount) = mount_for(srv, uri)?;
    let sealer = &srv.state.sealer;
    let after = match cursor {
        None => None,
        Some(c) => {
            let (m, inner) = sealer.open(c, ListKind::Children, uri)?;
            if m != index {
                return Err(InvalidCursor.into());
            }
            Some(inner)
        }
    };
    let page = mount
        .provider
        .list(
            ctx,
            ListRequest {
                parent: Some(uri),
                after: after.as_deref(),
                limit,
            },
        )
        .await?;
    let next = match page.next {
        Some(pos) => {
            check_position(&pos)?;
            Some(sealer.seal(ListKind::Children, uri, index, &pos))
        }
        None => None,
    };
    Ok((page.resources, next, page.cache))
}

pub(in crate::server) async fn templates(
    srv: Server,
    _ctx: RequestContext,
    p: ListResourceTemplatesParams,
) -> Result<ListResourceTemplatesResult, RequestError> {
    let all = &srv.state.templates;
    let start = match p.cursor.as_deref() {
        None => 0,
        Some(c) => {
            let (_, inner) = srv.state.sealer.open(c, ListKind::Templates, "")?;
            let offset = <[u8; 4]>::try_from(inner.as_slice()).map_err(|_| InvalidCursor)?;
            let offset = u32::from_be_bytes(offset) as usize;
            if offset > all.len() {
                return Err(InvalidCursor.into());
            }
            offset
        }
    };
    let end = all.len().min(start + srv.state.config.page_size);
    let next_cursor = (end < all.len()).then(|| {
        srv.state
            .sealer
            .seal(ListKind::Templates, "", 0, &(end as u32).to_be_bytes())
    });
    let hint = srv.state.config.templates_cache;
    Ok(ListResourceTemplatesResult {
        resource_templates: all[start..end].iter().map(|(_, t)| t.clone()).collect(),
        next_cursor,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    })
}
