//! The per-request context handed to providers, and the [`Notifier`] that carries
//! server-to-client notifications to the transport.
//!
//! Invariants:
//! - Progress notifications only go out while the request is in flight, only when the
//!   client gave a `progressToken`, and only with a strictly increasing `progress`.
//! - Log notifications only go out at or above the level the client asked for; a client
//!   that asked for nothing gets none.
//! - Sending never blocks: the notification queue is bounded and a full queue drops the
//!   notification (progress and logs are advisory).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rsrc_protocol::jsonrpc::{self, RequestId};
use rsrc_protocol::lifecycle::{LoggingMessageParams, ProgressParams};
use rsrc_protocol::meta::{NotificationMeta, ProgressToken};
use rsrc_protocol::methods::{
    LoggingMessage, NotificationMethod, Progress, ResourceListChanged, ResourceUpdated,
    SubscriptionsAcknowledged,
};
use rsrc_protocol::resources::{EmptyNotificationParams, ResourceUpdatedParams};
use rsrc_protocol::subscriptions::SubscriptionsAcknowledgedParams;
use rsrc_protocol::{Implementation, LoggingLevel, ProtocolVersion};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::budget::{ByteBudget, Held, Reservation};

/// A notification the engine sends, typed: every one there is. A transport receives
/// them encoded ([`Notifier::channel`], [`Notifier::sink`]); a host SDK that encodes them
/// itself receives them as they are ([`Notifier::typed`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// `notifications/progress`, for a request that asked for it.
    Progress(ProgressParams),
    /// `notifications/message`, at or above the level the client asked for.
    Log(LoggingMessageParams),
    /// `notifications/resources/updated`.
    Updated(ResourceUpdatedParams),
    /// `notifications/resources/list_changed`.
    ListChanged(EmptyNotificationParams),
    /// `notifications/subscriptions/acknowledged`: what a `subscriptions/listen` stream
    /// holds, sent before anything is delivered on it.
    Acknowledged(SubscriptionsAcknowledgedParams),
}

impl Notification {
    /// Its method's wire name.
    pub fn method(&self) -> &'static str {
        match self {
            Notification::Progress(_) => Progress::NAME,
            Notification::Log(_) => LoggingMessage::NAME,
            Notification::Updated(_) => ResourceUpdated::NAME,
            Notification::ListChanged(_) => ResourceListChanged::NAME,
            Notification::Acknowledged(_) => SubscriptionsAcknowledged::NAME,
        }
    }

    /// The `subscriptions/listen` stream it belongs to (2026-07-28), if it belongs to one.
    pub fn subscription(&self) -> Option<&RequestId> {
        self.meta()?.subscription_id.as_ref()
    }

    /// Its `_meta`, if it has one.
    pub fn meta(&self) -> Option<&NotificationMeta> {
        match self {
            Notification::Progress(p) => p.meta.as_ref(),
            Notification::Log(p) => p.meta.as_ref(),
            Notification::Updated(p) => p.meta.as_ref(),
            Notification::ListChanged(p) => p.meta.as_ref(),
            Notification::Acknowledged(p) => p.meta.as_ref(),
        }
    }

    /// The JSON-RPC message, without a trailing newline.
    pub fn encode(&self) -> serde_json::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(128);
        let method = self.method();
        match self {
            Notification::Progress(p) => jsonrpc::write_notification(&mut buf, method, Some(p)),
            Notification::Log(p) => jsonrpc::write_notification(&mut buf, method, Some(p)),
            Notification::Updated(p) => jsonrpc::write_notification(&mut buf, method, Some(p)),
            Notification::ListChanged(p) => jsonrpc::write_notification(&mut buf, method, Some(p)),
            Notification::Acknowledged(p) => jsonrpc::write_notification(&mut buf, method, Some(p)),
        }?;
        Ok(buf)
    }
}

/// The outlet for notifications of one connection, session or request stream: encoded
/// JSON-RPC messages (without a trailing newline) for a transport, or typed
/// [`Notification`]s for a host SDK.
#[derive(Clone)]
pub struct Notifier {
    outlet: Outlet,
}

#[derive(Clone)]
enum Outlet {
    Discard,
    Channel(mpsc::Sender<Vec<u8>>),
    Sink(Arc<dyn NotificationSink>),
    Typed(mpsc::Sender<Notification>),
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.outlet {
            Outlet::Discard => "Notifier(discard)",
            Outlet::Channel(_) => "Notifier(channel)",
            Outlet::Sink(_) => "Notifier(sink)",
            Outlet::Typed(_) => "Notifier(typed)",
        })
    }
}

/// Where a transport wants notifications delivered when a bounded channel does not fit
/// (e.g. a replayable event log).
///
/// `push` must not block; it returns `false` when the message was dropped.
pub trait NotificationSink: Send + Sync + 'static {
    /// Takes one encoded message.
    fn push(&self, message: Vec<u8>) -> bool;

    /// Completes when the sink has room for more (the default: at once). Deliveries that
    /// can wait (change notifications, which coalesce meanwhile) wait for it.
    fn ready(&self) -> crate::future::BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

