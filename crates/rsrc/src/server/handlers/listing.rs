//! `resources/list` (the default listing and a collection's children),
//! `resources/directory/read` and `resources/templates/list`, each optionally under a
//! SEP-2564 filter (`params.filter`, [`crate::filter`]).
//!
//! Invariants: a provider only sees cursor positions this server sealed for the same
//! listing under the same filter; a page assembled from several providers carries the
//! shortest freshness and the narrowest scope of their hints; a filtered page holds only
//! matching entries, whether or not the provider applied the filter, and costs bounded
//! work ([`FILTER_CALLS`] provider calls, [`Filter::scan`] entries examined): it may come
//! back short, even empty, with a cursor.

use rsrc_protocol::resources::{
    ListFilter, ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult,
};
use rsrc_protocol::{CacheHint, CacheScope};
use std::sync::Arc;

use super::checks::{canonicalize, check_position};
use crate::context::RequestContext;
use crate::cursor::{self, InvalidCursor, ListKind};
use crate::error::RequestError;
use crate::filter::Filter;
use crate::provider::{DynProvider, ListEntry, ListRequest};
use crate::server::fit::FitExtension;
use crate::server::inside::ServerState;

/// Most provider calls one filtered page makes (a provider that ignores the filter
/// returns pages the engine thins out, so it is asked again while the page is not full).
const FILTER_CALLS: usize = 128;

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

/// A request's filter, compiled; a pattern that breaks the rules is `-32602`.
fn compile_filter(filter: Option<&ListFilter>) -> Result<Option<Filter>, RequestError> {
    filter.map_or(Ok(None), |f| {
        Filter::new(f).map_err(|e| RequestError::InvalidParams(e.to_string()))
    })
}

/// `resources/list`. A collection's `uri` is SEP-2093's: without the extension it is an
/// unknown param, ignored, and the default listing is answered.
pub(in crate::server) async fn list(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    mut p: ListResourcesParams,
) -> Result<ListResourcesResult<ListEntry>, RequestError> {
    if !srv.serves_resource_metadata() {
        p.uri = None;
    }
    page(srv, ctx, p).await
}

/// A page of the listing `p` asks for (a collection's children when it names a `uri`).
async fn page(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    mut p: ListResourcesParams,
) -> Result<ListResourcesResult<ListEntry>, RequestError> {
    if let Some(uri) = &mut p.uri {
        canonicalize(&srv, uri)?;
    }
    let filter = compile_filter(p.filter.as_ref())?;
    let limit = srv.config().page_size;
    let (resources, next_cursor, hint) = listing(
        &srv,
        &ctx,
        p.uri.as_deref(),
        p.cursor.as_deref(),
        limit,
        filter.as_ref(),
    )
    .await?;
    let hint = hint.unwrap_or(srv.config().list_cache);
    let mut result = ListResourcesResult {
        resources,
        next_cursor,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    };
    result.fit_extension(srv.serves_resource_metadata());
    Ok(result)
}

/// `resources/directory/read` (skills extension): `resources/list` with a required `uri`.
pub(in crate::server) async fn directory_read(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    p: ListResourcesParams,
) -> Result<ListResourcesResult<ListEntry>, RequestError> {
    if p.uri.is_none() {
        return Err(RequestError::InvalidParams(
            "resources/directory/read needs the directory's \"uri\"".into(),
        ));
    }
    page(srv, ctx, p).await
}

pub(in crate::server) type Listing = (Vec<ListEntry>, Option<String>, Option<CacheHint>);

/// A page of at most `limit` resources matching `filter`: the children of the (canonical)
/// `uri`, or the default listing; `cursor` is one this server sealed for the same listing
/// under the same filter.
pub(in crate::server) async fn listing(
    srv: &ServerState,
    ctx: &RequestContext,
    uri: Option<&str>,
    cursor: Option<&str>,
    limit: usize,
    filter: Option<&Filter>,
) -> Result<Listing, RequestError> {
    let mut fill = Fill {
        filter,
        limit,
        resources: Vec::new(),
        hint: None,
        examined: 0,
        calls: 0,
    };
    let next = match uri {
        Some(uri) => list_children(srv, ctx, uri, cursor, &mut fill).await?,
        None => list_default(srv, ctx, cursor, &mut fill).await?,
    };
    Ok((fill.resources, next, fill.hint))
}

/// A page being filled, and the work it cost so far.
struct Fill<'f> {
    filter: Option<&'f Filter>,
    limit: usize,
    resources: Vec<ListEntry>,
    hint: Option<CacheHint>,
    /// Entries the providers returned (before the engine kept the matching ones).
    examined: usize,
    calls: usize,
}

