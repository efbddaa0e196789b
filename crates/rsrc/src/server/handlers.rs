//! One handler per method. Each takes decoded params and the request's context (which
//! knows the revision) and returns the typed result, with the caching hint that applies
//! (the provider's, else the server's default); fitting the result to the revision
//! (`resultType`, `_meta.serverInfo`, and dropping the caching members before 2026-07-28)
//! is done once for every method by the dispatcher ([`Fit`](super::reply::Fit)).
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
use rsrc_protocol::{CacheHint, CacheScope, ProtocolVersion, ResultMeta, ServerCapabilities};

use std::sync::Arc;

use rsrc_protocol::meta::NotificationMeta;
use rsrc_protocol::methods::SubscriptionsAcknowledged;
use rsrc_protocol::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams,
    SubscriptionsListenResult,
};

use super::session::{Negotiated, Session};
use super::{Mount, Server};
use crate::changes::{Listener, TooMany};
use crate::context::RequestContext;
use crate::cursor::{InvalidCursor, ListKind};
use crate::error::{RequestError, ResourceError};
use crate::extension::{ExtensionParams, ExtensionResult, PromptCompletion};
use crate::provider::BoxFuture;
use crate::provider::{CompleteRequest, ListRequest, Listed, MAX_POSITION_BYTES};

impl From<InvalidCursor> for RequestError {
    fn from(e: InvalidCursor) -> Self {
        RequestError::InvalidParams(e.to_string())
    }
}

/// `ttlMs` and `cacheScope` of a result in revision `v` (for results that are not typed,
/// such as the tools bridge's).
pub(super) fn cache_fields(
    v: ProtocolVersion,
    hint: CacheHint,
) -> (Option<u64>, Option<CacheScope>) {
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

pub(crate) fn capabilities(srv: &Server) -> ServerCapabilities {
    // Every template can be completed (`Provider::complete` answers, with no values by
    // default), so serving one is what declares completion: no provider can offer
    // completion without the capability being declared.
    let completions = !srv.state.templates.is_empty() || srv.state.prompt_completer.is_some();
    ServerCapabilities {
        resources: Some(ResourcesCapability {
            subscribe: offers_subscriptions(srv).then_some(true),
            list_changed: publishes_list_changes(srv).then_some(true),
        }),
        logging: Some(Default::default()),
        completions: completions.then(Default::default),
        extensions: (!srv.state.extensions.is_empty()).then(|| srv.state.extensions.clone()),
        other: {
            let mut other = srv.state.capabilities.clone();
            if srv.state.tools.is_some() {
                other.insert(super::tools::CAPABILITY.into(), serde_json::json!({}));
            }
            other
        },
    }
}

fn offers_subscriptions(srv: &Server) -> bool {
    srv.state
        .router
        .mounts
        .iter()
        .any(|m| m.provider.capabilities().subscribe)
}

fn publishes_list_changes(srv: &Server) -> bool {
    srv.state
        .router
        .mounts
        .iter()
        .any(|m| m.provider.capabilities().list_changed)
}

/// The session's listener, made on first use.
pub(super) fn listener_of<'s>(srv: &Server, session: &'s Session) -> &'s Arc<Listener> {
    session.listener(|| {
        srv.state.hub.listener(
            session.notifier().clone(),
            None,
            srv.state.config.max_subscriptions,
        )
    })
}

/// Checks that `uri` can be subscribed to: a well-formed URI, served by a provider
/// that offers subscriptions and accepts this one.
async fn check_subscribable(
    srv: &Server,
    ctx: &RequestContext,
    uri: &str,
) -> Result<(), RequestError> {
    let (_, mount) = mount_for(srv, uri)?;
    if !mount.provider.capabilities().subscribe {
        return Err(RequestError::InvalidParams(format!(
            "{uri} does not support subscriptions"
        )));
    }
    mount.provider.subscribe(ctx, uri).await?;
    Ok(())
}

/// Maps a client's URI (or IRI) to the URI every provider and subscription sees
/// (RFC 3987 §3.1), and validates it.
pub(super) fn canonicalize(srv: &Server, uri: &mut String) -> Result<(), RequestError> {
    if let std::borrow::Cow::Owned(mapped) = crate::uri::to_uri(uri)
        .map_err(|reason| RequestError::from(ResourceError::invalid_uri(uri.as_str(), reason)))?
    {
        *uri = mapped;
    }
    check_uri(srv, uri)
}

fn check_uri(srv: &Server, uri: &str) -> Result<(), RequestError> {
    crate::uri::validate(uri, srv.state.config.max_uri_len)
        .map_err(|reason| ResourceError::invalid_uri(uri, reason).into())
}

