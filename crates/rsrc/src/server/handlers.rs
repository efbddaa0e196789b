//! One handler per method. Each takes decoded params and the request's context (which
//! knows the revision) and returns the typed result; the revision-specific result members
//! (`resultType`, `ttlMs`, `cacheScope`, `_meta.serverInfo`) are added here and only here.
//!
//! Invariants:
//! - Every URI from a client is validated before a provider sees it.
//! - A provider only sees cursor positions this server sealed for the same listing.
//! - A read never answers an empty `contents` for a document: that is a provider bug and
//!   becomes an internal error, never a false "exists but empty".
//! - Every resource leaving the server carries both SEP-2093 spellings of its kind.

use rsrc_protocol::completion::{CompleteParams, CompleteResult, Completion, Reference};
use rsrc_protocol::lifecycle::{
    DiscoverResult, EmptyParams, EmptyResult, InitializeParams, InitializeResult,
    ResourcesCapability,
};
use rsrc_protocol::resources::{
    ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult, ReadResourceParams, ReadResourceResult, ResourceMetadataResult,
    ResourceParams,
};
use rsrc_protocol::{
    CacheHint, CacheScope, ProtocolVersion, ResultMeta, ResultType, ServerCapabilities,
};

use super::session::{Negotiated, Session};
use super::{Mount, Server};
use crate::context::RequestContext;
use crate::cursor::{InvalidCursor, ListKind};
use crate::error::{RequestError, ResourceError};
use crate::provider::{CompleteRequest, ListRequest, Listed, MAX_POSITION_BYTES};

impl From<InvalidCursor> for RequestError {
    fn from(e: InvalidCursor) -> Self {
        RequestError::InvalidParams(e.to_string())
    }
}

/// `resultType` and `_meta` of a result in revision `v`.
fn decoration(srv: &Server, v: ProtocolVersion) -> (Option<ResultType>, Option<ResultMeta>) {
    if v.is_modern() {
        (
            Some(ResultType::COMPLETE),
            Some(ResultMeta {
                server_info: Some(srv.inner.info.clone()),
                ..ResultMeta::default()
            }),
        )
    } else {
        (None, None)
    }
}

/// `ttlMs` and `cacheScope` of a result in revision `v`.
fn cache_fields(v: ProtocolVersion, hint: CacheHint) -> (Option<u64>, Option<CacheScope>) {
    if v.is_modern() {
        (Some(hint.ttl_ms), Some(hint.scope))
    } else {
        (None, None)
    }
}

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

impl Server {
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let completions = self
            .inner
            .router
            .mounts
            .iter()
            .any(|m| m.provider.offers_completion());
        ServerCapabilities {
            resources: Some(ResourcesCapability::default()),
            logging: Some(Default::default()),
            completions: completions.then(Default::default),
            ..ServerCapabilities::default()
        }
    }

    fn check_uri(&self, uri: &str) -> Result<(), RequestError> {
        crate::uri::validate(uri, self.inner.config.max_uri_len)
            .map_err(|reason| ResourceError::invalid_uri(uri, reason).into())
    }

    fn mount_for(&self, uri: &str) -> Result<(u16, &Mount), RequestError> {
        self.check_uri(uri)?;
        self.inner
            .router
            .resolve(uri)
            .ok_or_else(|| ResourceError::not_found(uri).into())
    }
}

fn check_position(pos: &[u8]) -> Result<(), RequestError> {
    if pos.len() > MAX_POSITION_BYTES {
        return Err(RequestError::Internal(format!(
            "a provider returned a {}-byte cursor position (limit {MAX_POSITION_BYTES})",
            pos.len()
        )));
    }
    Ok(())
}

