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

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use axum::response::Response;
use base64::Engine as _;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderValue, StatusCode};
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::jsonrpc::{self, ErrorCode, Message};
use rsrc_protocol::methods::{Initialize, Method as _};
use tokio_util::sync::CancellationToken;

use super::auth::Owner;
use super::sse::{self, LogLimits, StreamLog};
use super::{
    HeaderVersion, LAST_EVENT_ID, SESSION_ID, Settled, Shared, checks, era_of, error_response,
    rejection, reply_response, settle, sse_response, status_only,
};
use crate::context::Notifier;
use crate::server::{Handled, Session};

/// Finished POST streams a session keeps for `Last-Event-ID` replay.
pub(super) const RETAINED_STREAMS: usize = 16;

/// The legacy sessions of one endpoint.
#[derive(Debug)]
pub(super) struct Sessions {
    map: RwLock<HashMap<Arc<str>, Arc<HttpSession>>>,
    epoch: Instant,
    max: usize,
    idle: Duration,
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
}

impl std::fmt::Debug for HttpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSession")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl HttpSession {
    fn new(stop: &CancellationToken, limits: LogLimits, owner: Option<Owner>) -> Self {
        let mut raw = [0u8; 24];
        // Without an entropy source no session can be made safe: refusing is the only
        // honest answer, and getrandom on Linux does not fail once the pool is ready.
        getrandom::fill(&mut raw).expect("the operating system's random source failed");
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
        let standalone = StreamLog::new(0, limits.clone());
        let engine =
            Arc::new(Session::new(Notifier::sink(standalone.clone())).closing_with(stop.clone()));
        HttpSession {
            id: id.into(),
            engine,
            standalone,
            streams: Mutex::new(VecDeque::new()),
            next_stream: AtomicU64::new(1),
            last_used_ms: AtomicU64::new(0),
            ended: CancellationToken::new(),
            limits,
            owner,
        }
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

    /// A new POST stream, registered for replay.
    fn open_stream(&self) -> Arc<StreamLog> {
        let log = StreamLog::new(
            self.next_stream.fetch_add(1, Ordering::Relaxed),
            self.limits.clone(),
        );
        let mut streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
        streams.push_back(Arc::clone(&log));
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
        log
    }

    fn stream(&self, n: u64) -> Option<Arc<StreamLog>> {
        if n == 0 {
            return Some(Arc::clone(&self.standalone));
        }
        self.streams
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|s| s.stream() == n)
            .cloned()
    }

    fn end(&self) {
        self.ended.cancel();
        self.engine.cancel_all();
        self.standalone.close();
        for s in self
            .streams
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            s.close();
        }
    }
}