impl Notifier {
    /// A notifier and the receiving end the transport drains, holding at most `capacity`
    /// queued messages.
    pub fn channel(capacity: usize) -> (Notifier, mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Notifier {
                outlet: Outlet::Channel(tx),
            },
            rx,
        )
    }

    /// A notifier that hands every message to `sink`.
    pub fn sink(sink: Arc<dyn NotificationSink>) -> Notifier {
        Notifier {
            outlet: Outlet::Sink(sink),
        }
    }

    /// A notifier that discards everything (for contexts with no outlet).
    pub fn discard() -> Notifier {
        Notifier {
            outlet: Outlet::Discard,
        }
    }

    /// A notifier for a host SDK that encodes notifications itself: the receiving end
    /// gets them typed, at most `capacity` queued.
    pub fn typed(capacity: usize) -> (Notifier, mpsc::Receiver<Notification>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Notifier {
                outlet: Outlet::Typed(tx),
            },
            rx,
        )
    }

    /// Queues a notification. Returns `false` when it was dropped because the queue is
    /// full or the transport is gone.
    pub(crate) fn send(&self, notification: Notification) -> bool {
        match &self.outlet {
            Outlet::Discard => false,
            Outlet::Typed(tx) => tx.try_send(notification).is_ok(),
            Outlet::Channel(tx) => encoded(&notification).is_some_and(|b| tx.try_send(b).is_ok()),
            Outlet::Sink(sink) => encoded(&notification).is_some_and(|b| sink.push(b)),
        }
    }

    /// Sends a notification once the outlet has room, waiting for it rather than
    /// dropping. Returns `false` if the transport is gone.
    pub(crate) async fn send_when_ready(&self, notification: Notification) -> bool {
        match &self.outlet {
            Outlet::Discard => false,
            Outlet::Typed(tx) => tx.send(notification).await.is_ok(),
            Outlet::Channel(tx) => match (encoded(&notification), tx.reserve().await) {
                (Some(bytes), Ok(permit)) => {
                    permit.send(bytes);
                    true
                }
                _ => false,
            },
            Outlet::Sink(sink) => match encoded(&notification) {
                Some(bytes) => {
                    sink.ready().await;
                    sink.push(bytes)
                }
                None => false,
            },
        }
    }
}

/// `notification` encoded, or `None` (logged) if it cannot be: a provider's log data
/// holding a non-finite number, say.
fn encoded(notification: &Notification) -> Option<Vec<u8>> {
    notification
        .encode()
        .inspect_err(|e| {
            tracing::debug!(method = notification.method(), error = %e, "a notification could not be encoded");
        })
        .ok()
}

/// What a provider knows about the request it is serving.
///
/// Cheap to clone; a clone refers to the same request.
#[derive(Clone, Debug)]
pub struct RequestContext {
    state: Arc<RequestState>,
}

#[derive(Debug)]
struct RequestState {
    id: RequestId,
    version: ProtocolVersion,
    cancel: CancellationToken,
    closing: CancellationToken,
    progress_token: Option<ProgressToken>,
    last_progress: Mutex<Option<f64>>,
    done: AtomicBool,
    log_level: Option<LoggingLevel>,
    client_info: Option<Arc<Implementation>>,
    notifier: Notifier,
    held: Option<Held>,
}

