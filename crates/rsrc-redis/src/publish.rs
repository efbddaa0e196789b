//! The publish queue: events for the other instances wait in a bounded queue drained by
//! one task, which sends them on the channel.
//!
//! Invariants:
//! - Publishing never blocks: an event that does not fit in the queue is dropped, and
//!   the drop remembered.
//! - After anything was dropped (the queue full, Redis refusing or away), the other
//!   instances are sent one `Resync("")` ahead of the next event, as soon as Redis
//!   answers, and within a second even if no event comes.
//! - A failed round trip restarts the subscription too (the connection may be dead
//!   without having closed); the task ends when the bus is dropped.

use std::sync::Weak;
use std::sync::atomic::Ordering;
use std::time::Duration;

use redis::AsyncCommands as _;
use redis::aio::MultiplexedConnection;
use tokio::sync::mpsc;

use rsrc::bus::BusEvent;

use crate::connect::{MIN_BACKOFF, backoff, connect};
use crate::state::BusState;
use crate::wire::Out;

/// Drains the queue into the channel; after anything was dropped, sends one resync once
/// Redis answers.
pub(crate) async fn publish(
    shared: Weak<BusState>,
    mut rx: mpsc::Receiver<Out>,
    mut conn: Option<MultiplexedConnection>,
) {
    let mut dropped = false;
    let mut wait = MIN_BACKOFF;
    loop {
        let event = if dropped {
            // Look again at least every second, to send the resync without waiting for
            // the next event.
            match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
                Ok(Some(event)) => Some(event),
                Ok(None) => return,
                Err(_) => None,
            }
        } else {
            match rx.recv().await {
                Some(event) => Some(event),
                None => return,
            }
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.overflowed.swap(false, Ordering::AcqRel) {
            dropped = true;
        }
        let mut batch = Vec::with_capacity(2);
        if dropped {
            batch.push(Out::Event(BusEvent::Resync(String::new())));
        }
        batch.extend(event);
        if conn.is_none() {
            conn = connect(&shared.client, shared.options.timeout).await.ok();
        }
        let Some(c) = conn.as_mut() else {
            dropped = true;
            drop(shared);
            tokio::time::sleep(backoff(&mut wait)).await;
            continue;
        };
        let mut failed = false;
        for event in &batch {
            let seq = shared.seq.fetch_add(1, Ordering::AcqRel) + 1;
            let message = shared.channel.encode(&shared.id, Some(seq), event);
            let sent: redis::RedisResult<i64> = c.publish(&shared.channel.name, message).await;
            if sent.is_ok() {
                metrics::counter!(rsrc::observe::BUS_PUBLISHED).increment(1);
            }
            if let Err(e) = sent {
                tracing::warn!(error = %e, "cannot publish a change to Redis; the other instances will be told to resync");
                failed = true;
                break;
            }
        }
        if failed {
            conn = None;
            dropped = true;
            shared.broken.notify_waiters();
            drop(shared);
            tokio::time::sleep(backoff(&mut wait)).await;
        } else {
            dropped = false;
            wait = MIN_BACKOFF;
        }
    }
}
