//! Reading the next page of the recursive listing ahead: while the client takes in one
//! page, a blocking thread walks the next one, which fills the listing cache (and encodes
//! its entries); the request for that page waits for the walk if it is still going, then
//! lists from the cache. Paging through a large tree then costs the time of the slower of
//! client and server, not of both in turn. The walks go on only while pages need
//! directories scanned: through a tree the cache already holds, a walk ahead would only
//! do the cheap part twice (`ServedRoots::list_files` says which).
//!
//! Invariants:
//! - What a client sees is as fresh as the listing cache's rules make any listing: the
//!   page itself is listed when asked for, from what the walk cached, so an entry added,
//!   removed or renamed since shows as on any listing the cache serves (at once by the
//!   directory's stamp, or once the watcher has read it), and a file's size or time is at
//!   most the cache's time to live old (without the walk ahead, the first listing of a
//!   directory would have read them when asked).
//! - At most [`SLOTS`] walks are remembered (one per client paging at once); the oldest
//!   goes first. A walk nobody asks for costs one page of work, and one whose slot is gone
//!   before it starts costs nothing.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

/// Most walks remembered at once.
const SLOTS: usize = 4;

/// A walk ahead, for the page it reads: says, when the walk ends, whether walking the
/// page after it is worth it too.
struct Slot {
    after: Vec<u8>,
    limit: usize,
    done: oneshot::Receiver<bool>,
}

/// The walks ahead.
#[derive(Default)]
pub(super) struct Ahead {
    slots: Mutex<VecDeque<Slot>>,
}

impl std::fmt::Debug for Ahead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ahead")
    }
}

impl Ahead {
    /// Waits for the walk ahead for a page from `after` of at most `limit`, if there is
    /// one (it is forgotten: a walk serves one request); whether it found walking the
    /// page after it worth it (false without one).
    pub(super) async fn wait(&self, after: Option<&[u8]>, limit: usize) -> bool {
        let Some(after) = after else { return false };
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(i) = slots
                .iter()
                .position(|s| s.after == after && s.limit == limit)
            else {
                return false;
            };
            slots.remove(i)
        };
        match slot {
            Some(slot) => slot.done.await.unwrap_or(false),
            None => false,
        }
    }

    /// Starts `walk`, the page from `after` of at most `limit`, on a blocking thread of
    /// the current runtime (nothing happens outside one); it returns whether walking the
    /// page after it is worth it.
    pub(super) fn start(
        &self,
        after: Vec<u8>,
        limit: usize,
        walk: impl FnOnce() -> bool + Send + 'static,
    ) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (tx, done) = oneshot::channel();
        {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            slots.retain(|s| s.after != after);
            if slots.len() == SLOTS {
                slots.pop_front();
            }
            slots.push_back(Slot { after, limit, done });
        }
        runtime.spawn_blocking(move || {
            if !tx.is_closed() {
                let _ = tx.send(walk());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_request_waits_for_the_walk_of_its_page_only() {
        let ahead = Ahead::default();
        let walked = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(std::sync::Barrier::new(2));
        {
            let (walked, gate) = (Arc::clone(&walked), Arc::clone(&gate));
            ahead.start(b"p".to_vec(), 10, move || {
                gate.wait();
                walked.fetch_add(1, Ordering::SeqCst);
                true
            });
        }
        // Other pages do not wait.
        assert!(!ahead.wait(Some(b"p"), 20).await);
        assert!(!ahead.wait(Some(b"q"), 10).await);
        assert!(!ahead.wait(None, 10).await);
        assert_eq!(walked.load(Ordering::SeqCst), 0);
        let waiting = tokio::spawn(async move { ahead.wait(Some(b"p"), 10).await });
        // The waiting task runs until it parks (one thread: yielding lets it).
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "its walk is still going");
        gate.wait();
        assert!(waiting.await.unwrap(), "what the walk found");
        assert_eq!(walked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn the_oldest_walk_is_forgotten_first() {
        let ahead = Ahead::default();
        for n in 0..=SLOTS {
            ahead.start(vec![u8::try_from(n).unwrap()], 10, || false);
        }
        let slots = ahead.slots.lock().unwrap();
        let kept: Vec<u8> = slots.iter().map(|s| s.after[0]).collect();
        assert_eq!(kept, (1..=u8::try_from(SLOTS).unwrap()).collect::<Vec<_>>());
    }
}
