//! The change bus on Redis (7 or later): events over one pub/sub channel, leases as keys
//! with an expiry that their holder renews. Redis is not trusted: whoever can read it
//! learns nothing that lets them act as a client, and whoever can write to it can
//! disrupt the deployment but not make an instance believe what it wrote
//! (`docs/security.md`, "The cluster").
//!
//! - Events are JSON objects tagged with the sending instance's random id, the time and
//!   a sequence number, and authenticated with the deployment's bus keys (`wire.rs`); an
//!   instance ignores its own. A message that does not verify, is not one of ours, or
//!   is stale or replayed is dropped and counted ([`RedisBus::rejected`]), and logged at
//!   most once per [`LOG_EVERY`]; an event too large to send ([`MAX_MESSAGE`]) is sent as
//!   the resync of a prefix of its URI instead.
//! - Publishing puts the event in a bounded queue (`queue`, default 4096) drained by one
//!   task. An event that does not fit, or that Redis refused, is dropped, and once Redis
//!   answers again the other instances are sent one `Resync("")` instead; receiving it,
//!   an instance resynchronises its listeners *and* reloads its shared sessions, since a
//!   session's announcement may have been among the lost. Resyncs are coalesced and
//!   rate-limited (`resync.rs`): a burst costs one.
//! - The subscription is re-established with backoff (100 ms doubling to 2 s) whenever it
//!   ends; after each re-establishment (and after a first attempt that failed) this
//!   instance's listeners are resynchronised (as [`BusSink::lost`] does, through the
//!   coalescer) and its shared sessions reloaded, as events may have passed while it was
//!   away. Every instance publishes a
//!   heartbeat each renewal round and expects to hear its own within a bound: a
//!   subscription that stops delivering without closing is restarted too. Connections
//!   use TCP keepalive, and TLS with `rediss://` (rustls, the system's roots or a CA
//!   file).
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
//! - One namespace holds one deployment: every instance records what it serves
//!   (`members.rs`), and one that finds a live instance serving something else, or
//!   writing with keys it does not have, refuses to start.
//! - Every task ends when the bus is dropped.
//!
//! This file holds the bus itself (its options, its shared state, connecting, the
//! [`ChangeBus`] methods); beside it, `wire.rs` is the format of the channel's messages,
//! `publish.rs` the publish queue and its task, `subscribe.rs` the subscription loop and
//! the heartbeat it listens for, `resync.rs` the coalescing of resyncs, `leases.rs` the
//! leases (kept by one task, given up at [`ChangeBus::leave`]), `members.rs` the record
//! of what each instance serves, and `store/` the sessions shared through Redis.
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
use crate::keyring::Keyring;
use leases::{LeaseState, WeakLease, keep_leases};
use publish::publish;
use resync::{Resyncs, resync};
use subscribe::subscribe;
use wire::{Channel, Out, Reject};

pub(crate) use store::fuzz_record;
pub(crate) use wire::fuzz_message;

mod leases;
mod members;
mod publish;
mod resync;
mod store;
mod subscribe;
mod wire;

/// How a [`RedisBus`] runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisBusOptions {
    /// Prefix of the channel and of every key (default `rsrc`): deployments that share a
    /// Redis use different ones.
    pub namespace: String,
    /// The keys that authenticate what the instances write to Redis (messages, session
    /// records, replay logs) and name sessions there (default: none, and
    /// [`RedisBus::connect`] refuses to start without one). The first signs; every one
    /// verifies, so a key is rotated as cursor keys are. Every instance of the
    /// deployment holds the same.
    pub keys: Vec<[u8; 32]>,
    /// The password of the URL's user (or of `default`), when it is not in the URL (it
    /// should not be: a URL ends up in logs and process listings).
    pub password: Option<String>,
    /// With `rediss://`: the certificate authorities (PEM) Redis's certificate must chain
    /// to, instead of the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// What this instance serves, one line per source (its URI prefix first, then what
    /// identifies it: its location and settings). Instances sharing a namespace must
    /// serve the same: one that finds a live instance serving anything else refuses to
    /// start (empty: not checked).
    pub serves: Vec<String>,
    /// How long a lease lasts without renewal (default 3 s).
    pub lease_ttl: Duration,
    /// Most events waiting to be published (default 4096).
    pub queue: usize,
    /// Longest wait for Redis to connect or answer (default 2 s).
    pub timeout: Duration,
}