impl Sessions {
    pub(super) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            map: RwLock::new(HashMap::new()),
            epoch: Instant::now(),
            max: max.max(1),
            idle,
        }
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

    fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let s = map.get(id)?;
        // Touched under the lock: expiry and eviction, which take it for writing, cannot
        // end a session between its lookup and its use being recorded.
        s.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(Arc::clone(s))
    }

    /// Registers a session, making room at the cap; `false` if every session is busy.
    fn insert(&self, session: Arc<HttpSession>) -> bool {
        let now = self.now_ms();
        session.last_used_ms.store(now, Ordering::Relaxed);
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
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
                None => return false,
            }
        }
        map.insert(Arc::clone(&session.id), session);
        true
    }

    fn remove(&self, id: &str) {
        let removed = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(s) = removed {
            s.end();
        }
    }

    pub(super) fn expire(&self) {
        let now = self.now_ms();
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        self.expire_locked(&mut map, now);
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

/// The session the request names, if it exists and belongs to `owner`; another
/// identity's session answers exactly like an unknown one.
fn session_of(
    sh: &Shared,
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
    id.to_str()
        .ok()
        .and_then(|id| sh.sessions.get(id))
        .filter(|s| s.owner == owner)
        .ok_or_else(|| {
            rejection(
                StatusCode::NOT_FOUND,
                ErrorCode::INVALID_REQUEST,
                "unknown or ended session: send initialize again",
            )
        })
}

/// A POST of the 2025 revisions.
pub(super) async fn post(
    sh: &Arc<Shared>,
    headers: &HeaderMap,
    owner: Option<Owner>,
    body: &[u8],
) -> Response {
    let message = match jsonrpc::decode(body) {
        Ok(m) => m,
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, e.id.as_ref(), &e.to_error_object());
        }
    };
    if let Message::Request(r) = &message
        && r.method == Initialize::NAME
    {
        return initialize(sh, message, owner);
    }
    // A 2026-07-28 request (its `_meta` says so) is never served inside a legacy
    // session, where it would escape the modern path's caps on streams and its
    // cancellation: its header must say 2026-07-28, and then it needs no session.
    if super::modern::speaks_modern(&message) {
        return error_response(
            StatusCode::BAD_REQUEST,
            super::modern::request_id(&message),
            &jsonrpc::ErrorObject::new(
                ErrorCode::HEADER_MISMATCH,
                "the request names revision 2026-07-28 in _meta: send it with \
                 MCP-Protocol-Version: 2026-07-28, outside any session",
            ),
        );
    }
    let session = match session_of(sh, headers, owner) {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    if matches!(message, Message::Request(_))
        && session.engine.in_flight() >= sh.config.max_in_flight
    {
        let mut res = error_response(
            StatusCode::TOO_MANY_REQUESTS,
            super::modern::request_id(&message),
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
    let handled = sh
        .server
        .handle_decoded(&session.engine, message, &notifier);
    drop(notifier);
    match handled {
        Handled::None => status_only(StatusCode::ACCEPTED),
        Handled::Reply(reply) => reply_response(StatusCode::OK, reply),
        Handled::Pending(fut) => match settle(fut, notes).await {
            Settled::Json(Some(reply)) => reply_response(StatusCode::OK, reply),
            // Cancelled by the client: the stream ends without a response.
            Settled::Json(None) => sse_response(futures_util::stream::empty()),
            Settled::Stream(events) => {
                let log = session.open_stream();
                let Some(reader) = log.attach() else {
                    return status_only(StatusCode::INTERNAL_SERVER_ERROR);
                };
                // The request runs to its end even if this connection drops: its events
                // wait in the log for a `Last-Event-ID` resumption.
                let writer = Arc::clone(&log);
                let ended = session.ended.clone();
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
        },
    }
}

fn initialize(sh: &Arc<Shared>, message: Message<'_>, owner: Option<Owner>) -> Response {
    let limits = LogLimits {
        max_events: sh.config.replay_events.max(1),
        max_bytes: sh.config.replay_bytes,
        budget: Arc::clone(&sh.replay_budget),
    };
    let session = Arc::new(HttpSession::new(&sh.stop, limits, owner));
    let Handled::Reply(reply) =
        sh.server
            .handle_decoded(&session.engine, message, &Notifier::discard())
    else {
        // `initialize` is always answered at once.
        return status_only(StatusCode::INTERNAL_SERVER_ERROR);
    };
    if reply.error_object().is_some() {
        // No session for a refused initialize.
        return reply_response(StatusCode::OK, reply);
    }
    let id = Arc::clone(&session.id);
    if !sh.sessions.insert(session) {
        let mut res = rejection(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::INTERNAL_ERROR,
            "too many sessions are active; retry later",
        );
        res.headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
        return res;
    }
    let mut res = reply_response(StatusCode::OK, reply);
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(SESSION_ID, v);
    }
    res
}

/// GET: the standalone stream, or the resumption of any stream of the session.
pub(super) fn get(sh: &Arc<Shared>, headers: &HeaderMap, owner: Option<Owner>) -> Response {
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
    let session = match session_of(sh, headers, owner) {
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
        None => (
            Arc::clone(&session.standalone),
            session.standalone.last_seq(),
        ),
        Some(Some((stream, seq))) => match session.stream(stream) {
            Some(log) => (log, seq),
            None => {
                return rejection(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "the stream of that Last-Event-ID is no longer available",
                );
            }
        },
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
    sse_response(super::holding(body, permit))
}

/// DELETE: ends the session.
pub(super) fn delete(sh: &Arc<Shared>, headers: &HeaderMap, owner: Option<Owner>) -> Response {
    let session = match session_of(sh, headers, owner) {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    sh.sessions.remove(&session.id);
    tracing::debug!(session = %session.id, "session ended by the client");
    status_only(StatusCode::NO_CONTENT)
}
