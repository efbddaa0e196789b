//! The 2025 revisions over HTTP: sessions named by `Mcp-Session-Id`, the standalone GET
//! stream, and resumption with `Last-Event-ID`.
//!
//! Invariants:
//! - A session exists only after a successful `initialize`; its id carries 192 random
//!   bits in visible ASCII.
//! - At most `max_sessions` sessions exist. At the cap, expired sessions go first, then
//!   the least recently used one with nothing in flight and no stream attached; if every
//!   session is busy, `initialize` gets 503.
//! - An ended session (DELETE, expiry, eviction, shutdown) cancels its requests, ends its
//!   streams, and answers 404 from then on.
//! - A session keeps at most [`RETAINED_STREAMS`] finished POST streams for replay, and
//!   has at most `max_in_flight` requests running (429 beyond).
//! - A request answered as JSON is cancelled when its connection drops (there is no stream
//!   to resume it on); once its answer became a stream, it runs on, for resumption.
//!
//! With a [`SessionStore`] (a bus that holds sessions) every instance serves every
//! session: the instance that first sees an unknown id loads it from the store; a request
//! that changed the session records its change (only it) before it is answered; the
//! replay logs are mirrored to the store; the instance serving the GET stream *holds* the
//! session (only its copy of stream 0 takes notifications, and the store refuses stream-0
//! entries from any other) and, taking it over from another instance, replays the stored
//! log and then re-announces every subscription, since notifications may have been lost
//! with the previous holder (or the stored log has a hole). DELETE and expiry act on the
//! store, and other instances drop their copies when told or when they next check. A copy
//! applies only records at least as recent as the one it has, keeping its own changes
//! not yet recorded; a session the store lost (not deleted: no tombstone) is re-created
//! from a copy. Each instance's copy is bounded and expires as above; the store's record
//! expires after `idle` unused.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use axum::response::Response;
use base64::Engine as _;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderValue, StatusCode};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{self, ErrorCode};
use rsrc_protocol::methods::{Initialize, Method as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::auth::Owner;
use super::sse::{self, LogLimits, Mirror, StreamLog};
use super::{
    Endpoint, HeaderVersion, LAST_EVENT_ID, SESSION_ID, Settled, checks, era_of, error_response,
    rejection, reply_response, settle, sse_response, status_only,
};
use crate::bus::{Lookup, RETAINED_STREAMS, Revision, SessionState, SessionStore, StoredSession};
use crate::context::Notifier;
use crate::server::{Incoming, Outcome, Prepared, Server, Session};
use rsrc_protocol::Implementation;
use rsrc_protocol::lifecycle::ClientCapabilities;

/// How often a shared session's stored copy is polled for new events of a POST stream
/// that another instance writes.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);
/// Session reloads waiting; beyond, every copy is reloaded.
const RELOAD_QUEUE: usize = 1024;
/// Local stream numbers used when the store cannot number a stream (never shared).
const LOCAL_STREAMS: u64 = 1 << 48;

type Map = RwLock<HashMap<Arc<str>, Arc<HttpSession>>>;

/// The legacy sessions of one endpoint.
pub(super) struct Sessions {
    map: Arc<Map>,
    epoch: Instant,
    max: usize,
    idle: Duration,
    /// Endpoint with the other instances, if the server's bus holds sessions.
    store: Option<Arc<dyn SessionStore>>,
    /// Sessions to reload, one at a time ([`reload`]); started with the first.
    reloads: OnceLock<mpsc::Sender<Option<String>>>,
    /// The queue overflowed: reload every copy.
    reload_all: AtomicBool,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("max", &self.max)
            .field("shared", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

/// One legacy session.
pub(super) struct HttpSession {
    id: Arc<str>,
    engine: Arc<Session>,
    /// Stream 0: notifications not tied to a request.
    standalone: Arc<StreamLog>,
    /// POST streams, oldest first.
    streams: Mutex<VecDeque<Arc<StreamLog>>>,
    next_stream: AtomicU64,
    last_used_ms: AtomicU64,
    /// Cancelled when the session ends.
    ended: CancellationToken,
    limits: LogLimits,
    /// The identity that created the session (with authentication on): no other may use,
    /// resume or end it.
    owner: Option<Owner>,
    /// Where new POST streams are mirrored (with a store).
    mirror: Option<Mirror>,
    /// What this copy knows of the store's record. Its lock also orders the decisions to
    /// mute or unmute stream 0.
    sync: Mutex<Synced>,
    /// When the store's copy was last touched, in [`Sessions`] milliseconds.
    touched_ms: AtomicU64,
}

/// What a copy knows of the stored record.
#[derive(Debug, Default)]
struct Synced {
    /// The state last recorded in (or loaded from) the store.
    saved: SessionState,
    /// Its revision: an older record is not applied.
    rev: u64,
    /// The number of this instance's last claim of the GET stream (0: none).
    claimed: u64,
    /// The highest claim number seen in a record naming another holder.
    others: u64,
    /// The highest claim number seen.
    claims: u64,
}

impl std::fmt::Debug for HttpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSession")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A new session id: 192 random bits, base64url.
fn fresh_id() -> String {
    let mut raw = [0u8; 24];
    // Without an entropy source no session can be made safe: refusing is the only
    // honest answer, and getrandom on Linux does not fail once the pool is ready.
    getrandom::fill(&mut raw).expect("the operating system's random source failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// Whether `id` could be one of ours (so that junk never reaches the store).
fn plausible_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn owner_hex(owner: Option<Owner>) -> String {
    owner.map(|o| o.hex()).unwrap_or_default()
}

impl HttpSession {
    fn new(
        id: String,
        stop: &CancellationToken,
        limits: LogLimits,
        owner: Option<Owner>,
        store: Option<&Arc<dyn SessionStore>>,
    ) -> Self {
        let id: Arc<str> = id.into();
        let mirror = store.map(|store| Mirror {
            store: Arc::clone(store),
            session: Arc::clone(&id),
        });
        let standalone = StreamLog::new(0, limits.clone(), mirror.clone());
        // With a store, only the holder's copy of stream 0 takes notifications.
        standalone.mute(mirror.is_some());
        let engine =
            Arc::new(Session::http(Notifier::sink(standalone.clone())).closing_with(stop.clone()));
        HttpSession {
            id,
            engine,
            standalone,
            streams: Mutex::new(VecDeque::new()),
            next_stream: AtomicU64::new(1),
            last_used_ms: AtomicU64::new(0),
            ended: CancellationToken::new(),
            limits,
            owner,
            mirror,
            sync: Mutex::new(Synced::default()),
            touched_ms: AtomicU64::new(0),
        }
    }

    /// The record of this session for the store, once initialized.
    fn record(&self) -> Option<StoredSession> {
        let n = self.engine.negotiated()?;
        let client = serde_json::json!({
            "clientInfo": n.client_info.as_deref(),
            "capabilities": &*n.capabilities,
        });
        Some(StoredSession::new(
            owner_hex(self.owner),
            n.version.as_str().to_owned(),
            client.to_string(),
        ))
    }

    /// A copy of a session another instance created; `None` if the record is not one
    /// this server can read.
    fn restore(
        sh: &Endpoint,
        id: &str,
        record: &StoredSession,
        owner: Option<Owner>,
    ) -> Option<Self> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Client {
            client_info: Option<Implementation>,
            #[serde(default)]
            capabilities: ClientCapabilities,
        }
        let version = record.version.parse::<ProtocolVersion>().ok()?;
        let client: Client = serde_json::from_str(&record.client).ok()?;
        let session = HttpSession::new(
            id.to_owned(),
            &sh.stop,
            log_limits(sh),
            owner,
            sh.sessions.store.as_ref(),
        );
        session
            .engine
            .negotiate(crate::server::Negotiated {
                version,
                client_info: client.client_info.map(Arc::new),
                capabilities: Arc::new(client.capabilities),
            })
            .then_some(())?;
        sh.server
            .apply_session_state(&session.engine, &record.state);
        {
            let mut sync = lock(&session.sync);
            sync.saved = record.state.clone();
            sync.rev = record.rev;
            sync.claims = record.claims;
            if record
                .holder
                .as_deref()
                .is_some_and(|h| Some(h) != sh.sessions.store().map(|st| st.instance()))
            {
                sync.others = record.claims;
            }
        }
        Some(session)
    }

    /// This copy as a record, for re-creating a session the store lost: its state now,
    /// and this instance as the holder if its stream 0 is not muted.
    fn full_record(&self, store: &dyn SessionStore) -> Option<StoredSession> {
        let mut record = self.record()?;
        record.state = Server::session_state(&self.engine);
        let sync = lock(&self.sync);
        record.rev = sync.rev;
        record.claims = sync.claims.max(sync.claimed);
        drop(sync);
        record.holder = (!self.standalone.is_muted()).then(|| store.instance().to_owned());
        record.streams = lock(&self.streams)
            .iter()
            .map(|s| s.stream())
            .filter(|n| *n < LOCAL_STREAMS)
            .max()
            .unwrap_or(0);
        Some(record)
    }

    /// 2025-11-25 clients expect each stream to open with a primed event id.
    fn primes(&self) -> bool {
        self.engine
            .negotiated_version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }

    fn busy(&self) -> bool {
        self.engine.in_flight() > 0 || self.standalone.is_attached()
    }

    /// A new POST stream, registered for replay: numbered by the store if there is one
    /// (numbers are then unique across instances), else here.
    async fn open_stream(&self) -> Arc<StreamLog> {
        let shared = match &self.mirror {
            Some(m) => match m.store.open_stream(&self.id).await {
                Ok(n) => Some(n),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot number a stream in the session store: it can be resumed on this instance only");
                    None
                }
            },
            None => None,
        };
        let log = match shared {
            Some(n) => StreamLog::new(n, self.limits.clone(), self.mirror.clone()),
            None => {
                let n = self.next_stream.fetch_add(1, Ordering::Relaxed);
                let n = if self.mirror.is_some() {
                    LOCAL_STREAMS + n
                } else {
                    n
                };
                StreamLog::new(n, self.limits.clone(), None)
            }
        };
        self.keep_stream(Arc::clone(&log));
        log
    }

    /// Registers a stream for replay, forgetting the oldest finished ones beyond
    /// [`RETAINED_STREAMS`].
    fn keep_stream(&self, log: Arc<StreamLog>) {
        let mut streams = lock(&self.streams);
        streams.push_back(log);
        // Forget the oldest finished streams beyond the retention bound.
        let mut finished = streams.iter().filter(|s| s.is_closed()).count();
        while finished > RETAINED_STREAMS {
            match streams.iter().position(|s| s.is_closed()) {
                Some(i) => {
                    streams.remove(i);
                    finished -= 1;
                }
                None => break,
            }
        }
    }

    /// Forgets a stream (its stored log turned out broken: a resumption asks again).
    fn forget_stream(&self, log: &Arc<StreamLog>) {
        lock(&self.streams).retain(|s| !Arc::ptr_eq(s, log));
    }

    fn stream(&self, n: u64) -> Option<Arc<StreamLog>> {
        if n == 0 {
            return Some(Arc::clone(&self.standalone));
        }
        lock(&self.streams)
            .iter()
            .find(|s| s.stream() == n)
            .cloned()
    }

    fn end(&self) {
        self.ended.cancel();
        self.engine.cancel_all();
        self.standalone.close();
        for s in lock(&self.streams).iter() {
            s.close();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn log_limits(sh: &Endpoint) -> LogLimits {
    LogLimits {
        max_events: sh.config.replay_events.max(1),
        max_bytes: sh.config.replay_bytes,
        budget: Arc::clone(&sh.replay_budget),
    }
}

impl Sessions {
    pub(super) fn new(max: usize, idle: Duration, store: Option<Arc<dyn SessionStore>>) -> Self {
        Sessions {
            map: Arc::new(RwLock::new(HashMap::new())),
            epoch: Instant::now(),
            max: max.max(1),
            idle,
            store,
            reloads: OnceLock::new(),
            reload_all: AtomicBool::new(false),
        }
    }

    pub(super) fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.store.as_ref()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(super) fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The copy of session `id`, unless it has expired (it is ended then, even if the
    /// periodic expiry has not come by yet: with a store, such a copy must not put back
    /// a session that expired there).
    fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let s = map.get(id)?;
        if !self.fresh(s) {
            let stale = Arc::clone(s);
            drop(map);
            let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
            if map.get(id).is_some_and(|now| Arc::ptr_eq(now, &stale)) {
                tracing::debug!(session = %id, "session expired");
                map.remove(id);
                stale.end();
            }
            return None;
        }
        // Touched under the lock: expiry and eviction, which take it for writing, cannot
        // end a session between its lookup and its use being recorded.
        s.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(Arc::clone(s))
    }

    /// The copies to reload: `id`'s, or all of them.
    fn copies(&self, id: Option<&str>) -> Vec<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        match id {
            Some(id) => map.get(id).cloned().into_iter().collect(),
            None => map.values().cloned().collect(),
        }
    }

    /// Whether the store's copy of `s` should be touched (and checked) now: a few times
    /// per idle period, so that it outlives every use.
    fn touch_due(&self, s: &HttpSession) -> bool {
        let now = self.now_ms();
        let every = u64::try_from((self.idle / 8).as_millis()).unwrap_or(u64::MAX);
        let last = s.touched_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < every {
            return false;
        }
        s.touched_ms.store(now, Ordering::Relaxed);
        true
    }

    /// Registers a session, making room at the cap; the session registered under its
    /// id (an earlier copy wins), or `None` if every session is busy.
    fn insert(&self, session: Arc<HttpSession>) -> Option<Arc<HttpSession>> {
        let now = self.now_ms();
        session.last_used_ms.store(now, Ordering::Relaxed);
        session.touched_ms.store(now, Ordering::Relaxed);
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = map.get(&session.id) {
            return Some(Arc::clone(existing));
        }
        if map.len() >= self.max {
            self.expire_locked(&mut map, now);
        }
        if map.len() >= self.max {
            let victim = map
                .values()
                .filter(|s| !s.busy())
                .min_by_key(|s| s.last_used_ms.load(Ordering::Relaxed))
                .map(|s| Arc::clone(&s.id));
            match victim.and_then(|id| map.remove(&id)) {
                Some(old) => {
                    tracing::info!("session cap reached: ended the least recently used session");
                    old.end();
                }
                None => return None,
            }
        }
        map.insert(Arc::clone(&session.id), Arc::clone(&session));
        Some(session)
    }

    /// Ends this instance's copy of a session.
    fn remove(&self, id: &str) {
        end_copy(&self.map, id);
    }

    /// Whether a copy is still in use here (it would not expire now).
    fn fresh(&self, s: &HttpSession) -> bool {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        s.busy()
            || self
                .now_ms()
                .saturating_sub(s.last_used_ms.load(Ordering::Relaxed))
                < idle
    }

    /// Ends idle sessions; with a store, also keeps the stored copies of busy ones alive
    /// (a GET stream can stay open longer than the idle period), ending those deleted
    /// elsewhere and re-creating those the store lost.
    pub(super) fn expire(&self) {
        let now = self.now_ms();
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        self.expire_locked(&mut map, now);
        let Some(store) = &self.store else { return };
        let busy: Vec<String> = map
            .values()
            .filter(|s| s.busy())
            .map(|s| s.id.to_string())
            .collect();
        drop(map);
        if let (false, Ok(rt)) = (busy.is_empty(), tokio::runtime::Handle::try_current()) {
            let store = Arc::clone(store);
            let map = Arc::downgrade(&self.map);
            let reloads = self.reloads.get().cloned();
            rt.spawn(async move {
                let found = match store.touch(&busy).await {
                    Ok(found) => found,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot keep busy sessions alive in the store");
                        return;
                    }
                };
                for (id, found) in busy.iter().zip(found) {
                    match found {
                        Lookup::Found(()) => {}
                        Lookup::Deleted => {
                            tracing::debug!(session = %id, "session ended on another instance");
                            if let Some(map) = map.upgrade() {
                                end_copy(&map, id);
                            }
                        }
                        // The reloader re-creates it from this copy.
                        Lookup::Missing => {
                            if let Some(q) = &reloads {
                                let _ = q.try_send(Some(id.clone()));
                            }
                        }
                    }
                }
            });
        }
    }

    fn expire_locked(&self, map: &mut HashMap<Arc<str>, Arc<HttpSession>>, now: u64) {
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        map.retain(|_, s| {
            let fresh = now.saturating_sub(s.last_used_ms.load(Ordering::Relaxed)) < idle;
            let keep = fresh || s.busy();
            if !keep {
                tracing::debug!(session = %s.id, "session expired");
                s.end();
            }
            keep
        });
    }

    pub(super) fn end_all(&self) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        for (_, s) in map.drain() {
            s.end();
        }
    }
}

/// Ends the copy of session `id` in `map`, if there is one.
fn end_copy(map: &Map, id: &str) {
    let removed = map
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id);
    if let Some(s) = removed {
        s.end();
    }
}

fn unknown_session() -> Response {
    rejection(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "unknown or ended session: send initialize again",
    )
}

fn store_unavailable(what: &str) -> Response {
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        format!("{what}: the session store is unavailable; retry later"),
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

/// The session the request names, if it exists and belongs to `owner`; another
/// identity's session answers exactly like an unknown one. With a store, a session this
/// instance has not seen yet is loaded from it, and a known one is checked against it
/// now and then (DELETE and expiry elsewhere end it here too).
async fn session_of(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    owner: Option<Owner>,
) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = headers.get(SESSION_ID) else {
        return Err(rejection(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "missing Mcp-Session-Id header: send initialize first",
        ));
    };
    let Ok(id) = id.to_str() else {
        return Err(unknown_session());
    };
    if let Some(s) = sh.sessions.get(id) {
        if s.owner != owner {
            return Err(unknown_session());
        }
        if let Some(store) = sh.sessions.store()
            && sh.sessions.touch_due(&s)
        {
            match store
                .touch(&[id.to_owned()])
                .await
                .map(|f| f.into_iter().next())
            {
                Ok(Some(Lookup::Deleted)) => {
                    sh.sessions.remove(id);
                    return Err(unknown_session());
                }
                // The store lost it: this copy puts it back.
                Ok(Some(Lookup::Missing)) => {
                    if restore(sh, &s).await == Lookup::Deleted {
                        return Err(unknown_session());
                    }
                }
                Ok(_) => {}
                // Redis away: this instance's copy serves on.
                Err(e) => tracing::debug!(error = %e, "cannot check a session in the store"),
            }
        }
        return Ok(s);
    }
    let Some(store) = sh.sessions.store() else {
        return Err(unknown_session());
    };
    if !plausible_id(id) {
        return Err(unknown_session());
    }
    let record = match store.load(id, true).await {
        Ok(Lookup::Found(r)) if r.owner == owner_hex(owner) => r,
        // Redis may have restarted empty: an instance with a copy is putting it back.
        Ok(Lookup::Missing) if store.recovering() => {
            return Err(store_unavailable("cannot load the session"));
        }
        Ok(_) => return Err(unknown_session()),
        Err(e) => {
            tracing::warn!(error = %e, "cannot load a session from the store");
            return Err(store_unavailable("cannot load the session"));
        }
    };
    let Some(session) = HttpSession::restore(sh, id, &record, owner) else {
        tracing::warn!("a stored session could not be read: treated as unknown");
        return Err(unknown_session());
    };
    let Some(session) = sh.sessions.insert(Arc::new(session)) else {
        return Err(too_many_sessions());
    };
    // A change announced between the load and the insertion found no copy here to
    // reload: reload once more (after any reload already queued).
    reload(sh, Some(id));
    Ok(session)
}

/// `stored` with this copy's changes not recorded yet (from `saved` to `now`) on top.
fn merged(stored: &SessionState, saved: &SessionState, now: &SessionState) -> SessionState {
    let mut subscriptions: std::collections::BTreeSet<&String> =
        stored.subscriptions.iter().collect();
    for uri in &now.subscriptions {
        if saved.subscriptions.binary_search(uri).is_err() {
            subscriptions.insert(uri);
        }
    }
    for uri in &saved.subscriptions {
        if now.subscriptions.binary_search(uri).is_err() {
            subscriptions.remove(uri);
        }
    }
    SessionState {
        initialized: stored.initialized || (now.initialized && !saved.initialized),
        log_level: if now.log_level == saved.log_level {
            stored.log_level.clone()
        } else {
            now.log_level.clone()
        },
        subscriptions: subscriptions.into_iter().cloned().collect(),
    }
}

/// Brings this copy to a stored state of revision `rev`, unless it has a more recent one;
/// changes made here and not recorded yet stay. Called with the copy's lock held.
fn apply_state(
    sh: &Endpoint,
    s: &HttpSession,
    sync: &mut Synced,
    state: SessionState,
    rev: u64,
) -> bool {
    if rev < sync.rev {
        return false;
    }
    let now = Server::session_state(&s.engine);
    let target = merged(&state, &sync.saved, &now);
    if target != now {
        sh.server.apply_session_state(&s.engine, &target);
    }
    sync.saved = state;
    sync.rev = rev;
    true
}

/// Brings this instance's copy of a session to the stored record (unless the copy knows
/// a more recent one), muting its stream 0 if another instance claimed it since this one
/// did.
fn apply_record(sh: &Endpoint, s: &HttpSession, record: StoredSession) {
    let me = sh.sessions.store().map(|st| st.instance().to_owned());
    let mut sync = lock(&s.sync);
    if !apply_state(sh, s, &mut sync, record.state, record.rev) {
        return;
    }
    sync.claims = sync.claims.max(record.claims);
    let other = record.holder.is_some() && record.holder != me;
    if other {
        sync.others = sync.others.max(record.claims);
    }
    // A record loaded before this instance's own claim says nothing about it.
    if other && record.claims > sync.claimed && !s.standalone.is_muted() {
        // The client reads its GET stream from another instance now.
        s.standalone.mute(true);
        s.standalone.detach();
    }
}

/// Re-creates a session the store lost from this copy (or takes the copy another
/// instance put back, if at least as recent). `Deleted` if it was deleted meanwhile: the
/// copy has ended then.
async fn restore(sh: &Endpoint, s: &HttpSession) -> Lookup<()> {
    let Some(store) = sh.sessions.store() else {
        return Lookup::Found(());
    };
    let Some(record) = s.full_record(store.as_ref()) else {
        return Lookup::Found(());
    };
    let outcome = match store.restore(&s.id, &record).await {
        Ok(Lookup::Found(())) => store.load(&s.id, false).await,
        Ok(Lookup::Deleted) => Ok(Lookup::Deleted),
        Ok(Lookup::Missing) => Ok(Lookup::Missing),
        Err(e) => Err(e),
    };
    match outcome {
        Ok(Lookup::Found(stored)) => {
            apply_record(sh, s, stored);
            Lookup::Found(())
        }
        Ok(Lookup::Deleted) => {
            tracing::debug!(session = %s.id, "session ended on another instance");
            sh.sessions.remove(&s.id);
            Lookup::Deleted
        }
        // Lost again at once: this copy serves on, and is put back at the next check.
        Ok(Lookup::Missing) => Lookup::Missing,
        Err(e) => {
            tracing::debug!(error = %e, "cannot re-create a session in the store");
            Lookup::Found(())
        }
    }
}

fn too_many_sessions() -> Response {
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "too many sessions are active; retry later",
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}

/// Records what the last request changed in the session (initialized, log level,
/// subscriptions) in the store, before the request is answered, so that the client's
/// next request sees it wherever it lands.
async fn persist(sh: &Endpoint, session: &HttpSession) {
    let Some(store) = sh.sessions.store() else {
        return;
    };
    let (before, now) = {
        let sync = lock(&session.sync);
        (sync.saved.clone(), Server::session_state(&session.engine))
    };
    if now == before {
        return;
    }
    match store.save(&session.id, &before, &now).await {
        Ok(Lookup::Found(Revision { state, rev, .. })) => {
            let mut sync = lock(&session.sync);
            apply_state(sh, session, &mut sync, state, rev);
        }
        Ok(Lookup::Deleted) => {
            tracing::debug!(session = %session.id, "session ended on another instance");
            sh.sessions.remove(&session.id);
        }
        // The store lost it: this copy, with the change, puts it back.
        Ok(Lookup::Missing) => {
            restore(sh, session).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a session change in the store: other instances do not see it yet");
        }
    }
}

/// Another instance changed session `id` (all sessions for `None`): reload the copies
/// this instance has. Reloads run one at a time, in the order asked; a copy never
/// applies a record older than the one it has.
pub(super) fn reload(sh: &Arc<Endpoint>, id: Option<&str>) {
    if sh.sessions.store.is_none() || id.is_some_and(|id| sh.sessions.copies(Some(id)).is_empty()) {
        return;
    }
    let queue = sh.sessions.reloads.get_or_init(|| {
        let (tx, rx) = mpsc::channel(RELOAD_QUEUE);
        tokio::spawn(reloader(Arc::downgrade(sh), rx));
        tx
    });
    if queue.try_send(id.map(str::to_owned)).is_err() {
        sh.sessions.reload_all.store(true, Ordering::Release);
    }
}

async fn reloader(sh: Weak<Endpoint>, mut queue: mpsc::Receiver<Option<String>>) {
    while let Some(id) = queue.recv().await {
        let Some(sh) = sh.upgrade() else { return };
        let Some(store) = sh.sessions.store().cloned() else {
            return;
        };
        let all = sh.sessions.reload_all.swap(false, Ordering::AcqRel);
        for s in sh.sessions.copies(if all { None } else { id.as_deref() }) {
            match store.load(&s.id, false).await {
                Ok(Lookup::Found(record)) => apply_record(&sh, &s, record),
                Ok(Lookup::Deleted) => {
                    tracing::debug!(session = %s.id, "session ended on another instance");
                    sh.sessions.remove(&s.id);
                }
                // Lost by the store (not deleted): a copy still in use puts it back.
                Ok(Lookup::Missing) => {
                    if sh.sessions.fresh(&s) {
                        restore(&sh, &s).await;
                    } else {
                        sh.sessions.remove(&s.id);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "cannot reload a session"),
            }
        }
    }
}

/// A POST of the 2025 revisions.
pub(super) async fn post(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    owner: Option<Owner>,
    body: &[u8],
) -> Response {
    let incoming = match sh.server.prepare(body) {
        Incoming::Malformed(reply) => return reply_response(StatusCode::BAD_REQUEST, reply),
        Incoming::Request(request) if request.method() == Initialize::NAME => {
            return initialize(sh, request, owner).await;
        }
        incoming => incoming,
    };
    let session = match session_of(sh, headers, owner).await {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    let request = match incoming {
        Incoming::Request(request) => request,
        Incoming::Notification(notice) => {
            sh.server.notify(&session.engine, &notice);
            persist(sh, &session).await;
            return status_only(StatusCode::ACCEPTED);
        }
        Incoming::Response | Incoming::Malformed(_) => return status_only(StatusCode::ACCEPTED),
    };
    if session.engine.in_flight() >= sh.config.max_in_flight {
        let mut res = error_response(
            StatusCode::TOO_MANY_REQUESTS,
            Some(request.id()),
            &jsonrpc::ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "this session already has {} requests in flight",
                    sh.config.max_in_flight
                ),
            ),
        );
        res.headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
        return res;
    }
    let (notifier, notes) = Notifier::channel(sh.config.notification_queue);
    let outcome = sh.server.run(&session.engine, request, &notifier);
    drop(notifier);
    let fut = match outcome {
        // Refused before running (a 2026-07-28 request here, say): nothing changed.
        Outcome::Refused(refusal) => {
            let status =
                StatusCode::from_u16(refusal.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            return reply_response(status, refusal.into_reply());
        }
        Outcome::Answered(reply) => {
            persist(sh, &session).await;
            return reply_response(StatusCode::OK, reply);
        }
        Outcome::Running(fut) => fut,
    };
    match settle(fut, notes).await {
        Settled::Json(Some(reply)) => {
            persist(sh, &session).await;
            reply_response(StatusCode::OK, reply)
        }
        // Cancelled by the client: the stream ends without a response.
        Settled::Json(None) => sse_response(futures_util::stream::empty()),
        Settled::Stream(events) => {
            let log = session.open_stream().await;
            let Some(reader) = log.attach() else {
                return status_only(StatusCode::INTERNAL_SERVER_ERROR);
            };
            // The request runs to its end even if this connection drops: its events wait
            // in the log for a `Last-Event-ID` resumption.
            let writer = Arc::clone(&log);
            let ended = session.ended.clone();
            let (sh2, session2) = (Arc::clone(sh), Arc::clone(&session));
            tokio::spawn(async move {
                let events = events.into_stream();
                tokio::pin!(events);
                loop {
                    tokio::select! {
                        biased;
                        () = ended.cancelled() => break,
                        m = events.next() => match m {
                            Some(m) => writer.push_message(&m),
                            None => break,
                        },
                    }
                }
                persist(&sh2, &session2).await;
                writer.close();
            });
            sse_response(sse::follow(
                reader,
                sse::Follow {
                    after: 0,
                    prime: session.primes(),
                    keep_alive: sh.config.keep_alive,
                    stop: session.ended.clone(),
                    shutdown: None,
                },
            ))
        }
    }
}

async fn initialize(sh: &Arc<Endpoint>, request: Prepared, owner: Option<Owner>) -> Response {
    let session = Arc::new(HttpSession::new(
        fresh_id(),
        &sh.stop,
        log_limits(sh),
        owner,
        sh.sessions.store(),
    ));
    let reply = match sh
        .server
        .run(&session.engine, request, &Notifier::discard())
    {
        Outcome::Answered(reply) => reply,
        // No session for a refused initialize.
        Outcome::Refused(refusal) => {
            let status = StatusCode::from_u16(refusal.http_status()).unwrap_or(StatusCode::OK);
            return reply_response(status, refusal.into_reply());
        }
        // `initialize` is always answered at once.
        Outcome::Running(_) => return status_only(StatusCode::INTERNAL_SERVER_ERROR),
    };
    let id = Arc::clone(&session.id);
    let record = session.record();
    let Some(session) = sh.sessions.insert(session) else {
        return too_many_sessions();
    };
    if let (Some(store), Some(record)) = (sh.sessions.store(), record) {
        lock(&session.sync).saved = record.state.clone();
        if let Err(e) = store.create(&id, &record).await {
            tracing::warn!(error = %e, "cannot record a new session in the store");
            sh.sessions.remove(&id);
            return store_unavailable("cannot start a session");
        }
    }
    let mut res = reply_response(StatusCode::OK, reply);
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(SESSION_ID, v);
    }
    res
}

/// Makes this instance the holder of the session's standalone stream. Taking it over
/// from another instance, it replays the stored events after `after` (a resumption),
/// continues their numbering, and re-announces every subscription (notifications may
/// have been lost with the previous holder, or the stored log has a hole). `false` if
/// the session no longer exists.
async fn hold(sh: &Endpoint, session: &HttpSession, after: Option<u64>) -> bool {
    let Some(m) = &session.mirror else {
        return true;
    };
    let mut claim = m.store.claim(&session.id).await;
    if let Ok(Lookup::Missing) = claim {
        // The store lost the session: this copy puts it back, then claims it.
        if restore(sh, session).await == Lookup::Deleted {
            return false;
        }
        claim = m.store.claim(&session.id).await;
    }
    let claim = match claim {
        Ok(Lookup::Found(claim)) => claim,
        Ok(Lookup::Deleted) => {
            sh.sessions.remove(&session.id);
            return false;
        }
        Ok(Lookup::Missing) => {
            tracing::warn!(
                "the session store keeps losing a session: its stream is served from this instance's copy"
            );
            let _sync = lock(&session.sync);
            session.standalone.mute(false);
            return true;
        }
        Err(e) => {
            // Redis away: serve the stream from this instance's copy.
            tracing::warn!(error = %e, "cannot claim a session's stream in the store");
            let _sync = lock(&session.sync);
            session.standalone.mute(false);
            return true;
        }
    };
    let here = claim.previous.as_deref() == Some(m.store.instance());
    {
        let mut sync = lock(&session.sync);
        sync.claimed = sync.claimed.max(claim.number);
        sync.claims = sync.claims.max(claim.number);
        if here && !session.standalone.is_muted() {
            return true;
        }
    }
    // Notifications may have been lost only if another instance held it.
    let moved = claim.previous.is_some() && !here;
    let (events, broken) = match after {
        Some(after) => match m
            .store
            .read(&session.id, 0, after, session.standalone.keep())
            .await
        {
            Ok(tail) if tail.broken => {
                tracing::info!("the stored stream lost events: they are re-announced instead");
                (Vec::new(), true)
            }
            Ok(tail) => (tail.events, false),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a stored stream: its missed events are re-announced instead");
                (Vec::new(), true)
            }
        },
        None => (Vec::new(), false),
    };
    let sync = lock(&session.sync);
    if sync.claimed != claim.number || sync.others > claim.number {
        // Claimed again meanwhile, here or elsewhere: that claim decides.
        return true;
    }
    // Numbered after what the store has, and after what the client saw.
    session
        .standalone
        .seed(events, claim.last.max(after.unwrap_or(0)));
    session.standalone.mute(false);
    drop(sync);
    if moved || broken {
        Server::resync_session(&session.engine);
    }
    true
}

/// A POST stream another instance writes (or wrote), followed from the store. `None` if
/// the store does not know it, or lost some of its events (it cannot be resumed).
async fn stored_stream(
    sh: &Arc<Endpoint>,
    session: &Arc<HttpSession>,
    stream: u64,
    after: u64,
) -> Result<Option<Arc<StreamLog>>, Response> {
    let Some(m) = session.mirror.clone() else {
        return Ok(None);
    };
    let limits = log_limits(sh);
    let keep = crate::bus::Keep {
        events: limits.max_events,
        bytes: limits.max_bytes,
    };
    let tail = match m.store.read(&session.id, stream, after, keep).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read a stored stream");
            return Err(store_unavailable("cannot resume the stream"));
        }
    };
    if !tail.known {
        return Ok(None);
    }
    if tail.broken {
        tracing::info!("a stored stream lost events: it cannot be resumed");
        return Ok(None);
    }
    let log = StreamLog::new(stream, limits, None);
    let mut last = after;
    if let Some((seq, _)) = tail.events.last() {
        last = *seq;
    }
    log.seed(tail.events, after);
    session.keep_stream(Arc::clone(&log));
    if tail.ended {
        log.close();
        return Ok(Some(log));
    }
    let (follower, ended) = (Arc::clone(&log), session.ended.clone());
    let (session, grace) = (Arc::clone(session), m.store.liveness_grace());
    // The writer counts as gone only once it has looked dead for the whole grace period.
    let mut dead_since = (!tail.writer_alive).then(Instant::now);
    tokio::spawn(async move {
        loop {
            if dead_since.is_some_and(|t| t.elapsed() > grace) {
                tracing::info!("the instance running a resumed request is gone: its stream ends");
                break;
            }
            tokio::select! {
                () = ended.cancelled() => break,
                () = tokio::time::sleep(FOLLOW_EVERY) => {}
            }
            match m.store.read(&session.id, stream, last, keep).await {
                Ok(tail) if tail.broken => {
                    tracing::info!("a followed stream lost events in the store: it ends");
                    session.forget_stream(&follower);
                    break;
                }
                Ok(tail) => {
                    if let Some((seq, _)) = tail.events.last() {
                        last = *seq;
                    }
                    follower.extend(tail.events);
                    if tail.ended {
                        break;
                    }
                    if tail.writer_alive {
                        dead_since = None;
                    } else {
                        dead_since.get_or_insert_with(Instant::now);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "cannot follow a stored stream"),
            }
        }
        follower.close();
    });
    Ok(Some(log))
}

