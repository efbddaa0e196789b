//! Leases: one key per lease, `NAMESPACE:lease:NAME`, holding the id of the instance
//! that holds it, kept by one task.
//!
//! Invariants:
//! - One script renews a lease this instance holds or takes it if it is free, so a holder
//!   whose local hold lapsed keeps it without a gap; held leases are renewed every third
//!   of the TTL, free ones tried every tenth.
//! - A lease counts as held here only until 80 % of the TTL after the last successful
//!   attempt began, so it lapses here before it expires in Redis.
//! - A dropped lease is released at the next round; an instance leaving gives up its leases and
//!   takes none again (an attempt answered after it started leaving is given back, under
//!   the lease's lock).
//! - A failed round trip restarts the subscription; the task ends when the bus is
//!   dropped.

use std::sync::atomic::Ordering;
use std::sync::{PoisonError, Weak};
use std::time::{Duration, Instant};

use redis::AsyncCommands as _;
use redis::aio::MultiplexedConnection;
use rsrc::observe;

use crate::connect::connect;
use crate::state::{BusState, LeaseState};
use crate::subscribe::beat_every;
use crate::wire::Out;

/// Gives up every lease this instance holds, and stops taking any
/// ([`ChangeBus::leave`](rsrc::bus::ChangeBus::leave)).
pub(crate) async fn give_up(s: &BusState) {
    // Set before any lease is looked at: an attempt answered from now on sees
    // it, under the lease's lock, and gives back what it got.
    s.leaving.store(true, Ordering::Release);
    let keys: Vec<String> = {
        let leases = s.leases.lock().unwrap_or_else(PoisonError::into_inner);
        leases
            .iter()
            .filter_map(|(key, state)| {
                let state = state.upgrade()?;
                // Not held here from now on, whatever Redis answers.
                state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
                    .map(|_| key.clone())
            })
            .collect()
    };
    let release = redis::Script::new(RELEASE);
    let gone = async {
        let mut c = connect(&s.client, s.options.timeout).await?;
        // This instance no longer serves anything here.
        redis::pipe()
            .del(s.member_record().0)
            .zrem(s.members_key(), &s.id)
            .query_async::<()>(&mut c)
            .await?;
        for key in &keys {
            release
                .key(key)
                .arg(&s.id)
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        redis::RedisResult::Ok(())
    };
    match tokio::time::timeout(s.options.timeout, gone).await {
        Ok(Ok(())) => tracing::info!(leases = keys.len(), "gave up this instance's leases"),
        _ => tracing::warn!("cannot give up the leases: they expire on their own"),
    }
}

/// Deletes a lease if this instance holds it.
const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                       return redis.call('del', KEYS[1]) else return 0 end";

/// Renews a lease this instance holds, or takes it if nobody does: 1 if it is this
/// instance's now.
const ACQUIRE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                         return redis.call('pexpire', KEYS[1], ARGV[2]) \
                       elseif redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                         return 1 else return 0 end";

/// Takes and renews leases, checks that Redis answers, and publishes the heartbeat: held
/// leases every third of the TTL, free ones every tenth.
pub(crate) async fn keep_leases(shared: Weak<BusState>, conn: MultiplexedConnection) {
    let acquire = redis::Script::new(ACQUIRE);
    let release = redis::Script::new(RELEASE);
    let mut conn = Some(conn);
    let mut last_round: Option<Instant> = None;
    loop {
        let Some(s) = shared.upgrade() else { return };
        let ttl = s.options.lease_ttl;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(3);
        let tick = (ttl / 10).max(Duration::from_millis(10));
        let round_start = Instant::now();
        // A full round: every held lease renewed, and the heartbeat.
        let full =
            last_round.is_none_or(|t| round_start.duration_since(t) >= beat_every(&s.options));
        if conn.is_none() {
            conn = connect(&s.client, s.options.timeout).await.ok();
        }
        let mut failed = conn.is_none();
        if let Some(c) = conn.as_mut() {
            let leases: Vec<(String, Option<LeaseState>)> = {
                let mut all = s.leases.lock().unwrap_or_else(PoisonError::into_inner);
                let out = all.iter().map(|(k, w)| (k.clone(), w.upgrade())).collect();
                all.retain(|(_, w)| w.strong_count() > 0);
                out
            };
            for (key, state) in leases {
                let start = Instant::now();
                let Some(state) = state else {
                    // Dropped: let another instance take it at once.
                    let _: redis::RedisResult<i64> =
                        release.key(&key).arg(&s.id).invoke_async(c).await;
                    continue;
                };
                if s.leaving.load(Ordering::Acquire) {
                    continue;
                }
                let held = state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_some_and(|u| start < u);
                if held && !full {
                    continue;
                }
                let got: redis::RedisResult<bool> = acquire
                    .key(&key)
                    .arg(&s.id)
                    .arg(ttl_ms)
                    .invoke_async::<i64>(c)
                    .await
                    .map(|n| n == 1);
                match got {
                    Ok(true) => {
                        let given_back = {
                            let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
                            // `leave` ran meanwhile (it sets the flag before it takes any
                            // lease's lock): what it released must stay free.
                            let leaving = s.leaving.load(Ordering::Acquire);
                            *st = (!leaving).then(|| start + ttl.mul_f32(0.8));
                            leaving
                        };
                        if given_back {
                            let _: redis::RedisResult<i64> =
                                release.key(&key).arg(&s.id).invoke_async(c).await;
                            continue;
                        }
                        if !held {
                            tracing::info!(lease = %key, "took the lease: this instance watches the source");
                            metrics::counter!(observe::BUS_LEASE_CHANGES, "change" => "acquired")
                                .increment(1);
                        }
                    }
                    Ok(false) => {
                        *state.lock().unwrap_or_else(PoisonError::into_inner) = None;
                        if held {
                            metrics::counter!(observe::BUS_LEASE_CHANGES, "change" => "lost")
                                .increment(1);
                        }
                    }
                    Err(e) => {
                        tracing::debug!(lease = %key, error = %e, "cannot reach Redis for a lease");
                        failed = true;
                        break;
                    }
                }
            }
            if full && !failed {
                // The heartbeat, and this instance's record of what it serves (which
                // lives as long as its leases would).
                let recorded = s.record_member().invoke_async::<i64>(c).await;
                let beat: redis::RedisResult<i64> = c
                    .publish(&s.channel.name, s.channel.encode(&s.id, None, &Out::Beat))
                    .await;
                failed = recorded.is_err() || beat.is_err();
                last_round = Some(round_start);
            }
        }
        if failed {
            conn = None;
            s.broken.notify_waiters();
        }
        drop(s);
        tokio::time::sleep(tick).await;
    }
}
