//! Resynchronisations, coalesced and rate-limited: whatever asks for one (another
//! instance that lost events, this instance's subscription coming back), a burst costs
//! one, and a stream of them at most one per [`GAP`].
//!
//! Invariants:
//! - A resync asked for is done, after at most [`WINDOW`] (gathering a burst) plus what
//!   remains of [`GAP`] since the previous one; none asked for is lost, and several
//!   asked for meanwhile are done once: each prefix once (everything, `""`, covering
//!   every other), and the shared sessions reloaded once.
//! - What waits is bounded: at most [`MAX_PREFIXES`] prefixes, beyond which everything is
//!   resynchronised instead.
//! - The task ends when the bus is dropped, or when what it hands the resyncs to says
//!   the server is gone.
//!
//! The coalescer knows nothing of the bus: the task hands each burst to a function
//! (`bus.rs` gives it one that tells the server's listeners and the session stores).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long a first resync waits for the rest of its burst.
pub(crate) const WINDOW: Duration = Duration::from_millis(100);
/// The least time between two resyncs.
pub(crate) const GAP: Duration = Duration::from_secs(1);
/// The most prefixes waiting; beyond, everything is resynchronised.
const MAX_PREFIXES: usize = 64;

/// What is waiting to be done.
#[derive(Debug, Default)]
pub(crate) struct Wanted {
    /// Listeners to tell to look again, by URI prefix (`""`: all of them).
    pub(crate) prefixes: BTreeSet<String>,
    /// Shared sessions to reload.
    pub(crate) sessions: bool,
}

/// Resyncs asked for and not done yet.
#[derive(Debug, Default)]
pub(crate) struct Resyncs {
    wanted: Mutex<Wanted>,
    asked: Notify,
}

impl Resyncs {
    /// Asks for listeners under `prefix` (if any) to look again, and for the shared
    /// sessions to be reloaded (if `sessions`).
    pub(crate) fn ask(&self, prefix: Option<&str>, sessions: bool) {
        let mut w = self.wanted.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(prefix) = prefix
            && !w.prefixes.contains("")
        {
            if prefix.is_empty() || w.prefixes.len() >= MAX_PREFIXES {
                w.prefixes.clear();
                w.prefixes.insert(String::new());
            } else {
                w.prefixes.insert(prefix.to_owned());
            }
        }
        w.sessions |= sessions;
        drop(w);
        self.asked.notify_one();
    }

    fn take(&self) -> Wanted {
        std::mem::take(&mut *self.wanted.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Does the resyncs asked for, a burst at a time, at most one per [`GAP`]: `apply` does
/// each burst, and says `false` when there is no one left to tell.
pub(crate) async fn resync(
    resyncs: Arc<Resyncs>,
    closed: CancellationToken,
    apply: impl Fn(Wanted) -> bool,
) {
    loop {
        // `notify_one` keeps a permit when nobody waits: no ask is missed.
        tokio::select! {
            () = closed.cancelled() => return,
            () = resyncs.asked.notified() => {}
        }
        tokio::select! {
            () = closed.cancelled() => return,
            () = tokio::time::sleep(WINDOW) => {}
        }
        if !apply(resyncs.take()) {
            return;
        }
        tokio::select! {
            () = closed.cancelled() => return,
            () = tokio::time::sleep(GAP.saturating_sub(WINDOW)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_coalesce_and_everything_covers_all() {
        let r = Resyncs::default();
        r.ask(Some("file:///a"), false);
        r.ask(Some("file:///a"), false);
        r.ask(Some("db://x"), true);
        let w = r.take();
        assert_eq!(w.prefixes.len(), 2);
        assert!(w.sessions);
        r.ask(Some("file:///a"), false);
        r.ask(Some(""), false);
        r.ask(Some("db://x"), false);
        let w = r.take();
        assert_eq!(w.prefixes.into_iter().collect::<Vec<_>>(), [String::new()]);
        for i in 0..=MAX_PREFIXES {
            r.ask(Some(&format!("x://{i}")), false);
        }
        assert_eq!(
            r.take().prefixes.into_iter().collect::<Vec<_>>(),
            [String::new()]
        );
        assert!(r.take().prefixes.is_empty());
    }
}
