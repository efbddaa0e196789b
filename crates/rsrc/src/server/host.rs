//! The typed host API: the engine inside another SDK's server (rmcp's, through
//! `rsrc-rmcp`), with no JSON between the two.
//!
//! A host owns the wire: it has decoded each request and made the handshake itself. It
//! - opens a session from its own handshake ([`Server::open_session`]): no `initialize`
//!   message exists;
//! - hands each request over typed ([`HostRequest`], with its `_meta`), made into a
//!   [`Prepared`] request by [`Server::prepare_typed`] and run with [`Server::run`] as
//!   any transport runs one; the typed result comes out of the reply
//!   ([`Reply::into_typed`](super::Reply::into_typed));
//! - receives notifications typed ([`Notifier::typed`](crate::Notifier::typed)), a listen
//!   stream's tagged with its subscription;
//! - stamps its own name on results once ([`Server::stamp_info`]), and reads the
//!   capabilities at any time ([`Server::capabilities`]).
//!
//! A host that acknowledges a `subscriptions/listen` stream itself, before the engine
//! runs it (rmcp does), holds the stream's changes from that moment
//! ([`Server::hold_changes`]) and hands them to the request: nothing published after the
//! acknowledgement is lost.
//!
//! Invariant: a host's request goes through the same gate, handlers, fitting, accounting
//! and spans as one decoded from the wire; only where its params come from differs. The
//! revision it is served under is the gate's decision, from the request's `_meta` and
//! the session's handshake, as for the engine's own transports.

use std::sync::Arc;

use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::lifecycle::InitializeParams;
use rsrc_protocol::subscriptions::SubscriptionFilter;
use rsrc_protocol::{Implementation, ProtocolVersion, ServerCapabilities};

use super::dispatch::{self, Prepared};
use super::handle::Server;
use super::handlers;
use super::hosted::{HeldChanges, HostRequest};
use super::session::Session;
use crate::context::Notifier;

impl Server {
    /// A session for a connection whose handshake the host made: `handshake` is what
    /// its client sent in `initialize` (revision, capabilities, client info), and the
    /// session is initialized as by that message, with no reply. `None` (a client that
    /// made no 2025 handshake): the session serves 2026-07-28 requests only, as a
    /// connection does before `initialize`. Notifications that belong to the session
    /// rather than to one request (a 2025 session's `updated` and `list_changed`) go to
    /// `notifier`.
    pub fn open_session(
        &self,
        handshake: Option<InitializeParams>,
        notifier: Notifier,
    ) -> Arc<Session> {
        let session = Arc::new(Session::new(notifier));
        // 2026-07-28 has no handshake: a host naming it opens a session of no revision.
        let modern = |h: &InitializeParams| {
            h.protocol_version
                .parse::<ProtocolVersion>()
                .is_ok_and(ProtocolVersion::is_modern)
        };
        if let Some(handshake) = handshake.filter(|h| !modern(h)) {
            // A fresh session: the one way `initialize` fails, a second one, cannot occur.
            let _ = handlers::initialize(&self.state, &session, handshake);
            session.mark_initialized();
        }
        session
    }

    /// A request handed over typed, ready to [`run`](Server::run).
    pub fn prepare_typed(&self, id: RequestId, request: HostRequest) -> Prepared {
        dispatch::prepare_typed(&self.state, id, request)
    }

    /// Starts holding what a `subscriptions/listen` stream asking for `filter` will hear:
    /// the list's changes, if a provider publishes them, and the requested URIs (at most
    /// [`ServerConfig::max_subscriptions`](crate::ServerConfig::max_subscriptions)),
    /// before their providers are asked. Hand the result to the stream's request
    /// ([`HostRequest::Listen`]): it then keeps what the engine accepts, as it would
    /// have acknowledged, and delivers what was held. Dropped unused, it holds nothing.
    pub fn hold_changes(&self, filter: &SubscriptionFilter) -> HeldChanges {
        let heard_all = self.hears_every_change();
        let state = &self.state;
        let listener = state.parked_listener();
        if filter.resources_list_changed == Some(true) && state.publishes_list_changes() {
            listener.listen_to_lists();
        }
        if state.offers_subscriptions() {
            for uri in filter.resource_subscriptions.iter().flatten() {
                let mut uri = uri.clone();
                if handlers::canonicalize(state, &mut uri).is_ok()
                    && listener.subscribe(&uri).is_err()
                {
                    break;
                }
            }
        }
        HeldChanges {
            listener,
            heard_all,
        }
    }

    /// Stamps `info` (the host server's name and version) as this server's, in the
    /// results that carry it (`_meta.serverInfo` in 2026-07-28) and in
    /// [`Server::info`]: once; `false` if a name was stamped before.
    pub fn stamp_info(&self, info: Implementation) -> bool {
        self.state.core.host_info.set(info).is_ok()
    }

    /// What the server declares (in `initialize` and `server/discover`): for a host that
    /// merges it into its own declaration. Fixed once the server is built. In the
    /// 2026-07-28 form: a 2025 answer carries rsrc's SEP-2093 extension under
    /// `experimental` instead (`ResourceMetadataExtension::place`).
    pub fn capabilities(&self) -> ServerCapabilities {
        self.state.declared_capabilities()
    }
}