/// Everything needed to build a [`RequestContext`].
#[derive(Debug)]
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) version: ProtocolVersion,
    pub(crate) cancel: CancellationToken,
    pub(crate) closing: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) notifier: Notifier,
    /// The server's budget of content in flight (none: nothing is accounted).
    pub(crate) budget: Option<ByteBudget>,
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> Self {
        RequestContext {
            state: Arc::new(RequestState {
                id: parts.id,
                version: parts.version,
                cancel: parts.cancel,
                closing: parts.closing,
                progress_token: parts.progress_token,
                last_progress: Mutex::new(None),
                done: AtomicBool::new(false),
                log_level: parts.log_level,
                client_info: parts.client_info,
                notifier: parts.notifier,
                held: parts.budget.map(Held::new),
            }),
        }
    }

    /// A context for calling a provider outside any request (tests, tools, benchmarks):
    /// the newest revision, never cancelled, notifications discarded.
    pub fn detached() -> Self {
        RequestContext::new(ContextParts {
            id: RequestId::Number(0),
            version: ProtocolVersion::LATEST,
            cancel: CancellationToken::new(),
            closing: CancellationToken::new(),
            progress_token: None,
            log_level: None,
            client_info: None,
            notifier: Notifier::discard(),
            budget: None,
        })
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.state.id
    }

    /// The revision the request speaks.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.state.version
    }

    /// The client's self-reported name and version, if it gave one.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.state.client_info.as_deref()
    }

    /// Whether the client cancelled the request (or the connection closed). A provider
    /// doing long work should check this, or await [`RequestContext::cancelled`].
    pub fn is_cancelled(&self) -> bool {
        self.state.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.state.cancel.cancelled()
    }

    /// Completes when the transport is closing: a request that would run until
    /// cancelled (a subscription stream) should end now, with its result.
    pub fn closing(&self) -> WaitForCancellationFuture<'_> {
        self.state.closing.cancelled()
    }

    /// Waits until `bytes` more content fit the server's budget of content in flight
    /// ([`ServerConfig::read_budget`](crate::ServerConfig::read_budget)), then holds them
    /// for this request until its response has been written out or dropped.
    ///
    /// Call it before allocating anything large that the result will carry (a provider
    /// about to read a file of known size), ideally once for everything. Waiting never
    /// fails; a cancelled request stops waiting when its future is dropped. Outside a
    /// server (a [`detached`](RequestContext::detached) context) it returns at once.
    pub async fn reserve(&self, bytes: u64) {
        if let Some(held) = &self.state.held {
            held.reserve(bytes).await;
        }
    }

    /// Whether this request holds part of the budget.
    pub(crate) fn holds_reservation(&self) -> bool {
        self.state.held.as_ref().is_some_and(Held::holds_any)
    }

    /// What this request holds of the budget, now owned by the caller.
    pub(crate) fn take_reservation(&self) -> Reservation {
        self.state.held.as_ref().map(Held::take).unwrap_or_default()
    }

    /// Reports progress when the client asked for it; a value not greater than the
    /// previous one, or any report after the request finished, is dropped.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.state.progress_token else {
            return;
        };
        if self.state.done.load(Ordering::Acquire) || !progress.is_finite() {
            return;
        }
        {
            let mut last = self
                .state
                .last_progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|l| progress <= l) {
                return;
            }
            *last = Some(progress);
        }
        self.state
            .notifier
            .send(Notification::Progress(ProgressParams {
                progress_token: token.clone(),
                progress,
                total: total.filter(|t| t.is_finite()),
                message: message.map(str::to_owned),
                meta: None,
            }));
    }

    /// Sends `notifications/message` when the client asked for this level or lower.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: serde_json::Value) {
        if self.state.done.load(Ordering::Acquire) {
            return;
        }
        if self.state.log_level.is_some_and(|min| level >= min) {
            self.state
                .notifier
                .send(Notification::Log(LoggingMessageParams {
                    level,
                    logger: logger.map(str::to_owned),
                    data,
                    meta: None,
                }));
        }
    }

    /// Where the request's notifications go.
    pub(crate) fn notifier(&self) -> &Notifier {
        &self.state.notifier
    }

    /// Marks the request finished: no notification may follow its response.
    pub(crate) fn finish(&self) {
        self.state.done.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(
        progress: Option<ProgressToken>,
        level: Option<LoggingLevel>,
    ) -> (RequestContext, mpsc::Receiver<Vec<u8>>) {
        let (notifier, rx) = Notifier::channel(8);
        let ctx = RequestContext::new(ContextParts {
            id: RequestId::Number(1),
            version: ProtocolVersion::LATEST_LEGACY,
            cancel: CancellationToken::new(),
            closing: CancellationToken::new(),
            progress_token: progress,
            log_level: level,
            client_info: None,
            notifier,
            budget: None,
        });
        (ctx, rx)
    }

    #[test]
    fn progress_needs_a_token_and_must_increase() {
        let (c, mut rx) = ctx(None, None);
        c.report_progress(1.0, None, None);
        assert!(rx.try_recv().is_err());

        let (c, mut rx) = ctx(Some(RequestId::from("t")), None);
        c.report_progress(1.0, Some(4.0), Some("one"));
        c.report_progress(1.0, Some(4.0), None);
        c.report_progress(0.5, Some(4.0), None);
        c.report_progress(2.0, Some(4.0), None);
        let first: serde_json::Value = serde_json::from_slice(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(first["params"]["progressToken"], "t");
        assert_eq!(first["params"]["message"], "one");
        let second: serde_json::Value = serde_json::from_slice(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(second["params"]["progress"], 2.0);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn nothing_follows_a_finished_request() {
        let (c, mut rx) = ctx(Some(RequestId::Number(9)), Some(LoggingLevel::Debug));
        c.finish();
        c.report_progress(1.0, None, None);
        c.log(LoggingLevel::Error, None, serde_json::json!("late"));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn logs_respect_the_requested_level() {
        let (c, mut rx) = ctx(None, None);
        c.log(LoggingLevel::Emergency, None, serde_json::json!("x"));
        assert!(rx.try_recv().is_err(), "no level requested: no logs");
        let (c, mut rx) = ctx(None, Some(LoggingLevel::Warning));
        c.log(LoggingLevel::Info, None, serde_json::json!("quiet"));
        c.log(LoggingLevel::Error, Some("fs"), serde_json::json!("loud"));
        let m: serde_json::Value = serde_json::from_slice(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(m["params"]["data"], "loud");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_full_queue_drops_instead_of_blocking() {
        let (notifier, _rx) = Notifier::channel(1);
        let p = ProgressParams {
            progress_token: RequestId::Number(1),
            progress: 1.0,
            total: None,
            message: None,
            meta: None,
        };
        assert!(notifier.send(Notification::Progress(p.clone())));
        assert!(!notifier.send(Notification::Progress(p)));
    }
}
