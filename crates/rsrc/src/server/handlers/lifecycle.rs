//! `initialize`, `ping` and `server/discover`.
//!
//! Invariant: both answers declare the same capabilities, derived in one place
//! ([`Server::capabilities_for`]: an extension sits where the answer's revision declares
//! one); the revision `initialize` settles on is the gate's ([`gate::initialize`]).

use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::lifecycle::{
    DiscoverResult, EmptyParams, EmptyResult, InitializeParams, InitializeResult,
};
use std::sync::Arc;

use super::subscriptions::listener_of;
use crate::context::RequestContext;
use crate::error::RequestError;
use crate::server::gate;
use crate::server::inside::ServerState;
use crate::server::session::Session;

pub(in crate::server) fn initialize(
    srv: &ServerState,
    session: &Session,
    p: InitializeParams,
) -> Result<InitializeResult, RequestError> {
    let version = gate::initialize(session, p)?;
    if srv.publishes_list_changes() {
        listener_of(srv, session).listen_to_lists();
    }
    Ok(InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: srv.capabilities_for(version),
        server_info: srv.info().clone(),
        instructions: srv.instructions().map(str::to_owned),
        meta: None,
    })
}

pub(in crate::server) async fn ping(
    _srv: Arc<ServerState>,
    _ctx: RequestContext,
    _p: EmptyParams,
) -> Result<EmptyResult, RequestError> {
    Ok(EmptyResult::default())
}

pub(in crate::server) async fn discover(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    _p: EmptyParams,
) -> Result<DiscoverResult, RequestError> {
    let hint = srv.config().discover_cache;
    Ok(DiscoverResult {
        supported_versions: ProtocolVersion::ALL
            .iter()
            .map(|v| v.as_str().to_owned())
            .collect(),
        capabilities: srv.capabilities_for(ctx.protocol_version()),
        instructions: srv.instructions().map(str::to_owned),
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    })
}
