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
//! - Delivery never blocks the publisher: it goes through the listener's [`Notifier`],
//!   whose queue drops rather than waits.
//! - Locks: the hub's before a listener's, never the reverse; a listener's set and the
//!   hub's entries change together.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::meta::NotificationMeta;
use rsrc_protocol::methods::{ResourceListChanged, ResourceUpdated};
use rsrc_protocol::resources::{EmptyNotificationParams, ResourceUpdatedParams};

use crate::context::Notifier;

/// A provider's outlet for changes. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ChangeFeed {
    hub: Arc<Hub>,
}

impl ChangeFeed {
    /// The resource at `uri` changed: its subscribers are told.
    pub fn updated(&self, uri: &str) {
        for l in self.hub.listeners_of(uri) {
            l.send_updated(uri);
        }
    }

    /// The set of resources changed: listeners of list changes are told.
    pub fn list_changed(&self) {
        for l in self.hub.list_listeners() {
            l.send_list_changed();
        }
    }

    /// How many listeners are subscribed to `uri` (for tests and metrics).
    pub fn subscribers(&self, uri: &str) -> usize {
        self.hub.listeners_of(uri).len()
    }
}

type Entries = Vec<(u64, Weak<Listener>)>;

#[derive(Debug, Default)]
pub(crate) struct Hub {
    state: Mutex<HubState>,
    next_id: AtomicU64,
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
    pub(crate) fn feed(self: &Arc<Self>) -> ChangeFeed {
        ChangeFeed {
            hub: Arc::clone(self),
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
        Arc::new(Listener {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            hub: Arc::clone(self),
            notifier,
            subscription,
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
    notifier: Notifier,
    subscription: Option<RequestId>,
    uris: Mutex<HashSet<String>>,
    lists: AtomicBool,
    max: usize,
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

    fn meta(&self) -> Option<NotificationMeta> {
        self.subscription
            .clone()
            .map(NotificationMeta::for_subscription)
    }

    fn send_updated(&self, uri: &str) {
        self.notifier
            .notify::<ResourceUpdated>(&ResourceUpdatedParams {
                uri: uri.to_owned(),
                title: None,
                meta: self.meta(),
            });
    }

    fn send_list_changed(&self) {
        self.notifier
            .notify::<ResourceListChanged>(&EmptyNotificationParams { meta: self.meta() });
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let uris = std::mem::take(&mut *lock(&self.uris));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(
        hub: &Arc<Hub>,
        sub: Option<i64>,
    ) -> (Arc<Listener>, tokio::sync::mpsc::Receiver<Vec<u8>>) {
        let (n, rx) = Notifier::channel(16);
        (hub.listener(n, sub.map(RequestId::Number), 2), rx)
    }

    fn next(rx: &mut tokio::sync::mpsc::Receiver<Vec<u8>>) -> Option<serde_json::Value> {
        rx.try_recv()
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn only_subscribers_of_a_uri_hear_of_it() {
        let hub = Arc::new(Hub::default());
        let feed = hub.feed();
        let (a, mut ra) = listener(&hub, None);
        let (b, mut rb) = listener(&hub, Some(7));
        a.subscribe("x:///1").unwrap();
        b.subscribe("x:///1").unwrap();
        b.subscribe("x:///2").unwrap();
        feed.updated("x:///2");
        assert!(next(&mut ra).is_none());
        let m = next(&mut rb).unwrap();
        assert_eq!(m["params"]["uri"], "x:///2");
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            7
        );
        feed.updated("x:///1");
        assert!(next(&mut ra).unwrap()["params"].get("_meta").is_none());
        assert!(next(&mut rb).is_some());
        assert!(a.unsubscribe("x:///1"));
        assert!(!a.unsubscribe("x:///1"));
        feed.updated("x:///1");
        assert!(next(&mut ra).is_none());
    }

    #[test]
    fn subscriptions_are_bounded_and_released_on_drop() {
        let hub = Arc::new(Hub::default());
        let feed = hub.feed();
        let (a, _ra) = listener(&hub, None);
        a.subscribe("x:///1").unwrap();
        a.subscribe("x:///1").unwrap();
        a.subscribe("x:///2").unwrap();
        assert_eq!(a.subscribe("x:///3"), Err(TooMany(2)));
        assert_eq!(feed.subscribers("x:///1"), 1);
        drop(a);
        assert_eq!(feed.subscribers("x:///1"), 0);
        assert!(lock(&hub.state).by_uri.is_empty());
    }

    #[test]
    fn list_changes_go_to_those_who_asked() {
        let hub = Arc::new(Hub::default());
        let (a, mut ra) = listener(&hub, None);
        let (_b, mut rb) = listener(&hub, None);
        a.listen_to_lists();
        hub.feed().list_changed();
        assert_eq!(
            next(&mut ra).unwrap()["method"],
            "notifications/resources/list_changed"
        );
        assert!(next(&mut rb).is_none());
    }
}
