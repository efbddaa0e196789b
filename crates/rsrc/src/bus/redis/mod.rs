//! The change bus on Redis (7 or later): events over one pub/sub channel, leases as keys
//! with an expiry that their holder renews.
//!
//! - Events are JSON objects tagged with the sending instance's random id; an instance
//!   ignores its own. A message that is not one of ours (too large, not JSON, unknown
//!   shape) is skipped with a debug log; an event too large to send ([`MAX_MESSAGE`]) is
//!   sent as the resync of a prefix of its URI instead.
//! - Publishing puts the event in a bounded queue (`queue`, default 4096) drained by one
//!   task. An event that does not fit, or that Redis refused, is dropped, and once Redis
//!   answers again the other instances are sent one `Resync("")` instead; receiving it,
//!   an instance resynchronises its listeners *and* reloads its shared sessions, since a
//!   session's announcement may have been among the lost.
//! - The subscription is re-established with backoff (100 ms doubling to 2 s) whenever it
//!   ends; after each re-establishment (and after a first attempt that failed) this
//!   instance's listeners are resynchronised ([`BusSink::lost`]) and its shared sessions
//!   reloaded, as events may have passed while it was away. Every instance publishes a
//!   heartbeat each renewal round and expects to hear its own within a bound: a
//!   subscription that stops delivering without closing is restarted too. Connections
//!   use TCP keepalive.
//! - A lease is the key `NAMESPACE:lease:NAME`, held by the instance whose id it holds.
//!   One script renews it if it is this instance's or takes it if it is free, so a
//!   holder whose local hold lapsed (a stalled runtime) keeps it without a gap. Held
//!   leases are renewed every third of `ttl`, free ones tried every tenth; a lease
//!   counts as held here until 80 % of `ttl` after the last successful attempt began, so
//!   it lapses here before it expires in Redis. A holder that dies is replaced within
//!   `ttl` plus a tenth (3.3 s with the defaults). A failed round trip also restarts the
//!   subscription, so a Redis that stops answering without closing its connections is
//!   noticed. An instance shutting down gives its leases up ([`ChangeBus::leave`]) and
//!   takes none again (an attempt answered after that is given back at once); another
//!   instance takes each within a tenth of `ttl`.
//! - Every task ends when the bus is dropped.
//!
//! This file holds the bus itself (its options, its shared state, connecting, the
//! [`ChangeBus`] methods); beside it, `wire.rs` is the format of the channel's messages,
//! `publish.rs` the publish queue and its task, `subscribe.rs` the subscription loop and
//! the heartbeat it listens for, `leases.rs` the leases (kept by one task, given up at
//! [`ChangeBus::leave`]), and `store/` the sessions shared through Redis.
//!
//! [`MAX_MESSAGE`]: wire::MAX_MESSAGE

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::io::tcp::{TcpSettings, socket2::TcpKeepalive};
use redis::{AsyncConnectionConfig, IntoConnectionInfo as _};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::{BusEvent, BusSink, ChangeBus, Lease, SessionChanged, SessionStore};
use leases::{LeaseState, WeakLease, keep_leases};
use publish::publish;
use subscribe::subscribe;
use wire::Out;

mod leases;
mod publish;
mod store;
mod subscribe;
mod wire;

/// How a [`RedisBus`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisBusOptions {
    /// Prefix of the channel and of every key (default `rsrc`): deployments that share a
    /// Redis use different ones.
    pub namespace: String,
    /// How long a lease lasts without renewal (default 3 s).
    pub lease_ttl: Duration,
    /// Most events waiting to be published (default 4096).
    pub queue: usize,
    /// Longest wait for Redis to connect or answer (default 2 s).
    pub timeout: Duration,
}

impl Default for RedisBusOptions {
    fn default() -> Self {
        RedisBusOptions {
            namespace: "rsrc".into(),
            lease_ttl: Duration::from_secs(3),
            queue: 4096,
            timeout: Duration::from_secs(2),
        }
    }
}

/// Why a [`RedisBus`] could not start.
#[derive(Debug)]
pub struct RedisBusError(String);

impl std::fmt::Display for RedisBusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedisBusError {}

/// A [`ChangeBus`] on Redis. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RedisBus {
    shared: Arc<BusState>,
}

#[derive(Debug)]
struct BusState {
    client: redis::Client,
    id: String,
    channel: String,
    options: RedisBusOptions,
    queue: mpsc::Sender<Out>,
    /// An event did not fit in the queue.
    overflowed: AtomicBool,
    sink: OnceLock<BusSink>,
    leases: Mutex<Vec<(String, WeakLease)>>,
    /// A round trip failed: the subscription restarts.
    broken: Arc<Notify>,
    runtime: tokio::runtime::Handle,
    /// Held while this instance lives: `NAMESPACE:lease:instance:ID` tells the others
    /// whether a stream this instance writes may still end.
    alive: OnceLock<Lease>,
    /// The handlers of every session store of this bus ([`SessionStore::on_change`]),
    /// each dropped with its store.
    session_handlers: Mutex<Vec<Weak<SessionHandlers>>>,
    /// Shutting down: leases are given up and not taken again.
    leaving: AtomicBool,
    /// When this instance last heard its own heartbeat, in ms since `epoch`.
    echo_ms: AtomicU64,
    /// When the subscription last came back after a failure, in ms since `epoch` (0:
    /// never).
    recovered_ms: AtomicU64,
    /// The subscription is up.
    subscribed: AtomicBool,
    epoch: Instant,
    /// Cancelled when the bus is dropped: its tasks end.
    closed: CancellationToken,
}

impl Drop for BusState {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// The session-change handlers of one session store.
#[derive(Default)]
pub(super) struct SessionHandlers(Mutex<Vec<SessionChanged>>);

impl std::fmt::Debug for SessionHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionHandlers")
    }
}

