//! The 2025 revisions over HTTP: sessions named by `Mcp-Session-Id`, the standalone GET
//! stream, and resumption with `Last-Event-ID`. This file holds the request handlers
//! (POST, `initialize`, GET, DELETE) and the lookup of the session a request names;
//! beside it, `table.rs` keeps the sessions of one endpoint (cap, eviction, expiry),
//! `session.rs` one session and its streams, `records.rs` a session's record in a
//! [`SessionStore`] (persist, apply, reload, put back), `streams.rs` the streams shared
//! through the store (holding stream 0, following a POST stream written elsewhere).
//!
//! Invariants:
//! - A session exists only after a successful `initialize`; its id carries 192 random
//!   bits in visible ASCII. It is kept and looked up by its name, a keyed digest of the
//!   id and of the identity that created it: another identity presenting the id finds
//!   no session, and with a store the id never leaves this instance.
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
//! store, and other instances drop their copies when told or when they next check; so
//! does an eviction at the cap. A copy applies only records at least as recent as the
//! one it has, keeping its own changes not yet recorded; a session the store lost (not
//! deleted: no tombstone) is re-created from a copy. Each instance's copy is bounded and
//! expires as above; the store's record expires after `idle` unused.
//!
//! [`RETAINED_STREAMS`]: crate::bus::RETAINED_STREAMS
//! [`SessionStore`]: crate::bus::SessionStore

mod records;
mod session;
mod streams;
mod table;

use std::sync::{Arc, Mutex, PoisonError};

use axum::response::Response;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderValue, StatusCode};
use rsrc_protocol::jsonrpc::{self, ErrorCode};
use rsrc_protocol::methods::{Initialize, Method as _};

use super::auth::Owner;
use super::respond::Message;
use super::sse::{self, LogLimits};
use super::{
    Endpoint, HeaderVersion, LAST_EVENT_ID, SESSION_ID, Settled, checks, era_of, error_response,
    rejection, reply_response, settle, sse_response, status_only,
};
use crate::bus::Lookup;
use crate::context::Notifier;
use crate::server::{Incoming, Outcome, Prepared};
use records::{persist, restore};
use session::{HttpSession, fresh_id, plausible_id};
use streams::{hold, stored_stream};

pub(super) use records::reload;
pub(super) use table::Sessions;

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

fn unknown_session() -> Response {
    crate::observe::http_refusal("session_unknown");
    rejection(
        StatusCode::NOT_FOUND,
        ErrorCode::INVALID_REQUEST,
        "unknown or ended session: send initialize again",
    )
}

fn store_unavailable(what: &str) -> Response {
    crate::observe::http_refusal("session_store");
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        format!("{what}: the session store is unavailable; retry later"),
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

fn too_many_sessions() -> Response {
    crate::observe::http_refusal("session_cap");
    let mut res = rejection(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "too many sessions are active; retry later",
    );
    res.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}

/// The session the request names, if it exists and belongs to `owner`; another
/// identity's session answers exactly like an unknown one (its id names another,
/// absent, session). With a store, a session this instance has not seen yet is loaded
/// from it, and a known one is checked against it now and then (DELETE and expiry
/// elsewhere end it here too).
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
    let Some(id) = id.to_str().ok().filter(|id| plausible_id(id)) else {
        return Err(unknown_session());
    };
    let names = sh.sessions.names(id, owner);
    for name in &names {
        let Some(s) = sh.sessions.get(name) else {
            continue;
        };
        if let Some(store) = sh.sessions.store()
            && sh.sessions.touch_due(&s)
        {
            match store
                .touch(&[name.to_string()])
                .await
                .map(|f| f.into_iter().next())
            {
                Ok(Some(Lookup::Deleted)) => {
                    sh.sessions.remove(name);
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
    for name in names {
        // Evicted here: ended everywhere, even if the store has not heard yet.
        if sh.sessions.evicted(&name) {
            return Err(unknown_session());
        }
        let record = match store.load(&name, true).await {
            Ok(Lookup::Found(r)) => r,
            Ok(Lookup::Deleted) => return Err(unknown_session()),
            Ok(Lookup::Missing) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "cannot load a session from the store");
                return Err(store_unavailable("cannot load the session"));
            }
        };
        let Some(session) = HttpSession::restore(sh, Arc::clone(&name), &record) else {
            tracing::warn!("a stored session could not be read: treated as unknown");
            return Err(unknown_session());
        };
        let Some(session) = sh.sessions.insert(Arc::new(session)) else {
            return Err(too_many_sessions());
        };
        // A change announced between the load and the insertion found no copy here to
        // reload: reload once more (after any reload already queued).
        reload(sh, Some(&name));
        return Ok(session);
    }
    // Redis may have restarted empty: an instance with a copy is putting it back.
    if store.recovering() {
        return Err(store_unavailable("cannot load the session"));
    }
    Err(unknown_session())
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
            return initialize(sh, super::checks::traced(request, headers), owner).await;
        }
        incoming => incoming,
    };
    let session = match session_of(sh, headers, owner).await {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    let request = match incoming {
        Incoming::Request(request) => super::checks::traced(request, headers),
        Incoming::Notification(notice) => {
            sh.server.notify(&session.engine, &notice);
            persist(sh, &session).await;
            return status_only(StatusCode::ACCEPTED);
        }
        Incoming::Response | Incoming::Malformed(_) => return status_only(StatusCode::ACCEPTED),
    };
    if session.engine.in_flight() >= sh.config.max_in_flight {
        crate::observe::http_refusal("rate");
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
                            Some(Message::Note(m)) => writer.push_message(&m),
                            // The reply is the last message.
                            Some(Message::Reply(reply)) => writer.push_reply(reply).await,
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
    let id = fresh_id();
    let Some(name) = sh.sessions.names(&id, owner).into_iter().next() else {
        return status_only(StatusCode::INTERNAL_SERVER_ERROR);
    };
    let session = Arc::new(HttpSession::new(
        name,
        &sh.stop,
        log_limits(sh),
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
    let record = session.record();
    let Some(session) = sh.sessions.insert(session) else {
        return too_many_sessions();
    };
    if let (Some(store), Some(record)) = (sh.sessions.store(), record) {
        lock(&session.sync).saved = record.state.clone();
        if let Err(e) = store.create(&session.name, &record).await {
            tracing::warn!(error = %e, "cannot record a new session in the store");
            sh.sessions.remove(&session.name);
            return store_unavailable("cannot start a session");
        }
    }
    let mut res = reply_response(StatusCode::OK, reply);
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(SESSION_ID, v);
    }
    res
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
        && let Err(e) = store.delete(&session.name).await
    {
        tracing::warn!(error = %e, "cannot delete a session from the store");
        return store_unavailable("cannot end the session");
    }
    sh.sessions.remove(&session.name);
    tracing::debug!(session = %session.name, "session ended by the client");
    status_only(StatusCode::NO_CONTENT)
}
