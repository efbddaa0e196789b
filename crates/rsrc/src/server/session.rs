//! [`Session`]: what a server remembers about one connection (stdio) or one legacy HTTP
//! session — the negotiated legacy revision, the log level, the requests in flight and
//! the subscriptions.
//!
//! Invariants:
//! - A revision is negotiated at most once (`initialize` twice is refused).
//! - Every in-flight request is registered under its id until its reply is produced or it
//!   is cancelled; a second request with the id of one still in flight is refused.
//! - Closing the session cancels everything still in flight; dropping it releases its
//!   subscriptions.
//! - A negotiated session counts in `rsrc_sessions_open` from `initialize` until it is
//!   dropped, and its lifetime is recorded then (`mcp_server_session_duration_seconds`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::lifecycle::ClientCapabilities;
use rsrc_protocol::{Implementation, LoggingLevel, ProtocolVersion};
use tokio_util::sync::CancellationToken;

use crate::changes::Listener;
use crate::context::Notifier;
use crate::observe::{self, Transport};

/// The outcome of a legacy `initialize` (settled by the gate).
#[derive(Debug, Clone)]
pub struct Negotiated {
    /// The revision agreed.
    pub version: ProtocolVersion,
    /// The client's `clientInfo`.
    pub client_info: Option<Arc<Implementation>>,
    /// Kept for a shared session store.
    pub capabilities: Arc<ClientCapabilities>,
    /// When `initialize` settled it.
    pub at: Instant,
}

/// What carries a session's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carrier {
    /// A connection (stdio, a socket, in memory): both eras.
    Connection,
    /// A legacy Streamable HTTP session.
    HttpSession,
    /// One stateless request.
    Stateless,
}

/// The state of one connection or legacy session.
#[derive(Debug)]
pub struct Session {
    /// Where its requests arrive, for the gate.
    kind: Carrier,
    /// A legacy HTTP session's id (`Mcp-Session-Id`), for traces.
    http_id: Option<Arc<str>>,
    negotiated: OnceLock<Negotiated>,
    /// Whether it counts in `rsrc_sessions_open` (negotiated here, not a copy restored
    /// from a shared store: the session began, and will end, elsewhere).
    counted: AtomicBool,
    initialized: AtomicBool,
    log_level: Mutex<Option<LoggingLevel>>,
    inflight: Mutex<HashMap<RequestId, (u64, CancellationToken)>>,
    notifier: Notifier,
    /// The session's subscriptions, made at the first subscription.
    listener: OnceLock<Arc<Listener>>,
    /// Cancelled when the transport is closing: long-lived requests end gracefully.
    closing: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    /// A fresh session whose notifications go to `notifier`.
    pub fn new(notifier: Notifier) -> Self {
        Session::build(notifier, Carrier::Connection)
    }

    /// A session for one stateless request (a 2026-07-28 HTTP POST): every request must
    /// carry its revision in `_meta`, and the `initialize` handshake does not exist.
    pub fn stateless(notifier: Notifier) -> Self {
        Session::build(notifier, Carrier::Stateless)
    }

    /// A legacy Streamable HTTP session: the 2025 revisions only (a 2026-07-28 request
    /// travels with its own `MCP-Protocol-Version`, outside any session).
    pub fn http(notifier: Notifier, id: Arc<str>) -> Self {
        let mut session = Session::build(notifier, Carrier::HttpSession);
        session.http_id = Some(id);
        session
    }

    fn build(notifier: Notifier, kind: Carrier) -> Self {
        Session {
            kind,
            http_id: None,
            negotiated: OnceLock::new(),
            counted: AtomicBool::new(false),
            initialized: AtomicBool::new(false),
            log_level: Mutex::new(None),
            inflight: Mutex::new(HashMap::new()),
            notifier,
            listener: OnceLock::new(),
            closing: CancellationToken::new(),
        }
    }

    /// Makes `closing` the signal that the transport is closing (e.g. a server-wide
    /// shutdown token), instead of [`Session::close_gracefully`] alone.
    #[must_use]
    pub fn closing_with(mut self, closing: CancellationToken) -> Self {
        self.closing = closing;
        self
    }

