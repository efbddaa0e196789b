//! Change notifications: providers publish through a [`ChangeFeed`]; the hub delivers
//! each change to the listeners that asked for it — a legacy session's subscriptions, or
//! one 2026-07-28 `subscriptions/listen` stream.
//!
//! Invariants:
//! - A listener receives `notifications/resources/updated` only for URIs it subscribed
//!   to, and `list_changed` only if it asked for it (legacy sessions ask at `initialize`
//!   when the server declares `listChanged`).
//! - A listener holds at most `max` subscriptions.
//! - The hub holds listeners weakly: a session or stream that ends stops receiving at
//!   once, and dropping a listener removes its entries.
//! - Publishing never blocks: a change goes into each listener's outbox, which holds each
//!   URI at most once; a task per listener delivers the outbox when its transport has
//!   room, so a slow consumer receives the latest state rather than a backlog.
//! - Observers ([`ChangeFeed::on_change`]) see a change before any listener does.
//! - A listener delivers `list_changed` [`LIST_SETTLE`] after it was published, as one
//!   for every `list_changed` published meanwhile.
//! - Locks: the hub's before a listener's, never the reverse; a listener's set and the
//!   hub's entries change together.
//! - With a [`ChangeBus`] (see [`crate::bus`]), a change published here also goes to the
//!   other instances, and theirs arrive through `Hub::deliver_remote`, which delivers
//!   them here only: no event is ever forwarded twice.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};

use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::meta::NotificationMeta;
use rsrc_protocol::resources::{EmptyNotificationParams, ResourceUpdatedParams};
use tokio::sync::Notify;

use crate::bus::{BusEvent, BusSink, ChangeBus, Lease, RemoteEvents};
use crate::context::{Notification, Notifier};

/// A provider's outlet for changes. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ChangeFeed {
    hub: Arc<Hub>,
    /// Publishes reach this instance only, not the bus.
    local: bool,
}

