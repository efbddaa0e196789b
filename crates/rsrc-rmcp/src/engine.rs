//! Driving rsrc's engine from inside an rmcp handler, through the engine's typed host API
//! (`rsrc::server::HostRequest`): one request at a time, through the engine's own gate,
//! handlers, cache, cursors and error codes, with no JSON between rmcp and the engine.
//!
//! A request rmcp has decoded is handed over typed (`convert.rs` maps rmcp's types to
//! the engine's), with the `_meta` rmcp took out of it; its typed result comes back and
//! is mapped to rmcp's type; its notifications come back typed and are sent as rmcp's.
//!
//! Invariants:
//! - The revision a request is served under is the engine's decision alone, from its
//!   `_meta` and the connection's handshake, as on rsrc's own server: every request runs
//!   on the connection's session ([`Connection`]), opened once from the handshake rmcp
//!   made.
//! - The notifications a request sends (progress, logs, a listen stream's changes) go to
//!   the client through rmcp's peer from the request's own task, in order and before its
//!   reply, so rmcp keeps them on the request's stream; the session's own (a 2025
//!   session's `updated` and `list_changed`) through a task per connection.
//! - A request cancelled by rmcp (its token) is dropped, which cancels it in the engine.
//! - A listen stream hears every change published after rmcp acknowledged it: the engine
//!   holds its changes from then ([`Connection::hold`]).
//! - When standard input closes (served with [`crate::stdio`]), the connection's session
//!   closes gracefully: a listen stream ends with its result, and rmcp exits at once.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{ErrorCode, ErrorData, SubscriptionFilter};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rsrc::protocol::ErrorObject;
use rsrc::server::{HeldChanges, HostRequest, Outcome, Reply, Session};
use rsrc::{Notification, Notifier, Server};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::convert;

/// Notifications a 2025 session may have queued for its client (the engine's own bound
/// for a connection: beyond it, changes coalesce in the listeners' outboxes).
const SESSION_QUEUE: usize = 1024;

/// Notifications one request may have queued (progress and logs beyond it are dropped,
/// as the engine does on a full connection; a listen stream's changes wait).
const REQUEST_QUEUE: usize = 64;

/// Listen streams rmcp may have acknowledged on one connection before their requests
/// run: beyond it, the oldest holds are let go.
const MAX_HELD: usize = 64;

/// Cancelled when standard input, served with [`crate::stdio`], reaches its end.
pub(crate) fn stdin_closed() -> &'static CancellationToken {
    static CLOSED: OnceLock<CancellationToken> = OnceLock::new();
    CLOSED.get_or_init(CancellationToken::new)
}

/// Whether this process serves standard input with [`crate::stdio`].
pub(crate) static SERVES_STDIN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// What one rmcp connection keeps of the engine: its session, and the changes held for
/// the listen streams rmcp acknowledged whose requests have not run yet.
#[derive(Default)]
pub(crate) struct Connection {
    session: OnceLock<Arc<Session>>,
    held: Mutex<Vec<(SubscriptionFilter, HeldChanges)>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// The connection's session, opened on first use from the handshake rmcp made (none
    /// on a 2026-07-28 connection); its own notifications reach the client through `peer`.
    pub(crate) fn session(&self, server: &Server, peer: &Peer<RoleServer>) -> Arc<Session> {
        Arc::clone(self.session.get_or_init(|| open_session(server, peer)))
    }

    /// Starts holding the changes of a listen stream rmcp is about to acknowledge with
    /// `accepted`.
    pub(crate) fn hold(&self, server: &Server, accepted: &SubscriptionFilter) {
        let held = server.hold_changes(&convert::filter(accepted));
        let mut all = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if all.len() == MAX_HELD {
            all.remove(0);
        }
        all.push((accepted.clone(), held));
    }

    /// The changes held for a stream acknowledged with `accepted` (the oldest such).
    pub(crate) fn take_held(&self, accepted: &SubscriptionFilter) -> Option<HeldChanges> {
        let mut all = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let at = all.iter().position(|(filter, _)| filter == accepted)?;
        Some(all.remove(at).1)
    }
}

