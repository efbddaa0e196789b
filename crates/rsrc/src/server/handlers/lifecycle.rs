//! `initialize`, `ping` and `server/discover`, and the capabilities they declare.
//!
//! Invariant: the capabilities are derived from what the mounted providers offer, so no
//! provider can offer subscriptions, list changes or completion without the capability
//! being declared, nor the reverse. `resources.filtering` (SEP-2564) is always declared
//! with both fields: the engine applies a filter to every provider's listing
//! (`handlers/listing.rs`), whether or not the provider applies it itself.

use rsrc_protocol::lifecycle::{
    DiscoverResult, EmptyParams, EmptyResult, FilteringCapability, InitializeParams,
    InitializeResult, ResourcesCapability,
};
use rsrc_protocol::resources::ListFilter;
use rsrc_protocol::{ProtocolVersion, ServerCapabilities};

use std::sync::Arc;

use super::listener_of;
use crate::context::RequestContext;
use crate::error::RequestError;
use crate::server::Server;
use crate::server::session::{Negotiated, Session};

pub(crate) fn capabilities(srv: &Server) -> ServerCapabilities {
    // Every template can be completed (`Provider::complete` answers, with no values by
    // default), so serving one is what declares completion: no provider can offer
    // completion without the capability being declared.
    let completions = !srv.state.templates.is_empty() || srv.state.prompt_completer.is_some();
    ServerCapabilities {
        resources: Some(ResourcesCapability {
            subscribe: offers_subscriptions(srv).then_some(true),
            list_changed: publishes_list_changes(srv).then_some(true),
            filtering: Some(FilteringCapability {
                supported: ListFilter::FIELDS.map(str::to_owned).to_vec(),
            }),
        }),
        logging: Some(Default::default()),
        completions: completions.then(Default::default),
        extensions: (!srv.state.extensions.is_empty()).then(|| srv.state.extensions.clone()),
        other: {
            let mut other = srv.state.capabilities.clone();
            if srv.state.tools.is_some() {
                other.insert(
                    crate::server::tools::CAPABILITY.into(),
                    serde_json::json!({}),
                );
            }
            other
        },
    }
}

pub(super) fn offers_subscriptions(srv: &Server) -> bool {
    srv.state
        .router
        .mounts
        .iter()
        .any(|m| m.provider.capabilities().subscribe)
}

pub(super) fn publishes_list_changes(srv: &Server) -> bool {
    srv.state
        .router
        .mounts
        .iter()
        .any(|m| m.provider.capabilities().list_changed)
}

pub(in crate::server) fn initialize(
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

pub(in crate::server) async fn ping(
    _srv: Server,
    _ctx: RequestContext,
    _p: EmptyParams,
) -> Result<EmptyResult, RequestError> {
    Ok(EmptyResult::default())
}

pub(in crate::server) async fn discover(
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
