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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use redis::aio::MultiplexedConnection;
use redis::io::tcp::{TcpSettings, socket2::TcpKeepalive};
use redis::{AsyncCommands as _, AsyncConnectionConfig, IntoConnectionInfo as _};
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::{BusEvent, BusSink, ChangeBus, Lease, SessionChanged, SessionStore};

mod store;

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

type LeaseState = Arc<Mutex<Option<Instant>>>;
type WeakLease = Weak<Mutex<Option<Instant>>>;

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

/// What the publishing task sends.
#[derive(Debug)]
enum Out {
    Event(BusEvent),
    /// A shared session changed.
    Session(String),
    /// This instance's heartbeat: it expects to hear it back.
    Beat,
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

/// An event on the wire.
#[derive(Serialize, Deserialize)]
struct Wire {
    from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    list: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resync: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    beat: bool,
}

/// The largest message read from the channel (and sent: a larger event is sent as a
/// resync).
const MAX_MESSAGE: usize = 64 * 1024;
/// The longest URI prefix a resync replacing an oversized event carries.
const MAX_PREFIX: usize = 1024;
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long after the subscription came back from a failure a session missing from Redis
/// may still be put back by an instance that has a copy (Redis may have restarted empty).
const RECOVERY: Duration = Duration::from_secs(10);

fn wire(from: &str, out: &Out) -> String {
    let mut w = Wire {
        from: from.to_owned(),
        updated: None,
        list: false,
        signal: None,
        resync: None,
        session: None,
        beat: false,
    };
    match out {
        Out::Event(BusEvent::Updated(uri)) => w.updated = Some(uri.clone()),
        Out::Event(BusEvent::ListChanged) => w.list = true,
        Out::Event(BusEvent::Signal(topic)) => w.signal = Some(topic.clone()),
        Out::Event(BusEvent::Resync(prefix)) => w.resync = Some(prefix.clone()),
        Out::Session(id) => w.session = Some(id.clone()),
        Out::Beat => w.beat = true,
    }
    serde_json::to_string(&w).unwrap_or_default()
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The message for `out`; one the receivers would refuse as too large becomes the
/// resync of what it could have changed (a prefix of its URI; everything for a signal).
fn encode(from: &str, out: &Out) -> String {
    let text = wire(from, out);
    if text.len() <= MAX_MESSAGE {
        return text;
    }
    let prefix = match out {
        Out::Event(BusEvent::Updated(uri) | BusEvent::Resync(uri)) => cut(uri, MAX_PREFIX),
        _ => "",
    };
    wire(from, &Out::Event(BusEvent::Resync(prefix.to_owned())))
}

/// The message in `payload` and who sent it; `None` for anything else.
fn decode(payload: &[u8]) -> Option<(String, Out)> {
    if payload.len() > MAX_MESSAGE {
        return None;
    }
    let w: Wire = serde_json::from_slice(payload).ok()?;
    let out = match (w.updated, w.list, w.signal, w.resync, w.session, w.beat) {
        (Some(uri), false, None, None, None, false) => Out::Event(BusEvent::Updated(uri)),
        (None, true, None, None, None, false) => Out::Event(BusEvent::ListChanged),
        (None, false, Some(topic), None, None, false) => Out::Event(BusEvent::Signal(topic)),
        (None, false, None, Some(prefix), None, false) => Out::Event(BusEvent::Resync(prefix)),
        (None, false, None, None, Some(id), false) => Out::Session(id),
        (None, false, None, None, None, true) => Out::Beat,
        _ => return None,
    };
    Some((w.from, out))
}

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
        Box::pin(async move {
            let s = &self.shared;
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
            if keys.is_empty() {
                return;
            }
            let release = redis::Script::new(RELEASE);
            let gone = async {
                let mut c = connect(&s.client, s.options.timeout).await?;
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
        })
    }

    fn session_store(&self, idle: Duration) -> Option<Arc<dyn SessionStore>> {
        Some(Arc::new(store::RedisSessions::new(
            Arc::clone(&self.shared),
            idle,
        )))
    }
}

impl BusState {
    /// Queues `out` for the other instances; never blocks.
    fn send(&self, out: Out) {
        if self.queue.try_send(out).is_err() {
            self.overflowed.store(true, Ordering::Release);
        }
    }
}

/// Drains the queue into the channel; after anything was dropped, sends one resync once
/// Redis answers.
async fn publish(
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
            let sent: redis::RedisResult<i64> =
                c.publish(&shared.channel, encode(&shared.id, event)).await;
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

/// How often this instance publishes its heartbeat (with the lease renewals).
fn beat_every(options: &RedisBusOptions) -> Duration {
    (options.lease_ttl / 3).max(Duration::from_millis(10))
}

/// How long the subscription may go without this instance hearing its own heartbeat
/// before it is restarted: three beats and two round trips.
fn echo_bound(options: &RedisBusOptions) -> Duration {
    beat_every(options) * 3 + options.timeout * 2
}

/// Receives the other instances' events, re-subscribing whenever the subscription ends
/// or goes silent; ends when the bus is dropped (`closed`).
async fn subscribe(shared: Weak<BusState>, closed: CancellationToken) {
    let mut wait = MIN_BACKOFF;
    // Nothing can have been missed before the first subscription, if it succeeds at once.
    let mut missed = false;
    let mut warned = false;
    loop {
        let Some(s) = shared.upgrade() else { return };
        let attempt = async {
            let mut pubsub = s.client.get_async_pubsub().await?;
            pubsub.subscribe(&s.channel).await?;
            redis::RedisResult::Ok(pubsub)
        };
        let attempt = tokio::select! {
            () = closed.cancelled() => return,
            r = tokio::time::timeout(s.options.timeout, attempt) => r,
        };
        let pubsub = match attempt {
            Ok(Ok(p)) => p,
            failed => {
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
        let Some(sink) = s.sink.get().cloned() else {
            return;
        };
        if missed {
            tracing::info!("subscribed to Redis again: listeners are told to look again");
            s.recovered_ms.store(s.now_ms().max(1), Ordering::Release);
            sink.lost();
        }
        s.subscribed.store(true, Ordering::Release);
        // BusState sessions changed before the subscription was up (even the first: a
        // session may have been created here meanwhile) are reloaded.
        s.sessions_changed(None);
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
                    match decode(msg.get_payload_bytes()) {
                        Some((from, Out::Beat)) => if from == id {
                            match shared.upgrade() {
                                Some(s) => s.echo_ms.store(s.now_ms(), Ordering::Release),
                                None => return,
                            }
                        },
                        Some((from, _)) if from == id => {}
                        Some((_, Out::Event(event))) => {
                            // Another instance lost events, perhaps session announcements
                            // among them: its sessions are reloaded too.
                            let everything = matches!(&event, BusEvent::Resync(p) if p.is_empty());
                            if !sink.deliver(event) {
                                // The server is gone.
                                return;
                            }
                            if everything {
                                match shared.upgrade() {
                                    Some(s) => s.sessions_changed(None),
                                    None => return,
                                }
                            }
                        }
                        Some((_, Out::Session(session))) => match shared.upgrade() {
                            Some(s) => s.sessions_changed(Some(&session)),
                            None => return,
                        },
                        None => tracing::debug!("skipped a message on the change channel that is not an event"),
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
        tracing::warn!("lost the Redis subscription; reconnecting");
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
async fn keep_leases(shared: Weak<BusState>, conn: MultiplexedConnection) {
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
                        }
                    }
                    Ok(false) => {
                        *state.lock().unwrap_or_else(PoisonError::into_inner) = None;
                    }
                    Err(e) => {
                        tracing::debug!(lease = %key, error = %e, "cannot reach Redis for a lease");
                        failed = true;
                        break;
                    }
                }
            }
            if full && !failed {
                let beat: redis::RedisResult<i64> =
                    c.publish(&s.channel, encode(&s.id, &Out::Beat)).await;
                failed = beat.is_err();
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

#[cfg(test)]
mod tests {
    use super::{BusEvent, MAX_MESSAGE, Out, decode, encode};

    #[test]
    fn events_round_trip_and_anything_else_is_skipped() {
        for event in [
            BusEvent::Updated("file:///a%20b".into()),
            BusEvent::ListChanged,
            BusEvent::Signal("db://shop".into()),
            BusEvent::Resync(String::new()),
        ] {
            let wire = encode("i1", &Out::Event(event.clone()));
            match decode(wire.as_bytes()) {
                Some((from, Out::Event(got))) => assert_eq!((from.as_str(), got), ("i1", event)),
                other => panic!("{other:?}"),
            }
        }
        let wire = encode("i2", &Out::Session("abc".into()));
        assert!(
            matches!(decode(wire.as_bytes()), Some((f, Out::Session(id))) if f == "i2" && id == "abc")
        );
        let wire = encode("i3", &Out::Beat);
        assert!(matches!(decode(wire.as_bytes()), Some((f, Out::Beat)) if f == "i3"));
        for junk in [
            &b""[..],
            b"null",
            b"{\"from\":\"x\"}",
            b"{\"from\":\"x\",\"list\":true,\"updated\":\"u\"}",
            b"{\"from\":\"x\",\"beat\":true,\"updated\":\"u\"}",
            b"{\"updated\":\"u\"}",
            &[b'"'; 70_000],
        ] {
            assert!(decode(junk).is_none());
        }
    }

    #[test]
    fn an_event_too_large_for_the_receivers_is_sent_as_a_resync_of_its_prefix() {
        // Multi-byte characters, so that the cut has to find a boundary.
        let uri = format!("file:///big/{}", "é".repeat(MAX_MESSAGE));
        let wire = encode("i1", &Out::Event(BusEvent::Updated(uri.clone())));
        assert!(wire.len() <= MAX_MESSAGE);
        match decode(wire.as_bytes()) {
            Some((_, Out::Event(BusEvent::Resync(prefix)))) => {
                assert!(prefix.starts_with("file:///big/") && uri.starts_with(&prefix));
            }
            other => panic!("{other:?}"),
        }
        let wire = encode("i1", &Out::Event(BusEvent::Signal("s".repeat(MAX_MESSAGE))));
        assert!(matches!(
            decode(wire.as_bytes()),
            Some((_, Out::Event(BusEvent::Resync(p)))) if p.is_empty()
        ));
    }
}
