//! Locking a mutex whose holder panicked: the data is taken as it is.
//!
//! Invariant: a poisoned lock never panics its next user: the data is used as the
//! panicking holder left it (a request's panic fails that request, not the endpoint).

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The guard of `m`, poisoned or not.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
