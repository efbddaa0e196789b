//! What a host hands the engine (see `host.rs`): a request already decoded
//! ([`HostRequest`]) and the changes held for a stream it acknowledged itself
//! ([`HeldChanges`]). Plain data, so that the dispatcher and the handlers take it without
//! reaching back into the host API.
//!
//! Invariant: a [`HostRequest`] names exactly one engine method (or another method by
//! name), with params of that method's type.

use std::sync::Arc;

use rsrc_protocol::completion::CompleteParams;
use rsrc_protocol::lifecycle::{EmptyParams, SetLevelParams};
use rsrc_protocol::meta::RequestMeta;
use rsrc_protocol::resources::{
    ListResourceTemplatesParams, ListResourcesParams, ReadResourceParams, ResourceParams,
};
use rsrc_protocol::subscriptions::SubscriptionsListenParams;
use serde_json::{Map, Value};

use crate::changes::Listener;

/// A request a host hands over already decoded: the params of its method, `_meta`
/// included.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostRequest {
    /// `ping`.
    Ping(EmptyParams),
    /// `server/discover`.
    Discover(EmptyParams),
    /// `logging/setLevel`.
    SetLevel(SetLevelParams),
    /// `resources/list`.
    List(ListResourcesParams),
    /// `resources/directory/read`.
    DirectoryRead(ListResourcesParams),
    /// `resources/read`.
    Read(ReadResourceParams),
    /// `resources/metadata`.
    Metadata(ResourceParams),
    /// `resources/templates/list`.
    Templates(ListResourceTemplatesParams),
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `resources/subscribe`.
    Subscribe(ResourceParams),
    /// `resources/unsubscribe`.
    Unsubscribe(ResourceParams),
    /// `subscriptions/listen`, with the changes held since the host acknowledged it, if
    /// it did ([`Server::hold_changes`](crate::Server::hold_changes)).
    Listen(SubscriptionsListenParams, Option<HeldChanges>),
    /// Any other method (the tools bridge's, an application's own extension): its params
    /// besides `_meta`. One the engine does not serve is refused as unknown (`-32601`).
    Other {
        /// The method.
        method: String,
        /// Its `_meta`.
        meta: Option<RequestMeta>,
        /// Its other params.
        params: Map<String, Value>,
    },
}

/// The changes a `subscriptions/listen` stream hears from the moment its host
/// acknowledged it, kept (coalesced, as every listener keeps them) until the engine runs
/// the stream: see [`Server::hold_changes`](crate::Server::hold_changes).
pub struct HeldChanges {
    pub(crate) listener: Arc<Listener>,
    /// Whether every provider heard every change when the hold began (a watcher still
    /// starting does not): if not, the stream is told to look again once it runs.
    pub(crate) heard_all: bool,
}

impl std::fmt::Debug for HeldChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldChanges")
            .field("heard_all", &self.heard_all)
            .finish_non_exhaustive()
    }
}