    /// Asks long-lived requests (`subscriptions/listen`) to end with their completion
    /// result: the transport is closing.
    pub fn close_gracefully(&self) {
        self.closing.cancel();
    }

    pub(crate) fn closing(&self) -> &CancellationToken {
        &self.closing
    }

    /// Whether this session serves only per-request (2026-07-28) requests.
    pub fn is_stateless(&self) -> bool {
        self.kind == Carrier::Stateless
    }

    /// What carries this session's requests (the gate places them by it).
    pub(crate) fn carrier(&self) -> Carrier {
        self.kind
    }

    /// The legacy revision negotiated by `initialize`, if any.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.negotiated.get().map(|n| n.version)
    }

    /// What `initialize` settled, if it ran (here or, for a shared session, elsewhere).
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.get()
    }

    /// Records the outcome of `initialize` (the gate's, [`super::gate::initialize`]);
    /// `false` if one was already recorded.
    pub(crate) fn negotiate(&self, n: Negotiated) -> bool {
        let first = self.negotiated.set(n).is_ok();
        if first {
            self.counted.store(true, Ordering::Release);
            metrics::gauge!(observe::SESSIONS_OPEN, "network_transport" => self.transport().as_str())
                .increment(1);
        }
        first
    }

    /// Records the outcome of an `initialize` answered elsewhere (a copy of a shared
    /// session): not counted as a session opened here.
    pub fn negotiated_elsewhere(&self, n: Negotiated) -> bool {
        self.negotiated.set(n).is_ok()
    }

    /// The `network.transport` its requests arrive on.
    pub(crate) fn transport(&self) -> Transport {
        match self.kind {
            Carrier::Connection => Transport::Pipe,
            Carrier::HttpSession | Carrier::Stateless => Transport::Tcp,
        }
    }

    /// A legacy HTTP session's id.
    pub(crate) fn http_id(&self) -> Option<&str> {
        self.http_id.as_deref()
    }

    /// Whether the client sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Release);
    }

    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *lock(&self.log_level)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *lock(&self.log_level) = Some(level);
    }

    pub(crate) fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// The session's listener of changes, made by `make` the first time.
    pub(crate) fn listener(&self, make: impl FnOnce() -> Arc<Listener>) -> &Arc<Listener> {
        self.listener.get_or_init(make)
    }

    /// The session's listener, if it has one yet.
    pub(crate) fn existing_listener(&self) -> Option<&Arc<Listener>> {
        self.listener.get()
    }

    /// Registers a request in flight under a unique `serial`; `None` when a request with
    /// this id already is in flight.
    pub(crate) fn begin(&self, id: &RequestId, serial: u64) -> Option<CancellationToken> {
        let mut inflight = lock(&self.inflight);
        if inflight.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        inflight.insert(id.clone(), (serial, token.clone()));
        Some(token)
    }

    /// Unregisters the request `begin` registered with `serial` (not a later request that
    /// reused the id after this one was cancelled).
    pub(crate) fn end(&self, id: &RequestId, serial: u64) {
        let mut inflight = lock(&self.inflight);
        if inflight.get(id).is_some_and(|(s, _)| *s == serial) {
            inflight.remove(id);
        }
    }

    /// Cancels the request with this id, if it is in flight.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        match lock(&self.inflight).remove(id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// How many requests are in flight.
    pub fn in_flight(&self) -> usize {
        lock(&self.inflight).len()
    }

    /// Cancels every request in flight (the connection is closing).
    pub fn cancel_all(&self) {
        for (_, (_, token)) in lock(&self.inflight).drain() {
            token.cancel();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.cancel_all();
        if let Some(n) = self.negotiated.get()
            && self.counted.load(Ordering::Acquire)
        {
            let transport = self.transport().as_str();
            metrics::gauge!(observe::SESSIONS_OPEN, "network_transport" => transport).decrement(1);
            metrics::histogram!(
                observe::SESSION_DURATION,
                "mcp_protocol_version" => n.version.as_str(),
                "network_transport" => transport,
            )
            .record(n.at.elapsed().as_secs_f64());
        }
    }
}