pub(super) fn initialize(
    srv: &Server,
    session: &Session,
    p: InitializeParams,
) -> Result<InitializeResult, RequestError> {
    // The requested revision if it is one we speak with initialize, else the newest one.
    let version = p
        .protocol_version
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| !v.is_modern())
        .unwrap_or(ProtocolVersion::LATEST_LEGACY);
    let negotiated = Negotiated {
        version,
        client_info: p.client_info,
    };
    if !session.negotiate(negotiated) {
        return Err(RequestError::InvalidRequest(
            "already initialized: initialize may be sent only once per session".into(),
        ));
    }
    tracing::debug!(requested = %p.protocol_version, %version, "initialized");
    Ok(InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: srv.capabilities(),
        server_info: srv.inner.info.clone(),
        instructions: srv.inner.instructions.clone(),
        meta: None,
    })
}

pub(super) async fn ping(
    _srv: Server,
    _ctx: RequestContext,
    _p: EmptyParams,
) -> Result<EmptyResult, RequestError> {
    Ok(EmptyResult::default())
}

pub(super) async fn unsupported(capability: &str) -> Result<EmptyResult, RequestError> {
    Err(RequestError::MethodNotFound(format!(
        "this server does not offer {capability}"
    )))
}

pub(super) async fn discover(
    srv: Server,
    ctx: RequestContext,
    _p: EmptyParams,
) -> Result<DiscoverResult, RequestError> {
    let v = ctx.protocol_version();
    let (result_type, meta) = decoration(&srv, v);
    let (ttl_ms, cache_scope) = cache_fields(v, srv.inner.config.discover_cache);
    Ok(DiscoverResult {
        supported_versions: ProtocolVersion::ALL
            .iter()
            .map(|v| v.as_str().to_owned())
            .collect(),
        capabilities: srv.capabilities(),
        instructions: srv.inner.instructions.clone(),
        result_type,
        ttl_ms,
        cache_scope,
        meta,
    })
}

pub(super) async fn list(
    srv: Server,
    ctx: RequestContext,
    p: ListResourcesParams,
) -> Result<ListResourcesResult<Listed>, RequestError> {
    let (mut resources, next_cursor, hint) = match p.uri.as_deref() {
        Some(uri) => list_children(&srv, &ctx, uri, p.cursor.as_deref()).await?,
        None => list_default(&srv, &ctx, p.cursor.as_deref()).await?,
    };
    resources.iter_mut().for_each(Listed::normalize_kind);
    let v = ctx.protocol_version();
    let (result_type, meta) = decoration(&srv, v);
    let (ttl_ms, cache_scope) = cache_fields(v, hint.unwrap_or(srv.inner.config.list_cache));
    Ok(ListResourcesResult {
        resources,
        next_cursor,
        result_type,
        ttl_ms,
        cache_scope,
        meta,
    })
}

/// `resources/directory/read` (skills extension): `resources/list` with a required `uri`.
pub(super) async fn directory_read(
    srv: Server,
    ctx: RequestContext,
    p: ListResourcesParams,
) -> Result<ListResourcesResult<Listed>, RequestError> {
    if p.uri.is_none() {
        return Err(RequestError::InvalidParams(
            "resources/directory/read needs the directory's \"uri\"".into(),
        ));
    }
    list(srv, ctx, p).await
}

type Listing = (Vec<Listed>, Option<String>, Option<CacheHint>);