/// A change as an observer sees it ([`ChangeFeed::on_change`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeEvent<'a> {
    /// The resource at this URI changed.
    Updated(&'a str),
    /// The set of resources changed.
    ListChanged,
    /// Changes under this URI prefix (every URI for `""`) may have been missed: anything
    /// kept about them may be stale.
    Resync(&'a str),
}

type Observer = Arc<dyn Fn(ChangeEvent<'_>) + Send + Sync>;

impl ChangeFeed {
    /// Calls `observer` with every change published from now on, before any listener is
    /// told of it: a cache that drops the entry of a changed URI there guarantees that a
    /// client reacting to the notification reads fresh content. The observer runs on the
    /// publisher's thread and must not block.
    pub fn on_change(&self, observer: impl Fn(ChangeEvent<'_>) + Send + Sync + 'static) {
        self.hub
            .observers
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::new(observer));
    }

    /// The resource at `uri` changed: its subscribers are told, on every instance.
    pub fn updated(&self, uri: &str) {
        self.hub.updated(uri);
        self.broadcast(|| BusEvent::Updated(uri.to_owned()));
    }

    /// The set of resources changed: listeners of list changes are told, on every
    /// instance. On a server where no mount declares `listChanged` (no provider
    /// publishes list changes and none is [announced](crate::Router::mount_announced)),
    /// no client can hear it: the first such call logs a warning.
    pub fn list_changed(&self) {
        self.hub.warn_if_unheard();
        self.hub.list_changed();
        self.broadcast(|| BusEvent::ListChanged);
    }

    /// Changes under `prefix` (everything for `""`) may have been missed, e.g. by a
    /// watcher that just took over: on every instance, listeners of list changes hear
    /// `list_changed` and every subscription under `prefix` an update.
    pub fn resync(&self, prefix: &str) {
        self.hub.resync_local(prefix);
        self.broadcast(|| BusEvent::Resync(prefix.to_owned()));
    }

    /// A feed whose changes reach this instance's listeners only: for a watcher that
    /// every instance runs when [signalled](ChangeFeed::signal), each telling its own
    /// subscribers.
    pub fn local(&self) -> ChangeFeed {
        ChangeFeed {
            hub: Arc::clone(&self.hub),
            local: true,
        }
    }

    /// The lease named `name` (by convention the URI prefix of the source watched): a
    /// watcher polls its source only while it holds it, so that one instance of a
    /// deployment polls. Always held without a bus.
    pub fn lease(&self, name: &str) -> Lease {
        match &self.hub.bus {
            Some(bus) => bus.lease(name),
            None => Lease::always(),
        }
    }

    /// Tells the other instances that the source `topic` changed: their
    /// [`on_signal`](ChangeFeed::on_signal) handlers for it run. Nothing happens here, and
    /// nothing at all without a bus.
    pub fn signal(&self, topic: &str) {
        if let Some(bus) = &self.hub.bus {
            bus.publish(BusEvent::Signal(topic.to_owned()));
        }
    }

    /// Runs `handler` whenever another instance signals `topic`. It runs on the bus's
    /// task and must not block: wake a watcher instead.
    pub fn on_signal(&self, topic: &str, handler: impl Fn() + Send + Sync + 'static) {
        self.hub
            .signals
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(topic.to_owned())
            .or_default()
            .push(Arc::new(handler));
    }

    fn broadcast(&self, event: impl FnOnce() -> BusEvent) {
        if let Some(bus) = self.hub.bus.as_ref().filter(|_| !self.local) {
            bus.publish(event());
        }
    }

    /// The URIs starting with `prefix` that someone is subscribed to (for a provider that
    /// lost track of changes and must tell every subscriber to look again).
    pub fn subscribed(&self, prefix: &str) -> Vec<String> {
        lock(&self.hub.state)
            .by_uri
            .iter()
            .filter(|(uri, entries)| {
                uri.starts_with(prefix) && entries.iter().any(|(_, w)| w.strong_count() > 0)
            })
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// How many listeners are subscribed to `uri` (for tests and metrics).
    pub fn subscribers(&self, uri: &str) -> usize {
        self.hub.listeners_of(uri).len()
    }
}

type Entries = Vec<(u64, Weak<Listener>)>;

type Signals = HashMap<String, Vec<Arc<dyn Fn() + Send + Sync>>>;

#[derive(Default)]
pub(crate) struct Hub {
    state: Mutex<HubState>,
    next_id: AtomicU64,
    /// Called with every change before the listeners ([`ChangeFeed::on_change`]).
    observers: RwLock<Vec<Observer>>,
    /// The other instances, if any.
    bus: Option<Arc<dyn ChangeBus>>,
    /// Handlers of other instances' signals ([`ChangeFeed::on_signal`]).
    signals: RwLock<Signals>,
    /// Whether some mount declares `listChanged`, so that clients can hear a
    /// `list_changed` announced: set when the server is built.
    lists_audible: AtomicBool,
    /// Whether a `list_changed` no client could hear was warned of.
    warned_unheard: AtomicBool,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct HubState {
    by_uri: HashMap<String, Entries>,
    lists: Entries,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn alive(entries: &Entries) -> Vec<Arc<Listener>> {
    entries.iter().filter_map(|(_, w)| w.upgrade()).collect()
}

impl Hub {
    /// A hub whose changes also travel over `bus`, which delivers the other instances'
    /// changes back here.
    pub(crate) fn with_bus(bus: Option<Arc<dyn ChangeBus>>) -> Arc<Hub> {
        let hub = Arc::new(Hub {
            bus: bus.clone(),
            ..Hub::default()
        });
        if let Some(bus) = bus {
            let sink: Weak<dyn RemoteEvents> = Arc::downgrade(&hub) as Weak<Hub>;
            bus.attach(BusSink::new(sink));
        }
        hub
    }

    /// Records whether clients can hear a `list_changed` (some mount declares it).
    pub(crate) fn set_lists_audible(&self, audible: bool) {
        self.lists_audible.store(audible, Ordering::Release);
    }

    fn warn_if_unheard(&self) {
        if !self.lists_audible.load(Ordering::Acquire)
            && !self.warned_unheard.swap(true, Ordering::AcqRel)
        {
            tracing::warn!(
                "list_changed() was announced, but no mount declares listChanged, so no \
                 client can hear it: mount the provider whose resources your code changes \
                 with mount_announced"
            );
        }
    }

    /// The bus to the other instances, if any.
    pub(crate) fn bus(&self) -> Option<&Arc<dyn ChangeBus>> {
        self.bus.as_ref()
    }

    pub(crate) fn feed(self: &Arc<Self>) -> ChangeFeed {
        ChangeFeed {
            hub: Arc::clone(self),
            local: false,
        }
    }

    fn observe(&self, event: ChangeEvent<'_>) {
        let observers = self
            .observers
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        for o in observers.iter() {
            o(event);
        }
    }

    /// Tells this instance's observers, then listeners, that `uri` changed.
    fn updated(&self, uri: &str) {
        self.observe(ChangeEvent::Updated(uri));
        for l in self.listeners_of(uri) {
            l.send_updated(uri);
        }
    }

    /// Tells this instance's observers, then list listeners, that the list changed.
    fn list_changed(&self) {
        self.observe(ChangeEvent::ListChanged);
        for l in self.list_listeners() {
            l.send_list_changed();
        }
    }

    /// A listener delivering through `notifier`, tagging its notifications with
    /// `subscription` (2026-07-28 streams) and holding at most `max` subscriptions.
    pub(crate) fn listener(
        self: &Arc<Self>,
        notifier: Notifier,
        subscription: Option<RequestId>,
        max: usize,
    ) -> Arc<Listener> {
        let listener = self.parked(subscription.is_some(), max);
        listener.start(notifier, subscription);
        listener
    }

    /// A listener that collects changes in its outbox (coalesced, as always) but delivers
    /// nothing until [`Listener::start`]: for a stream whose host acknowledged it before
    /// the engine runs it. `stream`: a `subscriptions/listen` stream's.
    pub(crate) fn parked(self: &Arc<Self>, stream: bool, max: usize) -> Arc<Listener> {
        if stream {
            metrics::gauge!(crate::observe::LISTEN_STREAMS_OPEN).increment(1);
        }
        Arc::new(Listener {
            stream,
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            hub: Arc::clone(self),
            outbox: Arc::new(Outbox::default()),
            uris: Mutex::new(HashSet::new()),
            lists: AtomicBool::new(false),
            max,
        })
    }

    fn listeners_of(&self, uri: &str) -> Vec<Arc<Listener>> {
        lock(&self.state)
            .by_uri
            .get(uri)
            .map(alive)
            .unwrap_or_default()
    }

    fn list_listeners(&self) -> Vec<Arc<Listener>> {
        alive(&lock(&self.state).lists)
    }
}

/// Why a subscription was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooMany(pub(crate) usize);

/// One receiver of changes.
#[derive(Debug)]
pub(crate) struct Listener {
    id: u64,
    hub: Arc<Hub>,
    outbox: Arc<Outbox>,
    uris: Mutex<HashSet<String>>,
    lists: AtomicBool,
    max: usize,
    /// Whether it is a `subscriptions/listen` stream's (counted in
    /// `rsrc_listen_streams_open` while it lives).
    stream: bool,
}

/// What a listener still has to deliver: each URI at most once, and list changes as one
/// flag. A consumer slower than the changes gets the latest state, not a backlog: the
/// outbox never holds more than the listener's subscriptions plus one.
#[derive(Debug, Default)]
struct Outbox {
    pending: Mutex<Pending>,
    wake: Notify,
}

#[derive(Debug, Default)]
struct Pending {
    order: VecDeque<Change>,
    queued: HashSet<String>,
    list: bool,
    closed: bool,
}

#[derive(Debug)]
enum Change {
    Updated(String),
    List,
}

enum Next {
    Deliver(Change),
    Wait,
    Closed,
}

impl Outbox {
    fn put(&self, change: Change) {
        {
            let mut p = lock(&self.pending);
            match &change {
                Change::Updated(uri) if !p.queued.insert(uri.clone()) => {
                    return notification(change.kind(), "coalesced");
                }
                Change::List if std::mem::replace(&mut p.list, true) => {
                    return notification(change.kind(), "coalesced");
                }
                _ => {}
            }
            p.order.push_back(change);
        }
        self.wake.notify_one();
    }

    fn next(&self) -> Next {
        let mut p = lock(&self.pending);
        if p.closed {
            return Next::Closed;
        }
        match p.order.pop_front() {
            Some(change) => {
                match &change {
                    Change::Updated(uri) => {
                        p.queued.remove(uri);
                    }
                    Change::List => p.list = false,
                }
                Next::Deliver(change)
            }
            None => Next::Wait,
        }
    }

    /// Takes a `list_changed` that waits, if one does (it is being delivered now).
    fn take_list(&self) {
        let mut p = lock(&self.pending);
        if std::mem::take(&mut p.list) {
            p.order.retain(|c| !matches!(c, Change::List));
            notification(Change::List.kind(), "coalesced");
        }
    }

    fn close(&self) {
        lock(&self.pending).closed = true;
        self.wake.notify_one();
    }
}

/// How long a listener waits before it delivers a `list_changed`, so that the same
/// change announced again meanwhile goes out once: twice the filesystem watcher's
/// default window (50 ms), so a tool's announcement of its own write and the watcher's
/// arrive as one.
const LIST_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// Counts a change notification by kind and outcome (`rsrc_notifications_total`).
fn notification(kind: &'static str, outcome: &'static str) {
    metrics::counter!(crate::observe::NOTIFICATIONS, "kind" => kind, "outcome" => outcome)
        .increment(1);
}

/// `sent`, or `dropped` when the transport is gone.
fn delivered(sent: bool) -> &'static str {
    if sent { "sent" } else { "dropped" }
}

impl Change {
    /// Its kind, as `rsrc_notifications_total` names it.
    fn kind(&self) -> &'static str {
        match self {
            Change::Updated(_) => "resource_updated",
            Change::List => "list_changed",
        }
    }
}

/// Delivers a listener's outbox through `notifier`, waiting for room in the transport:
/// while it waits, further changes coalesce in the outbox.
async fn deliver(outbox: Arc<Outbox>, notifier: Notifier, subscription: Option<RequestId>) {
    let meta = || subscription.clone().map(NotificationMeta::for_subscription);
    loop {
        match outbox.next() {
            Next::Closed => return,
            // A permit stored by `put` after `next` looked makes this return at once.
            Next::Wait => outbox.wake.notified().await,
            Next::Deliver(Change::Updated(uri)) => {
                let params = ResourceUpdatedParams {
                    uri,
                    title: None,
                    meta: meta(),
                };
                let sent = notifier
                    .send_when_ready(Notification::Updated(params))
                    .await;
                notification("resource_updated", delivered(sent));
            }
            Next::Deliver(Change::List) => {
                // One change is often announced twice within a moment (a tool's
                // `list_changed()` and the watcher that saw its write): the list settles
                // first, and what came meanwhile goes out as one.
                tokio::time::sleep(LIST_SETTLE).await;
                outbox.take_list();
                let sent = notifier
                    .send_when_ready(Notification::ListChanged(EmptyNotificationParams {
                        meta: meta(),
                    }))
                    .await;
                notification("list_changed", delivered(sent));
            }
        }
    }
}

impl Listener {
    /// Subscribes to `uri` (again is a no-op).
    pub(crate) fn subscribe(self: &Arc<Self>, uri: &str) -> Result<(), TooMany> {
        // The hub's lock first, then the listener's: both change as one.
        let mut st = lock(&self.hub.state);
        let mut uris = lock(&self.uris);
        if uris.contains(uri) {
            return Ok(());
        }
        if uris.len() >= self.max {
            return Err(TooMany(self.max));
        }
        uris.insert(uri.to_owned());
        metrics::gauge!(crate::observe::SUBSCRIPTIONS_OPEN).increment(1);
        let entries = st.by_uri.entry(uri.to_owned()).or_default();
        entries.retain(|(_, w)| w.strong_count() > 0);
        entries.push((self.id, Arc::downgrade(self)));
        Ok(())
    }

    /// Unsubscribes from `uri`; `false` if it was not subscribed.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut st = lock(&self.hub.state);
        if !lock(&self.uris).remove(uri) {
            return false;
        }
        metrics::gauge!(crate::observe::SUBSCRIPTIONS_OPEN).decrement(1);
        if let Some(entries) = st.by_uri.get_mut(uri) {
            entries.retain(|(id, _)| *id != self.id);
            if entries.is_empty() {
                st.by_uri.remove(uri);
            }
        }
        true
    }

    /// Asks for list changes.
    pub(crate) fn listen_to_lists(self: &Arc<Self>) {
        if !self.lists.swap(true, Ordering::AcqRel) {
            let mut st = lock(&self.hub.state);
            st.lists.retain(|(_, w)| w.strong_count() > 0);
            st.lists.push((self.id, Arc::downgrade(self)));
        }
    }

    /// The subscribed URIs, sorted.
    pub(crate) fn uris(&self) -> Vec<String> {
        let mut uris: Vec<String> = lock(&self.uris).iter().cloned().collect();
        uris.sort();
        uris
    }

    /// Starts delivering its outbox through `notifier`, tagged with `subscription`
    /// (called once: by [`Hub::listener`], or for a [parked](Hub::parked) one).
    pub(crate) fn start(&self, notifier: Notifier, subscription: Option<RequestId>) {
        tokio::spawn(deliver(Arc::clone(&self.outbox), notifier, subscription));
    }

    /// Unsubscribes from `uri`, dropping its update if one waits in the outbox.
    pub(crate) fn forget(&self, uri: &str) {
        if self.unsubscribe(uri) {
            let mut p = lock(&self.outbox.pending);
            if p.queued.remove(uri) {
                p.order
                    .retain(|c| !matches!(c, Change::Updated(u) if u == uri));
            }
        }
    }

    /// Queues `list_changed` (if it listens to lists) and an update of every
    /// subscription.
    pub(crate) fn resync(&self) {
        if self.lists.load(Ordering::Acquire) {
            self.send_list_changed();
        }
        for uri in self.uris() {
            self.send_updated(&uri);
        }
    }

    fn send_updated(&self, uri: &str) {
        self.outbox.put(Change::Updated(uri.to_owned()));
    }

    fn send_list_changed(&self) {
        self.outbox.put(Change::List);
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.outbox.close();
        let uris = std::mem::take(&mut *lock(&self.uris));
        metrics::gauge!(crate::observe::SUBSCRIPTIONS_OPEN).decrement(uris.len() as f64);
        if self.stream {
            metrics::gauge!(crate::observe::LISTEN_STREAMS_OPEN).decrement(1);
        }
        let mut st = lock(&self.hub.state);
        for uri in uris {
            if let Some(entries) = st.by_uri.get_mut(&uri) {
                entries.retain(|(id, _)| *id != self.id);
                if entries.is_empty() {
                    st.by_uri.remove(&uri);
                }
            }
        }
        if self.lists.load(Ordering::Acquire) {
            st.lists.retain(|(id, _)| *id != self.id);
        }
    }
}

impl RemoteEvents for Hub {
    /// Changes under `prefix` may have been missed: this instance's list listeners hear
    /// `list_changed`, and every subscription under `prefix` an update.
    fn resync_local(&self, prefix: &str) {
        self.observe(ChangeEvent::Resync(prefix));
        for l in self.list_listeners() {
            l.send_list_changed();
        }
        let subscribed: Vec<(String, Vec<Arc<Listener>>)> = lock(&self.state)
            .by_uri
            .iter()
            .filter(|(uri, _)| uri.starts_with(prefix))
            .map(|(uri, entries)| (uri.clone(), alive(entries)))
            .collect();
        for (uri, listeners) in subscribed {
            for l in listeners {
                l.send_updated(&uri);
            }
        }
    }

    /// Another instance's event, delivered here only.
    fn deliver_remote(&self, event: BusEvent) {
        match event {
            BusEvent::Updated(uri) => self.updated(&uri),
            BusEvent::ListChanged => self.list_changed(),
            BusEvent::Resync(prefix) => self.resync_local(&prefix),
            BusEvent::Signal(topic) => {
                let handlers: Vec<_> = self
                    .signals
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&topic)
                    .cloned()
                    .unwrap_or_default();
                for h in handlers {
                    h();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
