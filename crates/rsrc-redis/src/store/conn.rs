//! The session store's connection to Redis: one multiplexed connection, opened on first
//! use and opened again after it is found broken, and Redis's errors as the store's.
//!
//! Invariant: a round trip that fails because the connection itself is gone forgets the
//! connection, so the next call opens a new one; any other failure keeps it.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use rsrc::sessions::StoreError;

use crate::connect::connect;

/// Redis's error, as the store reports it.
pub(crate) fn err(e: &redis::RedisError) -> StoreError {
    StoreError(format!("Redis: {e}"))
}

/// An answer of a shape the store did not expect.
pub(crate) fn unexpected(what: &str) -> StoreError {
    StoreError(format!("Redis: unexpected answer to {what}"))
}

/// Whether a failed round trip means the connection itself is gone.
fn broken_connection(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal()
}

/// A connection of the store, kept between calls.
pub(crate) struct StoreConn {
    client: redis::Client,
    timeout: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl StoreConn {
    /// Connections to `client`'s Redis, each connecting and answering within `timeout`.
    pub(crate) fn new(client: redis::Client, timeout: Duration) -> Self {
        StoreConn {
            client,
            timeout,
            conn: Mutex::new(None),
        }
    }

    async fn conn(&self) -> Result<MultiplexedConnection, StoreError> {
        if let Some(c) = self.lock().clone() {
            return Ok(c);
        }
        let c = connect(&self.client, self.timeout)
            .await
            .map_err(|e| err(&e))?;
        *self.lock() = Some(c.clone());
        Ok(c)
    }

    fn lock(&self) -> MutexGuard<'_, Option<MultiplexedConnection>> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on a connection, forgetting the connection if it is found broken (the
    /// next call opens a new one).
    pub(crate) async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut MultiplexedConnection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        let r = f(&mut c).await;
        if let Err(e) = &r
            && broken_connection(e)
        {
            *self.lock() = None;
        }
        r.map_err(|e| err(&e))
    }
}