/// The default listing: every mount in order, a page filled across mounts.
async fn list_default(
    srv: &Server,
    ctx: &RequestContext,
    cursor: Option<&str>,
) -> Result<Listing, RequestError> {
    let mounts = &srv.inner.router.mounts;
    let sealer = &srv.inner.sealer;
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
    let limit = srv.inner.config.page_size;
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
) -> Result<Listing, RequestError> {
    let (index, mount) = srv.mount_for(uri)?;
    let sealer = &srv.inner.sealer;
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
                limit: srv.inner.config.page_size,
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

pub(super) async fn read(
    srv: Server,
    ctx: RequestContext,
    p: ReadResourceParams,
) -> Result<ReadResourceResult, RequestError> {
    let (_, mount) = srv.mount_for(&p.uri)?;
    let mut out = mount.provider.read(&ctx, &p.uri).await?;
    if out.contents.is_empty() {
        // Only a collection may read as empty; never answer "exists, empty" for anything
        // else.
        let meta = mount.provider.metadata(&ctx, &p.uri).await?;
        if !meta.is_collection() {
            return Err(RequestError::Internal(format!(
                "the provider returned no contents for the document {}",
                p.uri
            )));
        }
    }
    for c in &mut out.contents {
        c.resource.normalize_kind();
    }
    let v = ctx.protocol_version();
    let (result_type, meta) = decoration(&srv, v);
    let (ttl_ms, cache_scope) = cache_fields(v, out.cache.unwrap_or(srv.inner.config.read_cache));
    Ok(ReadResourceResult {
        contents: out.contents,
        result_type,
        ttl_ms,
        cache_scope,
        meta,
    })
}

pub(super) async fn metadata(
    srv: Server,
    ctx: RequestContext,
    p: ResourceParams,
) -> Result<ResourceMetadataResult, RequestError> {
    let (_, mount) = srv.mount_for(&p.uri)?;
    let mut resource = mount.provider.metadata(&ctx, &p.uri).await?;
    resource.normalize_kind();
    let (result_type, meta) = decoration(&srv, ctx.protocol_version());
    Ok(ResourceMetadataResult {
        resource,
        result_type,
        meta,
    })
}

pub(super) async fn templates(
    srv: Server,
    ctx: RequestContext,
    p: ListResourceTemplatesParams,
) -> Result<ListResourceTemplatesResult, RequestError> {
    let all = &srv.inner.templates;
    let start = match p.cursor.as_deref() {
        None => 0,
        Some(c) => {
            let (_, inner) = srv.inner.sealer.open(c, ListKind::Templates, "")?;
            let offset = <[u8; 4]>::try_from(inner.as_slice()).map_err(|_| InvalidCursor)?;
            let offset = u32::from_be_bytes(offset) as usize;
            if offset > all.len() {
                return Err(InvalidCursor.into());
            }
            offset
        }
    };
    let end = all.len().min(start + srv.inner.config.page_size);
    let next_cursor = (end < all.len()).then(|| {
        srv.inner
            .sealer
            .seal(ListKind::Templates, "", 0, &(end as u32).to_be_bytes())
    });
    let v = ctx.protocol_version();
    let (result_type, meta) = decoration(&srv, v);
    let (ttl_ms, cache_scope) = cache_fields(v, srv.inner.config.templates_cache);
    Ok(ListResourceTemplatesResult {
        resource_templates: all[start..end].iter().map(|(_, t)| t.clone()).collect(),
        next_cursor,
        result_type,
        ttl_ms,
        cache_scope,
        meta,
    })
}

pub(super) async fn complete(
    srv: Server,
    ctx: RequestContext,
    p: CompleteParams,
) -> Result<CompleteResult, RequestError> {
    let template = match &p.reference {
        Reference::Resource { uri } => uri,
        Reference::Prompt { name, .. } => {
            return Err(RequestError::InvalidParams(format!(
                "unknown prompt {name:?}: this server offers no prompts"
            )));
        }
    };
    let Some((index, _)) = srv
        .inner
        .templates
        .iter()
        .find(|(_, t)| t.uri_template == *template)
    else {
        return Err(RequestError::InvalidParams(format!(
            "unknown resource template {template:?}"
        )));
    };
    let mount = &srv.inner.router.mounts[usize::from(*index)];
    let context = p.context.and_then(|c| c.arguments).unwrap_or_default();
    let mut completion = mount
        .provider
        .complete(
            &ctx,
            CompleteRequest {
                template,
                argument: &p.argument.name,
                value: &p.argument.value,
                context: &context,
            },
        )
        .await?;
    if completion.values.len() > Completion::MAX_VALUES {
        let total = completion.values.len() as u64;
        completion.values.truncate(Completion::MAX_VALUES);
        completion.has_more = Some(true);
        completion.total = Some(completion.total.unwrap_or(total).max(total));
    }
    let (result_type, meta) = decoration(&srv, ctx.protocol_version());
    Ok(CompleteResult {
        completion,
        result_type,
        meta,
    })
}