impl Fill<'_> {
    /// Whether the page is done: full, or filtered and out of work.
    fn done(&self) -> bool {
        self.resources.len() >= self.limit
            || self
                .filter
                .is_some_and(|f| self.examined >= f.scan() || self.calls >= FILTER_CALLS)
    }

    /// Lists `provider` (the children of `parent`, or its default listing) from `after`
    /// into the page; returns the provider's position where to go on, `None` at its end.
    /// Unfiltered, that is one call. Filtered, the provider is asked again while the
    /// page is not done and the provider's page was full: a short page with a position
    /// says the provider bounded its own work.
    async fn from(
        &mut self,
        provider: &dyn DynProvider,
        ctx: &RequestContext,
        parent: Option<&str>,
        mut after: Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, RequestError> {
        loop {
            let want = self.limit.saturating_sub(self.resources.len()).max(1);
            let req = ListRequest {
                parent,
                after: after.as_deref(),
                limit: want,
                filter: self.filter,
            };
            let page = provider.list(ctx, req).await?;
            self.calls += 1;
            self.hint = merge_hints(self.hint, page.cache);
            let got = page.resources.len();
            self.examined += got;
            match self.filter {
                None => self.resources.extend(page.resources),
                Some(f) => self
                    .resources
                    .extend(page.resources.into_iter().filter(|e| e.matches(f))),
            }
            let Some(pos) = page.next else {
                return Ok(None);
            };
            check_position(&pos)?;
            if self.filter.is_none() || got < want || self.done() {
                return Ok(Some(pos));
            }
            after = Some(pos);
        }
    }
}

/// The default listing: every mount in order, a page filled across mounts (a mount none
/// of whose URIs can match the filter is not asked). Returns the next cursor.
async fn list_default(
    srv: &ServerState,
    ctx: &RequestContext,
    cursor: Option<&str>,
    fill: &mut Fill<'_>,
) -> Result<Option<String>, RequestError> {
    let mounts = srv.mounts();
    let sealer = srv.sealer();
    let scope = cursor::scope("", fill.filter);
    // A position is empty for "the start of this mount", else 1 followed by the
    // provider's bytes.
    let (mut index, mut after) = match cursor {
        None => (0u16, None),
        Some(c) => {
            let (m, inner) = sealer.open(c, ListKind::Resources, &scope)?;
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
    while let Some(mount) = mounts.get(usize::from(index)) {
        let asked = fill.filter.is_none_or(|f| f.may_match_below(&mount.prefix));
        if asked && let Some(pos) = fill.from(&*mount.provider, ctx, None, after.take()).await? {
            let mut inner = Vec::with_capacity(pos.len() + 1);
            inner.push(1);
            inner.extend_from_slice(&pos);
            return Ok(Some(sealer.seal(
                ListKind::Resources,
                &scope,
                index,
                &inner,
            )));
        }
        index += 1;
        after = None;
        if fill.done() {
            return Ok((usize::from(index) < mounts.len())
                .then(|| sealer.seal(ListKind::Resources, &scope, index, &[])));
        }
    }
    Ok(None)
}

/// The children of one collection (SEP-2093 `resources/list` with `uri`). Returns the
/// next cursor.
async fn list_children(
    srv: &ServerState,
    ctx: &RequestContext,
    uri: &str,
    cursor: Option<&str>,
    fill: &mut Fill<'_>,
) -> Result<Option<String>, RequestError> {
    let (index, mount) = srv.route(uri)?;
    let sealer = srv.sealer();
    let scope = cursor::scope(uri, fill.filter);
    let after = match cursor {
        None => None,
        Some(c) => {
            let (m, inner) = sealer.open(c, ListKind::Children, &scope)?;
            if m != index {
                return Err(InvalidCursor.into());
            }
            Some(inner)
        }
    };
    let next = fill.from(&*mount.provider, ctx, Some(uri), after).await?;
    Ok(next.map(|pos| sealer.seal(ListKind::Children, &scope, index, &pos)))
}

pub(in crate::server) async fn templates(
    srv: Arc<ServerState>,
    _ctx: RequestContext,
    p: ListResourceTemplatesParams,
) -> Result<ListResourceTemplatesResult, RequestError> {
    let filter = compile_filter(p.filter.as_ref())?;
    let all: Vec<_> = srv
        .templates()
        .iter()
        .map(|(_, t)| t)
        .filter(|t| {
            filter
                .as_ref()
                .is_none_or(|f| f.matches(&t.name, &t.uri_template))
        })
        .collect();
    let scope = cursor::scope("", filter.as_ref());
    let start = match p.cursor.as_deref() {
        None => 0,
        Some(c) => {
            let (_, inner) = srv.sealer().open(c, ListKind::Templates, &scope)?;
            let offset = <[u8; 4]>::try_from(inner.as_slice()).map_err(|_| InvalidCursor)?;
            let offset = u32::from_be_bytes(offset) as usize;
            if offset > all.len() {
                return Err(InvalidCursor.into());
            }
            offset
        }
    };
    let end = all.len().min(start + srv.config().page_size);
    let next_cursor = (end < all.len()).then(|| {
        srv.sealer()
            .seal(ListKind::Templates, &scope, 0, &(end as u32).to_be_bytes())
    });
    let hint = srv.config().templates_cache;
    let mut result = ListResourceTemplatesResult {
        resource_templates: all[start..end].iter().map(|&t| t.clone()).collect(),
        next_cursor,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    };
    result.fit_extension(srv.serves_resource_metadata());
    Ok(result)
}