fn mount_for<'s>(srv: &'s Server, uri: &str) -> Result<(u16, &'s Mount), RequestError> {
    check_uri(srv, uri)?;
    srv.state
        .router
        .resolve(uri)
        .ok_or_else(|| ResourceError::not_found(uri).into())
}

pub(super) fn check_position(pos: &[u8]) -> Result<(), RequestError> {
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
        client_info: p.client_info.map(Arc::new),
        capabilities: Arc::new(p.capabilities),
    };
    if !session.negotiate(negotiated) {
        return Err(RequestError::InvalidRequest(
            "already initialized: initialize may be sent only once per session".into(),
        ));
    }
    tracing::debug!(requested = %p.protocol_version, %version, "initialized");
    if publishes_list_changes(srv) {
        listener_of(srv, session).listen_to_lists();
    }
    Ok(InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: capabilities(srv),
        server_info: srv.state.info.clone(),
        instructions: srv.state.instructions.clone(),
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

/// `resources/subscribe` on `session`.
pub(super) async fn subscribe(
    srv: Server,
    ctx: RequestContext,
    mut p: ResourceParams,
    session: Arc<Session>,
) -> Result<EmptyResult, RequestError> {
    if !offers_subscriptions(&srv) {
        return Err(RequestError::MethodNotFound(
            "resources/subscribe (this server offers no subscriptions)".into(),
        ));
    }
    canonicalize(&srv, &mut p.uri)?;
    check_subscribable(&srv, &ctx, &p.uri).await?;
    listener_of(&srv, &session)
        .subscribe(&p.uri)
        .map_err(|TooMany(max)| {
            RequestError::InvalidParams(format!("a session may hold at most {max} subscriptions"))
        })?;
    Ok(EmptyResult::default())
}

/// `resources/unsubscribe` on `session`: succeeds whether or not it was subscribed.
pub(super) async fn unsubscribe(
    srv: Server,
    _ctx: RequestContext,
    mut p: ResourceParams,
    session: Arc<Session>,
) -> Result<EmptyResult, RequestError> {
    if !offers_subscriptions(&srv) {
        return Err(RequestError::MethodNotFound(
            "resources/unsubscribe (this server offers no subscriptions)".into(),
        ));
    }
    canonicalize(&srv, &mut p.uri)?;
    listener_of(&srv, &session).unsubscribe(&p.uri);
    Ok(EmptyResult::default())
}

/// `subscriptions/listen`: acknowledges what will be delivered, then delivers it until
/// the client cancels (closing the stream, or `notifications/cancelled` on stdio), or
/// until the transport closes, when the completion result ends it.
pub(super) async fn listen(
    srv: Server,
    ctx: RequestContext,
    p: SubscriptionsListenParams,
) -> Result<SubscriptionsListenResult, RequestError> {
    let id = ctx.request_id().clone();
    let wanted = p.notifications;
    let max = srv.state.config.max_subscriptions;
    let mut accepted = SubscriptionFilter::default();
    if wanted.resources_list_changed == Some(true) && publishes_list_changes(&srv) {
        accepted.resources_list_changed = Some(true);
    }
    if let Some(uris) = wanted.resource_subscriptions {
        let mut ok = Vec::new();
        if offers_subscriptions(&srv) {
            for uri in uris {
                if ok.len() == max {
                    break;
                }
                let mut uri = uri;
                let checked = match canonicalize(&srv, &mut uri) {
                    Ok(()) => check_subscribable(&srv, &ctx, &uri).await,
                    Err(e) => Err(e),
                };
                match checked {
                    Ok(()) => ok.push(uri),
                    Err(e) => tracing::debug!(%uri, error = ?e, "subscription not accepted"),
                }
            }
        }
        accepted.resource_subscriptions = Some(ok);
    }
    let listener = srv
        .state
        .hub
        .listener(ctx.notifier().clone(), Some(id.clone()), max);
    // The acknowledgement goes out before anything can be delivered.
    ctx.notifier()
        .notify::<SubscriptionsAcknowledged>(&SubscriptionsAcknowledgedParams {
            notifications: accepted.clone(),
            meta: Some(NotificationMeta::for_subscription(id.clone())),
        });
    if accepted.resources_list_changed == Some(true) {
        listener.listen_to_lists();
    }
    for uri in accepted.resource_subscriptions.iter().flatten() {
        // Within the bound: at most `max` were accepted.
        let _ = listener.subscribe(uri);
    }
    // Runs until the client cancels (then no response follows) or the transport
    // closes (then the completion result ends the stream gracefully).
    ctx.closing().await;
    drop(listener);
    Ok(SubscriptionsListenResult {
        result_type: None,
        meta: ResultMeta {
            subscription_id: Some(id),
            ..ResultMeta::default()
        },
    })
}

pub(super) async fn discover(
    srv: Server,
    _ctx: RequestContext,
    _p: EmptyParams,
) -> Result<DiscoverResult, RequestError> {
    let hint = srv.state.config.discover_cache;
    Ok(DiscoverResult {
        supported_versions: ProtocolVersion::ALL
            .iter()
            .map(|v| v.as_str().to_owned())
            .collect(),
        capabilities: capabilities(&srv),
        instructions: srv.state.instructions.clone(),
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    })
}

pub(super) async fn list(
    srv: Server,
    ctx: RequestContext,
    mut p: ListResourcesParams,
) -> Result<ListResourcesResult<Listed>, RequestError> {
    if let Some(uri) = &mut p.uri {
        canonicalize(&srv, uri)?;
    }
    let limit = srv.state.config.page_size;
    let (mut resources, next_cursor, hint) =
        listing(&srv, &ctx, p.uri.as_deref(), p.cursor.as_deref(), limit).await?;
    resources.iter_mut().for_each(Listed::normalize_kind);
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

pub(super) type Listing = (Vec<Listed>, Option<String>, Option<CacheHint>);

/// A page of at most `limit` resources: the children of the (canonical) `uri`, or the
/// default listing; `cursor` is one this server sealed for the same listing.
pub(super) async fn listing(
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

pub(super) async fn read(
    srv: Server,
    ctx: RequestContext,
    mut p: ReadResourceParams,
) -> Result<ReadResourceResult, RequestError> {
    canonicalize(&srv, &mut p.uri)?;
    let (_, mount) = mount_for(&srv, &p.uri)?;
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
    let hint = out.cache.unwrap_or(srv.state.config.read_cache);
    Ok(ReadResourceResult {
        contents: out.contents,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    })
}

pub(super) async fn metadata(
    srv: Server,
    ctx: RequestContext,
    mut p: ResourceParams,
) -> Result<ResourceMetadataResult, RequestError> {
    canonicalize(&srv, &mut p.uri)?;
    let (_, mount) = mount_for(&srv, &p.uri)?;
    let mut resource = mount.provider.metadata(&ctx, &p.uri).await?;
    resource.normalize_kind();
    Ok(ResourceMetadataResult {
        resource,
        result_type: None,
        meta: None,
    })
}

pub(super) async fn templates(
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

pub(super) async fn complete(
    srv: Server,
    ctx: RequestContext,
    p: CompleteParams,
) -> Result<CompleteResult, RequestError> {
    let template = match &p.reference {
        Reference::Resource { uri } => uri,
        Reference::Prompt { name, .. } => {
            let Some(complete) = &srv.state.prompt_completer else {
                return Err(RequestError::InvalidParams(format!(
                    "unknown prompt {name:?}: this server offers no prompts"
                )));
            };
            let req = PromptCompletion {
                prompt: name.clone(),
                argument: p.argument.name.clone(),
                value: p.argument.value.clone(),
                context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
            };
            let completion = complete(ctx.clone(), req).await?;
            return Ok(complete_result(completion));
        }
    };
    let Some((index, _)) = srv
        .state
        .templates
        .iter()
        .find(|(_, t)| t.uri_template == *template)
    else {
        return Err(RequestError::InvalidParams(format!(
            "unknown resource template {template:?}"
        )));
    };
    let mount = &srv.state.router.mounts[usize::from(*index)];
    let context = p.context.and_then(|c| c.arguments).unwrap_or_default();
    let completion = mount
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
    Ok(complete_result(completion))
}

/// The result of a completion, held to the protocol's limit of values.
fn complete_result(mut completion: Completion) -> CompleteResult {
    if completion.values.len() > Completion::MAX_VALUES {
        let total = completion.values.len() as u64;
        completion.values.truncate(Completion::MAX_VALUES);
        completion.has_more = Some(true);
        completion.total = Some(completion.total.unwrap_or(total).max(total));
    }
    CompleteResult {
        completion,
        result_type: None,
        meta: None,
    }
}

/// The handler of extension method `method`.
pub(super) fn extension(
    method: &str,
) -> impl FnOnce(
    Server,
    RequestContext,
    ExtensionParams,
) -> BoxFuture<'static, Result<ExtensionResult, RequestError>>
+ Send
+ 'static {
    let method = method.to_owned();
    move |srv: Server, ctx: RequestContext, p: ExtensionParams| {
        Box::pin(async move {
            let Some(handler) = srv.state.methods.get(&method).cloned() else {
                return Err(RequestError::MethodNotFound(method));
            };
            Ok(ExtensionResult(handler(ctx, p.rest).await?))
        })
    }
}