fn open_session(server: &Server, peer: &Peer<RoleServer>) -> Arc<Session> {
    let (notifier, rx) = Notifier::typed(SESSION_QUEUE);
    tokio::spawn(forward_session(rx, peer.clone()));
    let handshake = peer.peer_info().and_then(|info| convert::handshake(&info));
    let session = server.open_session(handshake, notifier);
    if SERVES_STDIN.load(std::sync::atomic::Ordering::Acquire) {
        let weak = Arc::downgrade(&session);
        tokio::spawn(async move {
            stdin_closed().cancelled().await;
            if let Some(session) = weak.upgrade() {
                session.close_gracefully();
            }
        });
    }
    session
}

/// Sends a 2025 session's notifications until the session or the client is gone.
async fn forward_session(mut rx: mpsc::Receiver<Notification>, peer: Peer<RoleServer>) {
    while let Some(n) = rx.recv().await {
        if let Some(n) = convert::notification(n)
            && peer.send_notification(n).await.is_err()
        {
            break;
        }
    }
}

/// What kind of request a call is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A request: cancelled by rmcp, it fails (nothing is sent for it anyway).
    Request,
    /// A `subscriptions/listen` stream, which rmcp acknowledged itself: the engine's
    /// acknowledgement is not sent; cancelled, it ends with no reply (rmcp answers its
    /// end itself).
    Listen,
}

/// How a result is taken out of the engine's reply: typed
/// ([`Reply::into_typed`](rsrc::server::Reply::into_typed)) or, for an extension method,
/// as JSON ([`Reply::into_json`](rsrc::server::Reply::into_json)).
pub(crate) type Take<T> = fn(Reply) -> Result<T, ErrorObject>;

/// Runs `request` on the engine, as the request `context` describes, and takes its
/// result out with `take`. `None`: a listen stream rmcp ended.
pub(crate) async fn run<T>(
    server: &Server,
    connection: &Connection,
    context: &RequestContext<RoleServer>,
    request: HostRequest,
    mode: Mode,
    take: Take<T>,
) -> Result<Option<T>, ErrorData> {
    let typed = |reply: Reply| take(reply).map_err(|e| error_data(&e));
    let session = connection.session(server, &context.peer);
    let prepared = server.prepare_typed(convert::request_id(&context.id), request);
    let (notifier, mut rx) = Notifier::typed(REQUEST_QUEUE);
    let mut running = match server.run(&session, prepared, &notifier) {
        Outcome::Refused(refusal) => return typed(refusal.into_reply()).map(Some),
        Outcome::Answered(reply) => return typed(reply).map(Some),
        Outcome::Running(fut) => fut,
    };
    drop(notifier);
    let send = |n: Notification| async move {
        if mode == Mode::Listen && matches!(n, Notification::Acknowledged(_)) {
            return;
        }
        if let Some(n) = convert::notification(n) {
            let _ = context.peer.send_notification(n).await;
        }
    };
    loop {
        tokio::select! {
            biased;
            Some(n) = rx.recv() => send(n).await,
            reply = &mut running => {
                while let Ok(n) = rx.try_recv() {
                    send(n).await;
                }
                return match reply {
                    Some(reply) => typed(reply).map(Some),
                    None => cancelled(mode),
                };
            }
            () = context.ct.cancelled() => return cancelled(mode),
        }
    }
}

fn cancelled<T>(mode: Mode) -> Result<Option<T>, ErrorData> {
    match mode {
        Mode::Listen => Ok(None),
        Mode::Request => Err(ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            "the request was cancelled",
            None,
        )),
    }
}

/// Runs a request whose result is `T`; a cancelled one fails.
pub(crate) async fn request<T: 'static>(
    server: &Server,
    connection: &Connection,
    context: &RequestContext<RoleServer>,
    request: HostRequest,
) -> Result<T, ErrorData> {
    run(
        server,
        connection,
        context,
        request,
        Mode::Request,
        Reply::into_typed::<T>,
    )
    .await?
    .ok_or_else(|| ErrorData::internal_error("no reply", None))
}

/// The engine's error as rmcp's.
pub(crate) fn error_data(e: &rsrc::protocol::ErrorObject) -> ErrorData {
    ErrorData::new(ErrorCode(e.code.0), e.message.clone(), e.data.clone())
}