/// GET: the standalone stream, or the resumption of any stream of the session.
pub(super) async fn get(sh: &Arc<Endpoint>, headers: &HeaderMap, owner: Option<Owner>) -> Response {
    if !checks::accepts(headers.get(http::header::ACCEPT), "text", "event-stream") {
        return rejection(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Accept must allow text/event-stream",
        );
    }
    if let HeaderVersion::Unsupported(v) = era_of(headers) {
        return rejection(
            StatusCode::BAD_REQUEST,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported MCP-Protocol-Version {v:?}"),
        );
    }
    let session = match session_of(sh, headers, owner).await {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    let Some(permit) = sh.stream_permit() else {
        return super::too_many_streams(None);
    };
    let resume = headers
        .get(LAST_EVENT_ID)
        .map(|v| v.to_str().ok().and_then(sse::parse_event_id));
    let (log, after) = match resume {
        None => {
            if !hold(sh, &session, None).await {
                return unknown_session();
            }
            (
                Arc::clone(&session.standalone),
                session.standalone.last_seq(),
            )
        }
        Some(Some((0, seq))) => {
            if !hold(sh, &session, Some(seq)).await {
                return unknown_session();
            }
            (Arc::clone(&session.standalone), seq)
        }
        Some(Some((stream, seq))) => {
            let log = match session.stream(stream) {
                Some(log) => Some(log),
                None => match stored_stream(sh, &session, stream, seq).await {
                    Ok(log) => log,
                    Err(refusal) => return refusal,
                },
            };
            match log {
                Some(log) => (log, seq),
                None => {
                    return rejection(
                        StatusCode::BAD_REQUEST,
                        ErrorCode::INVALID_REQUEST,
                        "the stream of that Last-Event-ID is no longer available",
                    );
                }
            }
        }
        Some(None) => {
            return rejection(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "malformed Last-Event-ID",
            );
        }
    };
    // A second standalone stream is refused; a resumption takes its stream over (the
    // client knows its previous connection is gone, the server may not yet).
    let reader = if resume.is_some() {
        log.take_over()
    } else {
        match log.attach() {
            Some(r) => r,
            None => {
                return rejection(
                    StatusCode::CONFLICT,
                    ErrorCode::INVALID_REQUEST,
                    "this session's stream is already open on another connection",
                );
            }
        }
    };
    let body = sse::follow(
        reader,
        sse::Follow {
            after,
            prime: session.primes() && resume.is_none(),
            keep_alive: sh.config.keep_alive,
            stop: session.ended.clone(),
            // A resumed POST stream still has its request to finish.
            shutdown: (log.stream() == 0).then(|| sh.stop.clone()),
        },
    );
    sse_response(super::with_permit(body, permit))
}

/// DELETE: ends the session, on every instance.
pub(super) async fn delete(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    owner: Option<Owner>,
) -> Response {
    let session = match session_of(sh, headers, owner).await {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    // The store first: a DELETE answered 204 has ended the session everywhere.
    if let Some(store) = sh.sessions.store()
        && let Err(e) = store.delete(&session.id).await
    {
        tracing::warn!(error = %e, "cannot delete a session from the store");
        return store_unavailable("cannot end the session");
    }
    sh.sessions.remove(&session.id);
    tracing::debug!(session = %session.id, "session ended by the client");
    status_only(StatusCode::NO_CONTENT)
}
