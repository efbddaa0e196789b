//! Whether a watcher sees every change from now on, for a subscription to wait on.
//!
//! A watcher needs a moment after it starts before it can see changes: the file watcher
//! places its watches, a polling watcher takes the first look every later look is
//! compared with. A subscription acknowledged before then could miss a change made right
//! after the acknowledgement, so it waits ([`Armed::wait`]) until the watcher says it is
//! ready ([`Armed::arm`]).
//!
//! Invariants: a gate starts armed (a provider with no watcher never makes anyone wait);
//! a wait is bounded by [`ARMING_WAIT`], after which the subscription is acknowledged
//! while the watcher goes on getting ready (a tree too large to watch quickly must not
//! hang its clients).

use std::time::Duration;

use tokio::sync::watch;

/// The longest a subscription waits for its watcher.
pub(crate) const ARMING_WAIT: Duration = Duration::from_secs(5);

/// The gate; cheap to share by reference.
#[derive(Debug)]
pub(crate) struct Armed(watch::Sender<bool>);

impl Default for Armed {
    fn default() -> Self {
        Armed(watch::Sender::new(true))
    }
}

impl Armed {
    /// A watcher is starting: subscriptions wait from now on.
    pub(crate) fn disarm(&self) {
        self.0.send_replace(false);
    }

    /// The watcher sees every change from now on (or will never watch): waits end.
    pub(crate) fn arm(&self) {
        self.0.send_replace(true);
    }

    /// Whether the watcher sees every change now.
    pub(crate) fn is_armed(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until armed, at most [`ARMING_WAIT`].
    pub(crate) async fn wait(&self) {
        let mut armed = self.0.subscribe();
        let _ = tokio::time::timeout(ARMING_WAIT, armed.wait_for(|armed| *armed)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_ends_when_armed_and_not_before() {
        let gate = std::sync::Arc::new(Armed::default());
        gate.wait().await;
        gate.disarm();
        let waiting = tokio::spawn({
            let gate = std::sync::Arc::clone(&gate);
            async move { gate.wait().await }
        });
        // The waiting task runs until it parks (one thread: yielding lets it).
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "disarmed: the wait goes on");
        gate.arm();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("armed: the wait ends")
            .expect("no panic");
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_gives_up_after_the_bound() {
        let gate = Armed::default();
        gate.disarm();
        let started = tokio::time::Instant::now();
        gate.wait().await;
        assert_eq!(started.elapsed(), ARMING_WAIT);
    }
}
