//! The turn-taking every polling watcher (SQLite, PostgreSQL, git, skills) shares across
//! the instances of a deployment (see `rsrc::bus`): an instance polls its source on its
//! own schedule only while it holds the source's lease, and polls at once, whatever the
//! lease, when another instance signals that the source changed. Each instance publishes
//! what it finds to its own listeners only ([`Turns::feed`]), since each knows its own
//! subscriptions and what it last told them; the holder, having found a change on its
//! own schedule, signals the others.
//!
//! Without a bus the lease is always held and no signal ever comes: a watcher polls on
//! its schedule, exactly as before. Invariant: the polling load on a source does not grow
//! with the number of instances; only a change costs each instance one look.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rsrc::ChangeFeed;
use rsrc::bus::Lease;
use tokio::sync::Notify;

/// When to poll one source.
#[derive(Debug)]
pub(crate) struct Turns {
    feed: ChangeFeed,
    lease: Lease,
    topic: String,
    signalled: Arc<Signalled>,
}

/// A signal from another instance, for a thread ([`Turns::wait`]) or a task
/// ([`Turns::wait_async`]) to take.
#[derive(Debug, Default)]
struct Signalled {
    flag: Mutex<bool>,
    cond: Condvar,
    notify: Notify,
}

/// Why a poll happens now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// This instance's schedule, holding the lease.
    Scheduled,
    /// Another instance saw the source change.
    Signalled,
}

impl Turns {
    /// Turns for the source `topic` (its URI prefix, the same on every instance).
    pub(crate) fn new(feed: &ChangeFeed, topic: &str) -> Turns {
        let signalled = Arc::new(Signalled::default());
        let weak = Arc::downgrade(&signalled);
        feed.on_signal(topic, move || {
            if let Some(s) = weak.upgrade() {
                *s.flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
                s.cond.notify_all();
                s.notify.notify_one();
            }
        });
        Turns {
            feed: feed.local(),
            lease: feed.lease(topic),
            topic: topic.to_owned(),
            signalled,
        }
    }

    /// The feed to publish what a poll found: this instance's listeners only.
    pub(crate) fn feed(&self) -> &ChangeFeed {
        &self.feed
    }

    fn take(&self) -> bool {
        std::mem::take(
            &mut *self
                .signalled
                .flag
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn turn(&self, signalled: bool) -> Option<Turn> {
        if signalled {
            Some(Turn::Signalled)
        } else {
            self.lease.held().then_some(Turn::Scheduled)
        }
    }

    /// Blocks the thread for `interval` or until a signal, in slices of at most `slice`
    /// after each of which `alive` is asked. `Err(())` once `alive` says no; `Ok(None)`
    /// when it is not this instance's turn. (The skills scanner's; the other watchers
    /// wait with [`Turns::wait_async`], `crate::kit::watch`.)
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub(crate) fn wait(
        &self,
        interval: Duration,
        slice: Duration,
        alive: impl Fn() -> bool,
    ) -> Result<Option<Turn>, ()> {
        let until = Instant::now() + interval;
        let mut flag = self
            .signalled
            .flag
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if *flag {
                drop(flag);
                return alive().then(|| self.turn(self.take())).ok_or(());
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(flag);
                return alive().then(|| self.turn(false)).ok_or(());
            }
            let (f, _) = self
                .signalled
                .cond
                .wait_timeout(flag, left.min(slice))
                .unwrap_or_else(PoisonError::into_inner);
            flag = f;
            if !*flag && !alive() {
                return Err(());
            }
        }
    }

    /// Waits (async) for `interval` or a signal; `None` when it is not this instance's
    /// turn.
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres", feature = "git")),
        allow(dead_code)
    )]
    pub(crate) async fn wait_async(&self, interval: Duration) -> Option<Turn> {
        let signalled = self.signalled.notify.notified();
        tokio::pin!(signalled);
        // A signal that came while the last poll ran is taken at once.
        let mut was = self.take();
        if !was {
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = &mut signalled => {}
            }
            was = self.take();
        }
        self.turn(was)
    }

    /// A poll of `turn` found a change: on the instance's own schedule, the others are
    /// told to look too.
    pub(crate) fn found_change(&self, turn: Turn) {
        if turn == Turn::Scheduled {
            self.feed.signal(&self.topic);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use rsrc::bus::{BusEvent, BusSink, ChangeBus, Lease};

    use super::{Turn, Turns};

    /// A bus whose lease is never held here, and whose events the test delivers.
    #[derive(Clone, Default)]
    struct Elsewhere(Arc<Mutex<Option<BusSink>>>);

    impl ChangeBus for Elsewhere {
        fn publish(&self, _: BusEvent) {}
        fn attach(&self, sink: BusSink) {
            *self.0.lock().unwrap() = Some(sink);
        }
        fn lease(&self, _: &str) -> Lease {
            Lease::until(Arc::new(Mutex::new(None)))
        }
    }

    fn turns() -> (Turns, Elsewhere, rsrc::Server) {
        let bus = Elsewhere::default();
        let server = rsrc::Server::builder("t", "0")
            .bus(bus.clone())
            .build()
            .unwrap();
        (Turns::new(&server.changes(), "db://x"), bus, server)
    }

    fn signal(bus: &Elsewhere, topic: &str) {
        let sink = bus.0.lock().unwrap().clone().unwrap();
        assert!(sink.deliver(BusEvent::Signal(topic.into())));
    }

    #[test]
    fn without_the_lease_a_poller_waits_until_another_instance_signals() {
        let (turns, bus, _server) = turns();
        assert_eq!(
            turns.wait(Duration::from_millis(50), Duration::from_millis(10), || {
                true
            }),
            Ok(None),
            "not its turn"
        );
        let started = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                signal(&bus, "db://other");
                signal(&bus, "db://x");
            });
            assert_eq!(
                turns.wait(Duration::from_secs(30), Duration::from_millis(10), || true),
                Ok(Some(Turn::Signalled))
            );
        });
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            turns.wait(Duration::from_secs(30), Duration::from_millis(10), || false),
            Err(()),
            "ends when its provider is gone"
        );
    }

    #[tokio::test]
    async fn a_signal_that_came_during_a_poll_is_taken_by_the_next_wait() {
        let (turns, bus, _server) = turns();
        signal(&bus, "db://x");
        let waited = tokio::time::timeout(
            Duration::from_secs(10),
            turns.wait_async(Duration::from_secs(30)),
        )
        .await;
        assert_eq!(waited, Ok(Some(Turn::Signalled)));
        assert_eq!(turns.wait_async(Duration::from_millis(20)).await, None);
    }
}
