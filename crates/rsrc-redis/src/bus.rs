//! The bus's handle, [`RedisBus`]: connecting (checking the namespace, starting the
//! tasks) and the [`ChangeBus`] methods, each handing the work to the rule beside it.
//!
//! Invariants: a bus starts only with a key, a Redis that answers, and a namespace no
//! other deployment uses; its instance id is random (the process id first, for
//! operators), and a failing random source refuses the start; every task it starts
//! holds its state weakly and ends when the last handle is dropped.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rsrc::BoxFuture;
use rsrc::bus::{BusEvent, BusSink, ChangeBus, Lease};
use rsrc::keyring::{Keyring, random_bytes};
use rsrc::sessions::SessionStore;
use tokio::sync::mpsc;

use crate::connect::{client, connect};
use crate::leases::{give_up, keep_leases};
use crate::members::join;
use crate::options::{RedisBusError, RedisBusOptions};
use crate::publish::publish;
use crate::rejections::Rejected;
use crate::resync::resync;
use crate::state::{BusState, LeaseState};
use crate::store::RedisSessions;
use crate::subscribe::subscribe;
use crate::wire::Out;

/// A [`ChangeBus`] on Redis. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RedisBus {
    shared: Arc<BusState>,
}

impl RedisBus {
    /// Connects to `url` (`redis://[user@]host:port[/db]`, `rediss://…` for TLS,
    /// `redis+unix:///path`), checks that Redis answers and that no other deployment
    /// uses the namespace, and starts publishing and keeping leases. Must be called
    /// within a Tokio runtime, which runs the bus's tasks. Refused without a key
    /// ([`RedisBusOptions::keys`]), and when the operating system's random source fails.
    pub async fn connect(url: &str, options: RedisBusOptions) -> Result<RedisBus, RedisBusError> {
        let Some(keys) = Keyring::new(&options.keys) else {
            return Err(RedisBusError(
                "no bus key: the instances authenticate what they write to Redis with a key they share (e.g. `openssl rand -hex 32 > bus.keys`, --bus-key-file)".into(),
            ));
        };
        let client = client(url, &options)?;
        let mut conn = connect(&client, options.timeout)
            .await
            .map_err(|e| RedisBusError(format!("cannot reach Redis: {e}")))?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| RedisBusError(format!("Redis does not answer: {e}")))?;
        let (queue, rx) = mpsc::channel(options.queue.max(1));
        let random: [u8; 12] = random_bytes().map_err(|e| RedisBusError(e.to_string()))?;
        // The process id first, so that an operator reading a lease can tell whose.
        let id = format!(
            "{}-{}",
            std::process::id(),
            random
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let shared = Arc::new(BusState::new(client, id, &keys, options, queue));
        join(&shared, &mut conn).await.map_err(RedisBusError)?;
        let bus = RedisBus { shared };
        let alive = bus.lease(&format!("instance:{}", bus.shared.id));
        let _ = bus.shared.alive.set(alive);
        tokio::spawn(publish(Arc::downgrade(&bus.shared), rx, Some(conn.clone())));
        tokio::spawn(keep_leases(Arc::downgrade(&bus.shared), conn));
        let weak = Arc::downgrade(&bus.shared);
        tokio::spawn(resync(
            Arc::clone(&bus.shared.resyncs),
            bus.shared.closed.clone(),
            move |wanted| {
                let Some(s) = weak.upgrade() else {
                    return false;
                };
                if let Some(sink) = s.sink.get() {
                    for prefix in wanted.prefixes {
                        if !sink.deliver(BusEvent::Resync(prefix)) {
                            // The server is gone.
                            return false;
                        }
                    }
                }
                if wanted.sessions {
                    s.sessions_changed(None);
                }
                true
            },
        ));
        Ok(bus)
    }

    /// This instance's id on the bus, as lease values hold it: `PID-RANDOM`.
    pub fn instance(&self) -> &str {
        &self.shared.id
    }

    /// How many attempts to subscribe to the channel failed since the bus started (each
    /// is retried with backoff; once one succeeds, listeners are told to look again).
    pub fn subscribe_failures(&self) -> u64 {
        self.shared.subscribe_failures.load(Ordering::Acquire)
    }

    /// What this instance dropped because it did not verify, since it started.
    pub fn rejected(&self) -> Rejected {
        self.shared.rejections.counts()
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, event: BusEvent) {
        self.shared.send(Out::Event(event));
    }

    fn connected(&self) -> bool {
        self.shared.subscribed.load(Ordering::Acquire)
    }

    fn attach(&self, sink: BusSink) {
        if self.shared.sink.set(sink).is_ok() {
            self.shared.runtime.spawn(subscribe(
                Arc::downgrade(&self.shared),
                self.shared.closed.clone(),
            ));
        }
    }

    fn lease(&self, name: &str) -> Lease {
        let state: LeaseState = Arc::new(Mutex::new(None));
        self.shared
            .leases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((
                format!("{}:lease:{name}", self.shared.options.namespace),
                Arc::downgrade(&state),
            ));
        Lease::until(state)
    }

    fn leave(&self) -> BoxFuture<'_, ()> {
        Box::pin(give_up(&self.shared))
    }

    fn session_store(&self, idle: Duration) -> Option<Arc<dyn SessionStore>> {
        Some(Arc::new(RedisSessions::new(Arc::clone(&self.shared), idle)))
    }
}