impl std::fmt::Debug for RedisBusOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBusOptions")
            .field("namespace", &self.namespace)
            .field("keys", &self.keys.len())
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_pem", &self.ca_pem.is_some())
            .field("serves", &self.serves)
            .field("lease_ttl", &self.lease_ttl)
            .field("queue", &self.queue)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Default for RedisBusOptions {
    fn default() -> Self {
        RedisBusOptions {
            namespace: "rsrc".into(),
            keys: Vec::new(),
            password: None,
            ca_pem: None,
            serves: Vec::new(),
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

/// What a [`RedisBus`] dropped because it did not verify ([`RedisBus::rejected`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejected {
    /// Messages on the channel: forged, malformed, stale or replayed.
    pub messages: u64,
    /// Session records and replay-log entries read from Redis: forged, or over their
    /// bounds.
    pub stored: u64,
}

/// How often at most a rejection is logged (with the count since the last).
pub(super) const LOG_EVERY: Duration = Duration::from_secs(10);

/// Counts of what was refused, and a log of them at a bounded rate.
#[derive(Debug, Default)]
pub(super) struct Rejections {
    messages: AtomicU64,
    stored: AtomicU64,
    /// When a rejection was last logged (ms since the bus's epoch; 0: never).
    logged_ms: AtomicU64,
    /// Rejections since then.
    unlogged: AtomicU64,
}

impl Rejections {
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

/// A [`ChangeBus`] on Redis. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RedisBus {
    shared: Arc<BusState>,
}

/// The bus keys, one ring per purpose.
#[derive(Debug)]
pub(super) struct BusKeys {
    /// Sessions' names in Redis (digests of their ids and owners).
    pub(super) names: Keyring,
    /// Session records' fields.
    pub(super) fields: Keyring,
    /// Replay-log entries.
    pub(super) logs: Keyring,
    /// Instances' records of what they serve.
    pub(super) members: Keyring,
}

#[derive(Debug)]
struct BusState {
    client: redis::Client,
    id: String,
    channel: Channel,
    keys: BusKeys,
    options: RedisBusOptions,
    queue: mpsc::Sender<Out>,
    /// An event did not fit in the queue.
    overflowed: AtomicBool,
    /// The sequence number of the last event sent.
    seq: AtomicU64,
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
    /// Resyncs asked for, done by one task.
    resyncs: Arc<Resyncs>,
    /// What was refused.
    rejections: Rejections,
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
    fn call(&self, name: Option<&str>) {
        for h in self.0.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            h(name);
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
    /// Tells every session store of this bus that session `name` (all for `None`)
    /// changed.
    fn sessions_changed(&self, name: Option<&str>) {
        let live: Vec<Arc<SessionHandlers>> = {
            let mut all = self
                .session_handlers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.retain(|w| w.strong_count() > 0);
            all.iter().filter_map(Weak::upgrade).collect()
        };
        for h in live {
            h.call(name);
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

    /// A message on the channel was refused.
    fn rejected_message(&self, why: Reject) {
        self.rejections.messages.fetch_add(1, Ordering::Relaxed);
        let (why, reason) = match why {
            Reject::Forged => ("its tag does not verify", "mac"),
            Reject::Malformed => ("not one of ours", "malformed"),
            Reject::Replayed => ("stale or replayed", "replayed"),
        };
        metrics::counter!(crate::observe::BUS_REFUSED, "reason" => reason).increment(1);
        self.rejections
            .log(self.now_ms(), "a message on the change channel", why);
    }

    /// What was read back from Redis for a session (`what`) was refused (`why`).
    fn rejected_stored(&self, what: &str, why: &str) {
        self.rejections.stored.fetch_add(1, Ordering::Relaxed);
        self.rejections.log(self.now_ms(), what, why);
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
    /// Connects to `url` (`redis://[user@]host:port[/db]`, `rediss://…` for TLS,
    /// `redis+unix:///path`), checks that Redis answers and that no other deployment
    /// uses the namespace, and starts publishing and keeping leases. Must be called
    /// within a Tokio runtime, which runs the bus's tasks. Refused without a key
    /// ([`RedisBusOptions::keys`]).
    pub async fn connect(url: &str, options: RedisBusOptions) -> Result<RedisBus, RedisBusError> {
        let Some(keys) = Keyring::new(&options.keys) else {
            return Err(RedisBusError(
                "no bus key: the instances authenticate what they write to Redis with a key they share (e.g. `openssl rand -hex 32 > bus.keys`, --bus-key-file)".into(),
            ));
        };
        let info = url
            .into_connection_info()
            .map_err(|e| RedisBusError(format!("bad Redis URL: {e}")))?;
        let mut redis_settings = info.redis_settings().clone();
        if let Some(password) = &options.password {
            redis_settings = redis_settings.set_password(password);
        }
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
        let info = info
            .set_tcp_settings(tcp)
            .set_redis_settings(redis_settings);
        let tls = matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. });
        let client = match (&options.ca_pem, tls) {
            (Some(pem), true) => redis::Client::build_with_tls(
                info,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem.clone()),
                },
            ),
            (Some(_), false) => {
                return Err(RedisBusError(
                    "a CA file is for TLS: use a rediss:// URL".into(),
                ));
            }
            (None, _) => redis::Client::open(info),
        }
        .map_err(|e| RedisBusError(format!("bad Redis URL or CA: {e}")))?;
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
            channel: Channel::new(
                format!("{}:changes", options.namespace),
                keys.derive("rsrc/bus/messages"),
            ),
            keys: BusKeys {
                names: keys.derive("rsrc/bus/session-names"),
                fields: keys.derive("rsrc/bus/session-fields"),
                logs: keys.derive("rsrc/bus/replay-logs"),
                members: keys.derive("rsrc/bus/members"),
            },
            options,
            queue,
            overflowed: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            sink: OnceLock::new(),
            leases: Mutex::new(Vec::new()),
            broken: Arc::new(Notify::new()),
            runtime: tokio::runtime::Handle::current(),
            alive: OnceLock::new(),
            session_handlers: Mutex::new(Vec::new()),
            resyncs: Arc::new(Resyncs::default()),
            rejections: Rejections::default(),
            leaving: AtomicBool::new(false),
            echo_ms: AtomicU64::new(0),
            recovered_ms: AtomicU64::new(0),
            subscribed: AtomicBool::new(false),
            epoch: Instant::now(),
            closed: CancellationToken::new(),
        });
        members::join(&shared, &mut conn)
            .await
            .map_err(RedisBusError)?;
        let bus = RedisBus { shared };
        let alive = bus.lease(&format!("instance:{}", bus.shared.id));
        let _ = bus.shared.alive.set(alive);
        tokio::spawn(publish(Arc::downgrade(&bus.shared), rx, Some(conn.clone())));
        tokio::spawn(keep_leases(Arc::downgrade(&bus.shared), conn));
        tokio::spawn(resync(
            Arc::downgrade(&bus.shared),
            Arc::clone(&bus.shared.resyncs),
            bus.shared.closed.clone(),
        ));
        Ok(bus)
    }

    /// This instance's id on the bus, as lease values hold it: `PID-RANDOM`.
    pub fn instance(&self) -> &str {
        &self.shared.id
    }

    /// What this instance dropped because it did not verify, since it started.
    pub fn rejected(&self) -> Rejected {
        Rejected {
            messages: self.shared.rejections.messages.load(Ordering::Relaxed),
            stored: self.shared.rejections.stored.load(Ordering::Relaxed),
        }
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

    fn connected(&self) -> bool {
        self.shared.subscribed.load(Ordering::Acquire)
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

    fn leave(&self) -> crate::future::BoxFuture<'_, ()> {
        Box::pin(leases::give_up(&self.shared))
    }

    fn session_store(&self, idle: Duration) -> Option<Arc<dyn SessionStore>> {
        Some(Arc::new(store::RedisSessions::new(
            Arc::clone(&self.shared),
            idle,
        )))
    }
}
