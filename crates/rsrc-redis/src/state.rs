//! The bus's shared state ([`BusState`]): what every task of the bus and every session
//! store on it reads and updates, held by the [`RedisBus`](crate::RedisBus) handle and
//! (weakly) by its tasks. The rules that use it (publishing, subscribing, leases,
//! members, sessions) live beside it and take it; it calls none of them.
//!
//! Invariants: every task ends when the state is dropped (`closed` is cancelled then);
//! publishing never blocks (the queue is bounded, and an event that does not fit is
//! remembered as an overflow, for a resync); session-change handlers are held weakly,
//! each dropped with its store.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use rsrc::bus::{BusSink, Lease};
use rsrc::keyring::Keyring;
use rsrc::sessions::SessionChanged;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::options::RedisBusOptions;
use crate::rejections::Rejections;
use crate::resync::Resyncs;
use crate::wire::{Channel, Out, Reject};

/// A lease's local state: until when this instance holds it (`None`: not held).
pub(crate) type LeaseState = Arc<Mutex<Option<Instant>>>;
/// A lease's local state as the bus holds it: dropped with the last [`Lease`].
pub(crate) type WeakLease = Weak<Mutex<Option<Instant>>>;

/// How long after the subscription came back from a failure a session missing from Redis
/// may still be put back by an instance that has a copy (Redis may have restarted empty).
const RECOVERY: Duration = Duration::from_secs(10);

/// The bus keys, one ring per purpose.
#[derive(Debug)]
pub(crate) struct BusKeys {
    /// Sessions' names in Redis (digests of their ids and owners).
    pub(crate) names: Keyring,
    /// Session records' fields.
    pub(crate) fields: Keyring,
    /// Replay-log entries.
    pub(crate) logs: Keyring,
    /// Instances' records of what they serve.
    pub(crate) members: Keyring,
}

impl BusKeys {
    /// The rings of every purpose, derived from the deployment's bus keys. The labels
    /// are part of what is stored: changing one makes everything written before unread.
    pub(crate) fn derive(keys: &Keyring) -> BusKeys {
        BusKeys {
            names: keys.derive("rsrc/bus/session-names"),
            fields: keys.derive("rsrc/bus/session-fields"),
            logs: keys.derive("rsrc/bus/replay-logs"),
            members: keys.derive("rsrc/bus/members"),
        }
    }
}

/// The state of one bus, shared by its handle, its tasks and its session stores.
#[derive(Debug)]
pub(crate) struct BusState {
    pub(crate) client: redis::Client,
    /// This instance's id: `PID-RANDOM`.
    pub(crate) id: String,
    pub(crate) channel: Channel,
    pub(crate) keys: BusKeys,
    pub(crate) options: RedisBusOptions,
    pub(crate) queue: mpsc::Sender<Out>,
    /// An event did not fit in the queue.
    pub(crate) overflowed: AtomicBool,
    /// The sequence number of the last event sent.
    pub(crate) seq: AtomicU64,
    pub(crate) sink: OnceLock<BusSink>,
    pub(crate) leases: Mutex<Vec<(String, WeakLease)>>,
    /// A round trip failed: the subscription restarts.
    pub(crate) broken: Arc<Notify>,
    pub(crate) runtime: tokio::runtime::Handle,
    /// Held while this instance lives: `NAMESPACE:lease:instance:ID` tells the others
    /// whether a stream this instance writes may still end.
    pub(crate) alive: OnceLock<Lease>,
    /// The handlers of every session store of this bus
    /// ([`SessionStore::on_change`](rsrc::sessions::SessionStore::on_change)), each
    /// dropped with its store.
    session_handlers: Mutex<Vec<Weak<SessionHandlers>>>,
    /// Resyncs asked for, done by one task.
    pub(crate) resyncs: Arc<Resyncs>,
    /// What was refused.
    pub(crate) rejections: Rejections,
    /// Shutting down: leases are given up and not taken again.
    pub(crate) leaving: AtomicBool,
    /// When this instance last heard its own heartbeat, in ms since `epoch`.
    pub(crate) echo_ms: AtomicU64,
    /// When the subscription last came back after a failure, in ms since `epoch` (0:
    /// never).
    pub(crate) recovered_ms: AtomicU64,
    /// The subscription is up.
    pub(crate) subscribed: AtomicBool,
    /// Attempts to subscribe that failed, since the bus started.
    pub(crate) subscribe_failures: AtomicU64,
    epoch: Instant,
    /// Cancelled when the bus is dropped: its tasks end.
    pub(crate) closed: CancellationToken,
}

