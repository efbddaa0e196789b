//! Changes across instances: a [`ChangeBus`] carries this instance's changes to every
//! other instance serving the same sources, hands theirs to this one's listeners, and
//! grants [`Lease`]s so that one instance at a time watches each source.
//!
//! Without a bus (the default) the server is its own bus: changes reach this process's
//! listeners only, every lease is held, and signals have no one to reach. With one
//! (`ServerBuilder::bus`; on Redis, the `rsrc-redis` crate's `RedisBus`):
//!
//! - [`ChangeFeed::updated`](crate::ChangeFeed::updated) and `list_changed` reach every
//!   instance's listeners (and observers, such as read caches); a [`ChangeFeed::local`](crate::ChangeFeed::local)
//!   feed's reach only this instance's.
//! - A watcher that polls a source holds the source's lease to poll, and when it sees a
//!   change [`signal`](crate::ChangeFeed::signal)s the other instances, which then look
//!   at the source themselves, once, and tell their own subscribers through a local feed
//!   (each instance knows its own subscriptions and the digests it last told them).
//! - A bus that lost messages (a disconnection, a full queue) says so once it is back;
//!   every listener then gets `list_changed` and an update of each of its subscriptions
//!   ([`ChangeFeed::resync`](crate::ChangeFeed::resync)), so no change is lost silently.
//!   That is a *resync*: listeners catch up on changes they may have missed (not to be
//!   confused with *resuming* an SSE stream, which sends its events again).
//!
//! Invariants: publishing never blocks; a bus's queues are bounded; a lease is held by at
//! most one instance at a time as long as clocks run at the same rate (it lapses locally
//! before it expires in the store).

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::sessions::SessionStore;

/// A change as it travels between instances.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BusEvent {
    /// The resource at this URI changed.
    Updated(String),
    /// The set of resources changed.
    ListChanged,
    /// A watched source changed: instances that serve it look again (the topic names the
    /// source, as the watcher chose it).
    Signal(String),
    /// Changes under this URI prefix (everything for `""`) may have been missed.
    Resync(String),
}

/// Carries changes between the instances of one deployment.
///
/// An implementation delivers every event published by *another* instance to the sink
/// it was attached to, never blocks in [`publish`](ChangeBus::publish), bounds its
/// queues, and calls [`BusSink::lost`] once it is back from anything that may have lost
/// events.
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends `event` to every other instance. Never blocks; an event that cannot be
    /// queued must end in a [`BusEvent::Resync`] to the others.
    fn publish(&self, event: BusEvent);
    /// Starts delivering the other instances' events to `sink` (called once, when the
    /// server is built).
    fn attach(&self, sink: BusSink);
    /// The lease named `name`: held by at most one instance of the deployment at a time.
    fn lease(&self, name: &str) -> Lease;
    /// Where the 2025 revisions' HTTP sessions can live so that every instance serves
    /// them ([`crate::sessions`]), sessions lasting `idle` unused; `None` (the default): each instance keeps
    /// its own, and a balancer must route each session to one instance.
    fn session_store(&self, idle: Duration) -> Option<Arc<dyn SessionStore>> {
        let _ = idle;
        None
    }
    /// Gives up every lease this instance holds, and takes none from now on: the
    /// instance is shutting down, and the others take over at once instead of waiting
    /// for the leases to expire.
    fn leave(&self) -> crate::future::BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
    /// Whether the bus delivers the other instances' events now (for readiness reports
    /// and metrics); `true` by default.
    fn connected(&self) -> bool {
        true
    }
}

/// What a bus delivers the other instances' events to: the server's change hub.
pub(crate) trait RemoteEvents: Send + Sync {
    /// Another instance's event, for this instance's listeners and observers only.
    fn deliver_remote(&self, event: BusEvent);
    /// Changes under `prefix` may have been missed here.
    fn resync_local(&self, prefix: &str);
}

/// Where a bus delivers the other instances' events: the server's change hub, held
/// weakly (the hub holds the bus).
#[derive(Clone)]
pub struct BusSink {
    hub: Weak<dyn RemoteEvents>,
}

impl std::fmt::Debug for BusSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusSink")
            .field("alive", &(self.hub.strong_count() > 0))
            .finish()
    }
}

impl BusSink {
    pub(crate) fn new(hub: Weak<dyn RemoteEvents>) -> Self {
        BusSink { hub }
    }

    /// Delivers another instance's event to this instance's listeners and observers;
    /// `false` once the server is gone.
    pub fn deliver(&self, event: BusEvent) -> bool {
        self.hub
            .upgrade()
            .map(|h| h.deliver_remote(event))
            .is_some()
    }

    /// The bus may have lost events (it was disconnected, or a queue overflowed): every
    /// listener hears `list_changed` and an update of each of its subscriptions.
    pub fn lost(&self) {
        if let Some(h) = self.hub.upgrade() {
            h.resync_local("");
        }
    }
}

/// The right to watch one source, for one instance at a time. Cheap to clone; checking
/// it costs a lock and a clock read.
#[derive(Clone, Debug)]
pub struct Lease {
    /// Until when it is held; `None`: not held. Always held without a bus.
    until: Option<Arc<Mutex<Option<Instant>>>>,
}

impl Lease {
    /// A lease that is always held: the server has no bus, or one instance only.
    pub fn always() -> Lease {
        Lease { until: None }
    }

    /// A lease held until the instant the bus sets in the returned handle.
    pub fn until(state: Arc<Mutex<Option<Instant>>>) -> Lease {
        Lease { until: Some(state) }
    }

    /// Whether this instance holds it now.
    pub fn held(&self) -> bool {
        match &self.until {
            None => true,
            Some(until) => until
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some_and(|u| Instant::now() < u),
        }
    }
}