impl SessionHandlers {
    fn call(&self, id: Option<&str>) {
        for h in self.0.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            h(id);
        }
    }

    fn add(&self, handler: SessionChanged) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(handler);
    }
}

impl BusState {
    /// Tells every session store of this bus that session `id` (all for `None`) changed.
    fn sessions_changed(&self, id: Option<&str>) {
        let live: Vec<Arc<SessionHandlers>> = {
            let mut all = self
                .session_handlers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.retain(|w| w.strong_count() > 0);
            all.iter().filter_map(Weak::upgrade).collect()
        };
        for h in live {
            h.call(id);
        }
    }

    fn add_session_handlers(&self, handlers: &Arc<SessionHandlers>) {
        let mut all = self
            .session_handlers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(handlers));
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the subscription is down, or came back from a failure within
    /// [`RECOVERY`]: Redis may have lost data that instances are putting back.
    fn recovering(&self) -> bool {
        let at = self.recovered_ms.load(Ordering::Acquire);
        !self.subscribed.load(Ordering::Acquire)
            || (at != 0
                && self.now_ms().saturating_sub(at)
                    < u64::try_from(RECOVERY.as_millis()).unwrap_or(u64::MAX))
    }
}

const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long after the subscription came back from a failure a session missing from Redis
/// may still be put back by an instance that has a copy (Redis may have restarted empty).
const RECOVERY: Duration = Duration::from_secs(10);

fn backoff(current: &mut Duration) -> Duration {
    let now = *current;
    *current = (*current * 2).min(MAX_BACKOFF);
    now
}

impl RedisBus {
    /// Connects to `url` (`redis://[user:password@]host:port[/db]`), checks that Redis
    /// answers, and starts publishing and keeping leases. Must be called within a Tokio
    /// runtime, which runs the bus's tasks.
    pub async fn connect(url: &str, options: RedisBusOptions) -> Result<RedisBus, RedisBusError> {
        let info = url
            .into_connection_info()
            .map_err(|e| RedisBusError(format!("bad Redis URL: {e}")))?;
        // Keepalive probes and a limit on unacknowledged data: a connection whose peer
        // vanished is closed within seconds, not hours.
        let tcp = TcpSettings::default()
            .set_nodelay(true)
            .set_keepalive(
                TcpKeepalive::new()
                    .with_time(Duration::from_secs(5))
                    .with_interval(Duration::from_secs(2))
                    .with_retries(3),
            )
            .set_user_timeout(Duration::from_secs(10));
        let client = redis::Client::open(info.set_tcp_settings(tcp))
            .map_err(|e| RedisBusError(format!("bad Redis URL: {e}")))?;
        let mut conn = connect(&client, options.timeout)
            .await
            .map_err(|e| RedisBusError(format!("cannot reach Redis: {e}")))?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| RedisBusError(format!("Redis does not answer: {e}")))?;
        let (queue, rx) = mpsc::channel(options.queue.max(1));
        let mut id = [0u8; 12];
        getrandom::fill(&mut id).map_err(|e| RedisBusError(format!("no randomness: {e}")))?;
        let shared = Arc::new(BusState {
            client,
            // The process id first, so that an operator reading a lease can tell whose.
            id: format!(
                "{}-{}",
                std::process::id(),
                id.iter().map(|b| format!("{b:02x}")).collect::<String>()
            ),
            channel: format!("{}:changes", options.namespace),
            options,
            queue,
            overflowed: AtomicBool::new(false),
            sink: OnceLock::new(),
            leases: Mutex::new(Vec::new()),
            broken: Arc::new(Notify::new()),
            runtime: tokio::runtime::Handle::current(),
            alive: OnceLock::new(),
            session_handlers: Mutex::new(Vec::new()),
            leaving: AtomicBool::new(false),
            echo_ms: AtomicU64::new(0),
            recovered_ms: AtomicU64::new(0),
            subscribed: AtomicBool::new(false),
            epoch: Instant::now(),
            closed: CancellationToken::new(),
        });
        let bus = RedisBus { shared };
        let alive = bus.lease(&format!("instance:{}", bus.shared.id));
        let _ = bus.shared.alive.set(alive);
        tokio::spawn(publish(Arc::downgrade(&bus.shared), rx, Some(conn.clone())));
        tokio::spawn(keep_leases(Arc::downgrade(&bus.shared), conn));
        Ok(bus)
    }

    /// This instance's id on the bus, as lease values hold it: `PID-RANDOM`.
    pub fn instance(&self) -> &str {
        &self.shared.id
    }
}

async fn connect(
    client: &redis::Client,
    timeout: Duration,
) -> redis::RedisResult<MultiplexedConnection> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
}

impl ChangeBus for RedisBus {
    fn publish(&self, event: BusEvent) {
        self.shared.send(Out::Event(event));
    }

    fn attach(&self, sink: BusSink) {
        if self.shared.sink.set(sink).is_ok() {
            self.shared.runtime.spawn(subscribe(
                Arc::downgrade(&self.shared),
                self.shared.closed.clone(),
            ));
        }
    }

    fn lease(&self, name: &str) -> Lease {
        let state: LeaseState = Arc::new(Mutex::new(None));
        self.shared
            .leases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((
                format!("{}:lease:{name}", self.shared.options.namespace),
                Arc::downgrade(&state),
            ));
        Lease::until(state)
    }

    fn leave(&self) -> crate::provider::BoxFuture<'_, ()> {
        Box::pin(leases::give_up(&self.shared))
    }

    fn session_store(&self, idle: Duration) -> Option<Arc<dyn SessionStore>> {
        Some(Arc::new(store::RedisSessions::new(
            Arc::clone(&self.shared),
            idle,
        )))
    }
}