impl Drop for BusState {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// The session-change handlers of one session store.
#[derive(Default)]
pub(crate) struct SessionHandlers(Mutex<Vec<SessionChanged>>);

impl std::fmt::Debug for SessionHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionHandlers")
    }
}

impl SessionHandlers {
    fn call(&self, name: Option<&str>) {
        for h in self.0.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            h(name);
        }
    }

    /// Adds a handler, called from now on.
    pub(crate) fn add(&self, handler: SessionChanged) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(handler);
    }
}

impl BusState {
    /// The state of a bus just connected: nothing sent, heard or held yet.
    pub(crate) fn new(
        client: redis::Client,
        id: String,
        keys: &Keyring,
        options: RedisBusOptions,
        queue: mpsc::Sender<Out>,
    ) -> BusState {
        BusState {
            client,
            id,
            channel: Channel::new(
                format!("{}:changes", options.namespace),
                keys.derive("rsrc/bus/messages"),
            ),
            keys: BusKeys::derive(keys),
            options,
            queue,
            overflowed: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            sink: OnceLock::new(),
            leases: Mutex::new(Vec::new()),
            broken: Arc::new(Notify::new()),
            runtime: tokio::runtime::Handle::current(),
            alive: OnceLock::new(),
            session_handlers: Mutex::new(Vec::new()),
            resyncs: Arc::new(Resyncs::default()),
            rejections: Rejections::default(),
            leaving: AtomicBool::new(false),
            echo_ms: AtomicU64::new(0),
            recovered_ms: AtomicU64::new(0),
            subscribed: AtomicBool::new(false),
            subscribe_failures: AtomicU64::new(0),
            epoch: Instant::now(),
            closed: CancellationToken::new(),
        }
    }

    /// Queues `out` for the other instances; never blocks.
    pub(crate) fn send(&self, out: Out) {
        if self.queue.try_send(out).is_err() {
            self.overflowed.store(true, Ordering::Release);
        }
    }

    /// Tells every session store of this bus that session `name` (all for `None`)
    /// changed.
    pub(crate) fn sessions_changed(&self, name: Option<&str>) {
        let live: Vec<Arc<SessionHandlers>> = {
            let mut all = self
                .session_handlers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.retain(|w| w.strong_count() > 0);
            all.iter().filter_map(Weak::upgrade).collect()
        };
        for h in live {
            h.call(name);
        }
    }

    /// Registers a session store's handlers (held weakly).
    pub(crate) fn add_session_handlers(&self, handlers: &Arc<SessionHandlers>) {
        let mut all = self
            .session_handlers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(handlers));
    }

    /// Milliseconds since the bus started.
    pub(crate) fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the subscription is down, or came back from a failure within
    /// [`RECOVERY`]: Redis may have lost data that instances are putting back.
    pub(crate) fn recovering(&self) -> bool {
        let at = self.recovered_ms.load(Ordering::Acquire);
        !self.subscribed.load(Ordering::Acquire)
            || (at != 0
                && self.now_ms().saturating_sub(at)
                    < u64::try_from(RECOVERY.as_millis()).unwrap_or(u64::MAX))
    }

    /// A message on the channel was refused.
    pub(crate) fn rejected_message(&self, why: Reject) {
        let (why, reason) = match why {
            Reject::Forged => ("its tag does not verify", "mac"),
            Reject::Malformed => ("not one of ours", "malformed"),
            // The metric's label predates the word: dashboards count it as `replayed`.
            Reject::Stale => ("stale or heard before", "replayed"),
        };
        metrics::counter!(rsrc::observe::BUS_REFUSED, "reason" => reason).increment(1);
        self.rejections.message(self.now_ms(), why);
    }

    /// What was read back from Redis for a session (`what`) was refused (`why`).
    pub(crate) fn rejected_stored(&self, what: &str, why: &str) {
        self.rejections.stored(self.now_ms(), what, why);
    }
}
