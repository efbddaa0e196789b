//! The [`Server`] handle: what transports, hosts and applications hold, cheap to clone,
//! shared by every connection.
//!
//! Invariant: the handle only calls down. Its methods hand the engine's state
//! ([`ServerState`], `inside.rs`) to the rules (the dispatcher, the handlers), which
//! never see the handle, so no rule can call back up through it.

use std::sync::Arc;

use crate::budget::ByteBudget;
use crate::changes::ChangeFeed;
use crate::context::Notifier;
use crate::sessions::SessionState;

use super::config::ServerConfig;
use super::dispatch::{self, Handled, Incoming, Notice, Outcome, Prepared};
use super::handlers;
use super::inside::ServerState;
use super::reply::Reply;
use super::session::Session;
use rsrc_protocol::Implementation;

/// A resources server: cheap to clone, shared by every connection.
#[derive(Clone, Debug)]
pub struct Server {
    pub(super) state: Arc<ServerState>,
}

impl Server {
    /// The server's name and version: the host's, once one stamped it
    /// ([`Server::stamp_info`]).
    pub fn info(&self) -> &Implementation {
        self.state.info()
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        self.state.config()
    }

    /// The budget of content in flight ([`ServerConfig::read_budget`]).
    pub fn budget(&self) -> &ByteBudget {
        self.state.budget()
    }

    /// The change feed providers publish to (the same one each provider received in
    /// [`Provider::attach`](crate::Provider::attach)): for code outside a provider that knows a resource changed.
    pub fn changes(&self) -> ChangeFeed {
        self.state.core.hub.feed()
    }

    /// Whether every provider would publish a change made now
    /// ([`Provider::hears_every_change`](crate::Provider::hears_every_change)): false while a
    /// watcher is still placing its first watches.
    pub fn hears_every_change(&self) -> bool {
        self.state.hears_every_change()
    }

    /// Whether each mount's change watcher is in place, by prefix
    /// ([`Provider::armed`](crate::Provider::armed)): a mount whose watcher is still
    /// starting says no.
    pub fn mounts_ready(&self) -> Vec<(&str, bool)> {
        self.state
            .mounts()
            .iter()
            .map(|m| (m.prefix.as_str(), m.provider.armed()))
            .collect()
    }

    /// Sets the gauges that describe the server's state now, for a metrics scrape: the
    /// budget of content in flight (`rsrc_read_budget_*`) and each mount's readiness
    /// (`rsrc_mount_ready`).
    pub fn record_gauges(&self) {
        use crate::observe;
        let budget = self.budget();
        metrics::gauge!(observe::BUDGET_BYTES).set(budget.limit() as f64);
        metrics::gauge!(observe::BUDGET_IN_USE)
            .set(budget.limit().saturating_sub(budget.available()) as f64);
        metrics::gauge!(observe::BUDGET_WAITING).set(budget.waiting() as f64);
        for (prefix, ready) in self.mounts_ready() {
            metrics::gauge!(observe::MOUNT_READY, "mount" => prefix.to_owned())
                .set(f64::from(u8::from(ready)));
        }
    }

    /// Whether the change bus delivers the other instances' events now; `None` without
    /// a bus.
    pub fn bus_connected(&self) -> Option<bool> {
        self.state.core.hub.bus().map(|bus| bus.connected())
    }

    /// Gives up this instance's leases on the bus (at shutdown), so that other instances
    /// take over the watches at once; a no-op without a bus.
    pub async fn leave_cluster(&self) {
        if let Some(bus) = self.state.core.hub.bus() {
            bus.leave().await;
        }
    }

    /// Decodes one message: a request's params into the type its method declares, so that
    /// a transport can look at the typed request ([`Prepared`]) before running it.
    pub fn prepare(&self, bytes: &[u8]) -> Incoming {
        dispatch::prepare(&self.state, bytes)
    }

