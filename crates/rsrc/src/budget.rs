//! The budget of content bytes in flight: how much content read for requests, and
//! responses not yet written out, all requests of a server may hold together.
//!
//! A provider reserves before it allocates ([`RequestContext::reserve`]); the engine
//! reserves for a large result whose provider did not; the reservation then travels with
//! the encoded response to the transport and is given back when the bytes have been
//! written or dropped. Over stdio the output buffer holds only what fits its high-water
//! mark, so memory stays within about the budget plus two responses; over HTTP the
//! reservation is owned by the response body itself.
//!
//! Invariants:
//! - Reserving waits for room and never fails; waiters are served in arrival order (a
//!   fair semaphore), so a large read is not starved by a stream of small ones.
//! - A reservation larger than the whole budget is cut to the budget: it then runs alone.
//! - A request that asks for more while holding a reservation it cannot extend at once
//!   gives back what it holds before it waits, so requests never wait on each other.
//!
//! [`RequestContext::reserve`]: crate::RequestContext::reserve

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The unit of accounting: a permit is one KiB.
const UNIT: u64 = 1024;

/// Content bytes all requests may hold at once (see the module docs).
#[derive(Clone, Debug)]
pub struct ByteBudget {
    permits: Arc<Semaphore>,
    /// Reservations waiting for room now.
    waiting: Arc<AtomicUsize>,
    /// The budget, in units.
    units: u32,
}

impl ByteBudget {
    /// A budget of `bytes` (at least 1 KiB, at most 4 TiB).
    pub fn new(bytes: u64) -> Self {
        let units = u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .max(1);
        ByteBudget {
            permits: Arc::new(Semaphore::new(units as usize)),
            waiting: Arc::new(AtomicUsize::new(0)),
            units,
        }
    }

    /// The whole budget, in bytes.
    pub fn limit(&self) -> u64 {
        u64::from(self.units) * UNIT
    }

    /// What is not reserved now, in bytes.
    pub fn available(&self) -> u64 {
        self.permits.available_permits() as u64 * UNIT
    }

    fn units_for(&self, bytes: u64) -> u32 {
        u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .clamp(1, self.units)
    }

    /// How many reservations wait for room now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Waits until `bytes` fit, then reserves them.
    pub async fn reserve(&self, bytes: u64) -> Reservation {
        if let Some(now) = self.try_reserve(bytes) {
            return now;
        }
        /// Counts a waiter while it waits, however its wait ends.
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(&self.waiting);
        let units = self.units_for(bytes);
        // The semaphore is never closed, so acquiring cannot fail.
        let permit = Arc::clone(&self.permits)
            .acquire_many_owned(units)
            .await
            .ok();
        Reservation(permit)
    }

    /// Reserves `bytes` if they fit now.
    fn try_reserve(&self, bytes: u64) -> Option<Reservation> {
        let units = self.units_for(bytes);
        Arc::clone(&self.permits)
            .try_acquire_many_owned(units)
            .ok()
            .map(|p| Reservation(Some(p)))
    }
}

/// Bytes reserved from a [`ByteBudget`], given back on drop. The default holds nothing.
#[derive(Debug, Default)]
pub struct Reservation(Option<OwnedSemaphorePermit>);

impl Reservation {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |p| p.num_permits() as u64 * UNIT)
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    fn absorb(&mut self, other: Reservation) {
        match (&mut self.0, other.0) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
    }
}

/// What one request holds, shared by the clones of its context.
#[derive(Debug)]
pub(crate) struct Held {
    budget: ByteBudget,
    reservation: std::sync::Mutex<Reservation>,
}

impl Held {
    pub(crate) fn new(budget: ByteBudget) -> Self {
        Held {
            budget,
            reservation: std::sync::Mutex::new(Reservation::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Reservation> {
        self.reservation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds `bytes` to what the request holds, waiting for room (see the module docs).
    pub(crate) async fn reserve(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let given_back = {
            let mut held = self.lock();
            if held.is_empty() {
                0
            } else if let Some(more) = self.budget.try_reserve(bytes) {
                held.absorb(more);
                return;
            } else {
                // Waiting while holding could wait on another request doing the same.
                let mine = std::mem::take(&mut *held);
                mine.bytes()
            }
        };
        let got = self.budget.reserve(given_back.saturating_add(bytes)).await;
        self.lock().absorb(got);
    }

    pub(crate) fn holds_any(&self) -> bool {
        !self.lock().is_empty()
    }

    pub(crate) fn take(&self) -> Reservation {
        std::mem::take(&mut *self.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn reservations_wait_for_room_and_give_it_back_on_drop() {
        let budget = ByteBudget::new(100 * 1024);
        let a = budget.reserve(60 * 1024).await;
        assert_eq!(budget.available(), 40 * 1024);
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.reserve(60 * 1024).await.bytes() }
        });
        // The waiting task runs until it parks (one thread: yielding lets it).
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "there is no room yet");
        drop(a);
        assert_eq!(waiting.await.unwrap(), 60 * 1024);
        assert_eq!(budget.available(), 100 * 1024);
    }

    #[tokio::test]
    async fn a_reservation_larger_than_the_budget_runs_alone() {
        let budget = ByteBudget::new(8 * 1024);
        let big = budget.reserve(1 << 40).await;
        assert_eq!(big.bytes(), 8 * 1024);
        assert_eq!(budget.available(), 0);
    }

    #[tokio::test]
    async fn requests_asking_for_more_while_holding_never_wait_on_each_other() {
        let budget = ByteBudget::new(10 * 1024);
        let (a, b) = (
            Arc::new(Held::new(budget.clone())),
            Arc::new(Held::new(budget.clone())),
        );
        a.reserve(5 * 1024).await;
        b.reserve(5 * 1024).await;
        // Each holds half and wants more than the other half: waiting while holding
        // would leave both waiting forever.
        let more = |h: &Arc<Held>| {
            let h = Arc::clone(h);
            tokio::spawn(async move { h.reserve(6 * 1024).await })
        };
        let (more_a, more_b) = (more(&a), more(&b));
        let first = tokio::time::timeout(Duration::from_secs(10), more_a)
            .await
            .expect("the first one gets room");
        first.unwrap();
        assert_eq!(a.take().bytes(), 10 * 1024, "cut to the budget");
        tokio::time::timeout(Duration::from_secs(10), more_b)
            .await
            .expect("then the second")
            .unwrap();
        assert_eq!(b.take().bytes(), 10 * 1024);
        assert_eq!(budget.available(), 10 * 1024);
    }
}
