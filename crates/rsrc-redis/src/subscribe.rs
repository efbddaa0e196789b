//! The subscription to the bus's channel, and the heartbeat that proves it still
//! delivers.
//!
//! Invariants:
//! - The subscription is re-established with backoff whenever it ends, fails, goes
//!   silent (this instance has not heard its own heartbeat within [`echo_bound`]) or a
//!   round trip elsewhere failed. After each re-establishment, and after a first attempt
//!   that failed, this instance's listeners are told to look again; each time it is up
//!   (the first time too), this instance's shared sessions are reloaded.
//! - Only authentic, fresh messages are believed (`wire.rs`); anything else is dropped
//!   and counted. This instance's own messages are never delivered to it; resyncs (a
//!   `Resync` from another instance, this instance's own after it was away) go through
//!   the coalescer (`resync.rs`), and a `Resync("")` also reloads the shared sessions.
//! - The loop ends when the bus is dropped, or when the server it delivers to is gone.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio_util::sync::CancellationToken;

use rsrc::bus::BusEvent;
use rsrc::observe;

use crate::connect::{MIN_BACKOFF, backoff};
use crate::options::RedisBusOptions;
use crate::state::BusState;
use crate::wire::{Heard, Out, Reject, now_ms};

/// How often this instance publishes its heartbeat (with the lease renewals).
pub(crate) fn beat_every(options: &RedisBusOptions) -> Duration {
    (options.lease_ttl / 3).max(Duration::from_millis(10))
}

/// How long the subscription may go without this instance hearing its own heartbeat
/// before it is restarted: three beats and two round trips.
fn echo_bound(options: &RedisBusOptions) -> Duration {
    beat_every(options) * 3 + options.timeout * 2
}

/// Receives the other instances' events, re-subscribing whenever the subscription ends
/// or goes silent; ends when the bus is dropped (`closed`).
pub(crate) async fn subscribe(shared: Weak<BusState>, closed: CancellationToken) {
    let mut wait = MIN_BACKOFF;
    // Nothing can have been missed before the first subscription, if it succeeds at once.
    let mut missed = false;
    let mut warned = false;
    // What each sender last sent, across subscriptions: a message heard before is never
    // believed again.
    let mut heard = Heard::default();
    loop {
        let Some(s) = shared.upgrade() else { return };
        let attempt = async {
            let mut pubsub = s.client.get_async_pubsub().await?;
            pubsub.subscribe(&s.channel.name).await?;
            redis::RedisResult::Ok(pubsub)
        };
        let attempt = tokio::select! {
            () = closed.cancelled() => return,
            r = tokio::time::timeout(s.options.timeout, attempt) => r,
        };
        let pubsub = match attempt {
            Ok(Ok(p)) => p,
            failed => {
                s.subscribe_failures.fetch_add(1, Ordering::AcqRel);
                if let (Ok(Err(e)), false) = (&failed, warned) {
                    tracing::warn!(error = %e, "cannot subscribe to Redis; retrying");
                    warned = true;
                }
                missed = true;
                drop(s);
                tokio::select! {
                    () = closed.cancelled() => return,
                    () = tokio::time::sleep(backoff(&mut wait)) => {}
                }
                continue;
            }
        };
        if s.sink.get().is_none() {
            return;
        }
        s.subscribed.store(true, Ordering::Release);
        metrics::gauge!(observe::BUS_CONNECTED).set(1.0);
        // Shared sessions changed before the subscription was up (even the first: a
        // session may have been created here meanwhile) are reloaded; after a failure,
        // every listener looks again too.
        if missed {
            tracing::info!("subscribed to Redis again: listeners are told to look again");
            metrics::counter!(observe::BUS_RECONNECTS).increment(1);
            s.recovered_ms.store(s.now_ms().max(1), Ordering::Release);
            s.resyncs.ask(Some(""), true);
        } else {
            s.resyncs.ask(None, true);
        }
        missed = true;
        warned = false;
        wait = MIN_BACKOFF;
        s.echo_ms.store(s.now_ms(), Ordering::Release);
        let bound = u64::try_from(echo_bound(&s.options).as_millis()).unwrap_or(u64::MAX);
        let mut watchdog = tokio::time::interval(beat_every(&s.options));
        watchdog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut messages = pubsub.into_on_message();
        let breaker = Arc::clone(&s.broken);
        let broken = breaker.notified();
        tokio::pin!(broken);
        let id = s.id.clone();
        drop(s);
        loop {
            tokio::select! {
                () = closed.cancelled() => return,
                msg = messages.next() => {
                    let Some(msg) = msg else { break };
                    let Some(s) = shared.upgrade() else { return };
                    let received = s.channel.decode(msg.get_payload_bytes()).and_then(|m| {
                        if heard.fresh(&m, now_ms()) { Ok(m) } else { Err(Reject::Stale) }
                    });
                    match received {
                        Err(why) => s.rejected_message(why),
                        Ok(m) if m.from == id => {
                            if matches!(m.out, Out::Beat) {
                                s.echo_ms.store(s.now_ms(), Ordering::Release);
                            }
                        }
                        Ok(m) => {
                            if !matches!(m.out, Out::Beat) {
                                metrics::counter!(observe::BUS_RECEIVED).increment(1);
                            }
                            match m.out {
                                Out::Beat => {}
                                // Another instance lost events, perhaps session announcements
                                // among them: its sessions are reloaded too (coalesced).
                                Out::Event(BusEvent::Resync(prefix)) => {
                                    s.resyncs.ask(Some(&prefix), prefix.is_empty());
                                }
                                Out::Event(event) => {
                                    let Some(sink) = s.sink.get() else { return };
                                    if !sink.deliver(event) {
                                        // The server is gone.
                                        return;
                                    }
                                }
                                Out::Session(name) => s.sessions_changed(Some(&name)),
                            }
                        }
                    }
                }
                () = &mut broken => break,
                _ = watchdog.tick() => {
                    let Some(s) = shared.upgrade() else { return };
                    let heard = s.echo_ms.load(Ordering::Acquire);
                    if s.now_ms().saturating_sub(heard) > bound {
                        tracing::warn!("the Redis subscription delivers nothing, not even this instance's heartbeat");
                        break;
                    }
                }
            }
        }
        if let Some(s) = shared.upgrade() {
            s.subscribed.store(false, Ordering::Release);
        }
        metrics::gauge!(observe::BUS_CONNECTED).set(0.0);
        tracing::warn!("lost the Redis subscription; reconnecting");
    }
}