    /// Puts a prepared request through the gate and runs it on `session`; the
    /// notifications it sends (progress, logs) go to `notifier`. Says whether it was
    /// refused before running, answered at once, or is running.
    pub fn run(&self, session: &Arc<Session>, request: Prepared, notifier: &Notifier) -> Outcome {
        dispatch::run(&self.state, session, request, notifier)
    }

    /// Applies a notification to `session` (`initialized`, `cancelled`).
    pub fn notify(&self, session: &Session, notice: &Notice) {
        dispatch::notify(session, notice);
    }

    /// Handles one encoded message received on `session`: [`Server::prepare`], then
    /// [`Server::run`] or [`Server::notify`]; the notifications of the request it starts
    /// go to the session's notifier.
    pub fn handle(&self, session: &Arc<Session>, bytes: &[u8]) -> Handled {
        self.handle_incoming(session, self.prepare(bytes), session.notifier())
    }

    fn handle_incoming(
        &self,
        session: &Arc<Session>,
        incoming: Incoming,
        notifier: &Notifier,
    ) -> Handled {
        match incoming {
            Incoming::Request(request) => match self.run(session, request, notifier) {
                Outcome::Refused(refusal) => Handled::Reply(refusal.into_reply()),
                Outcome::Answered(reply) => Handled::Reply(reply),
                Outcome::Running(fut) => Handled::Pending(fut),
            },
            Incoming::Notification(notice) => {
                self.notify(session, &notice);
                Handled::None
            }
            Incoming::Response => Handled::None,
            Incoming::Malformed(reply) => Handled::Reply(reply),
        }
    }

    /// The reply to a message the transport discarded for exceeding `limit` bytes;
    /// `prefix` is its beginning, from which the request id is recovered when possible.
    pub fn oversized(&self, prefix: &[u8], limit: usize) -> Reply {
        dispatch::oversized(prefix, limit)
    }

    /// What requests changed in `session` (for a [`SessionStore`](crate::sessions::SessionStore)).
    pub fn session_state(session: &Session) -> SessionState {
        SessionState {
            initialized: session.is_initialized(),
            log_level: session.log_level().and_then(|l| {
                serde_json::to_value(l)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
            }),
            subscriptions: session
                .existing_listener()
                .map(|l| l.uris())
                .unwrap_or_default(),
        }
    }

    /// Gives `session` the state another instance recorded. Subscriptions are taken
    /// without asking providers again: the instance that took them did.
    pub fn apply_session_state(&self, session: &Session, state: &SessionState) {
        if state.initialized {
            session.mark_initialized();
        }
        if let Some(level) = state
            .log_level
            .as_deref()
            .and_then(|l| serde_json::from_value(serde_json::Value::from(l)).ok())
        {
            session.set_log_level(level);
        }
        let listener = match session.existing_listener() {
            Some(l) => l,
            None if state.subscriptions.is_empty() => return,
            None => handlers::listener_of(&self.state, session),
        };
        for uri in listener.uris() {
            if state.subscriptions.binary_search(&uri).is_err() {
                listener.unsubscribe(&uri);
            }
        }
        for uri in &state.subscriptions {
            if listener.subscribe(uri).is_err() {
                tracing::debug!("a stored session holds more subscriptions than allowed here");
                break;
            }
        }
    }

    /// Tells `session` that anything may have changed: `list_changed` if it hears list
    /// changes, and an update of each of its subscriptions (its notifications may have
    /// been lost with another instance).
    pub fn resync_session(session: &Session) {
        if let Some(l) = session.existing_listener() {
            l.resync();
        }
    }

    /// The instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.state.instructions()
    }

    /// Where legacy HTTP sessions lasting `idle` are shared with the other instances,
    /// if the server's bus holds sessions.
    pub fn session_store(
        &self,
        idle: std::time::Duration,
    ) -> Option<Arc<dyn crate::sessions::SessionStore>> {
        self.state.core.hub.bus()?.session_store(idle)
    }
}
