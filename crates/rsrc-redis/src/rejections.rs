//! What a bus refused because it did not verify: counted ([`Rejected`], what
//! [`RedisBus::rejected`](crate::RedisBus::rejected) reports) and logged at a bounded
//! rate.
//!
//! Invariant: however many rejections come, at most one log line per [`LOG_EVERY`],
//! carrying the count since the previous one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a [`RedisBus`](crate::RedisBus) dropped because it did not verify
/// ([`RedisBus::rejected`](crate::RedisBus::rejected)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejected {
    /// Messages on the channel: forged, malformed, stale or heard before.
    pub messages: u64,
    /// Session records and replay-log entries read from Redis: forged, or over
    /// their bounds.
    pub stored: u64,
}

/// How often at most a rejection is logged (with the count since the last).
pub(crate) const LOG_EVERY: Duration = Duration::from_secs(10);

/// Counts of what was refused, and a log of them at a bounded rate.
#[derive(Debug, Default)]
pub(crate) struct Rejections {
    messages: AtomicU64,
    stored: AtomicU64,
    /// When a rejection was last logged (ms since the bus's epoch; 0: never).
    logged_ms: AtomicU64,
    /// Rejections since then.
    unlogged: AtomicU64,
}

impl Rejections {
    /// A message on the channel was refused (`why`), at `now_ms`.
    pub(crate) fn message(&self, now_ms: u64, why: &str) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.log(now_ms, "a message on the change channel", why);
    }

    /// What was read back from Redis for a session (`what`) was refused (`why`).
    pub(crate) fn stored(&self, now_ms: u64, what: &str, why: &str) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        self.log(now_ms, what, why);
    }

    /// The counts so far.
    pub(crate) fn counts(&self) -> Rejected {
        Rejected {
            messages: self.messages.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
        }
    }

    fn log(&self, now_ms: u64, what: &str, why: &str) {
        let unlogged = self.unlogged.fetch_add(1, Ordering::AcqRel) + 1;
        let last = self.logged_ms.load(Ordering::Acquire);
        let every = u64::try_from(LOG_EVERY.as_millis()).unwrap_or(u64::MAX);
        if (last == 0 || now_ms.saturating_sub(last) >= every)
            && self
                .logged_ms
                .compare_exchange(last, now_ms.max(1), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            self.unlogged.store(0, Ordering::Release);
            tracing::warn!(
                rejected = unlogged,
                "{what} from Redis dropped ({why}); someone without this deployment's bus keys writes to its namespace, or instances do not share the same keys"
            );
        }
    }
}
