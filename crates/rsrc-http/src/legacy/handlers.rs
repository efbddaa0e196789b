//! The request handlers of the 2025 revisions: POST (and `initialize`, which opens a
//! session), GET (the standalone stream, or the resumption of any stream of the session)
//! and DELETE (ends the session, on every instance).
//!
//! Invariants:
//! - A session exists only after a successful `initialize`; a refused one leaves none.
//! - A request answered as JSON is cancelled when its connection drops; once its answer
//!   became a stream, it runs on to its end, its events kept for a `Last-Event-ID`
//!   resumption.
//! - A request that changed the session records its change in the store (with one)
//!   before it is answered.

use std::sync::Arc;

use axum::response::Response;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use rsrc::Notifier;
use rsrc::server::{Incoming, Outcome, Prepared};
use rsrc_protocol::http::headers::{LAST_EVENT_ID, SESSION_ID};
use rsrc_protocol::jsonrpc::{self, ErrorCode};
use rsrc_protocol::methods::{Initialize, Method as _};

use super::lookup::session_of;
use super::records::persist;
use super::refusals::{store_unavailable, too_many_sessions, unknown_session};
use super::streams::{hold, stored_stream};
use crate::admit::{HeaderVersion, era_of};
use crate::auth::Owner;
use crate::checks::{accepts, traced};
use crate::lock::lock;
use crate::respond::{
    Message, Settled, error_response, rejection, reply_response, settle, sse_response, status_only,
    too_many_streams, with_permit,
};
use crate::sse::{self, parse_event_id};
use crate::state::Endpoint;
use crate::table::{HttpSession, fresh_id};

/// A POST of the 2025 revisions.
pub(crate) async fn post(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    owner: Option<Owner>,
    body: &[u8],
) -> Response {
    let incoming = match sh.server.prepare(body) {
        Incoming::Malformed(reply) => return reply_response(StatusCode::BAD_REQUEST, reply),
        Incoming::Request(request) if request.method() == Initialize::NAME => {
            return initialize(sh, traced(request, headers), owner).await;
        }
        incoming => incoming,
    };
    let session = match session_of(sh, headers, owner).await {
        Ok(s) => s,
        Err(refusal) => return refusal,
    };
    let request = match incoming {
        Incoming::Request(request) => traced(request, headers),
        Incoming::Notification(notice) => {
            sh.server.notify(&session.engine, &notice);
            persist(sh, &session).await;
            return status_only(StatusCode::ACCEPTED);
        }
        Incoming::Response | Incoming::Malformed(_) => return status_only(StatusCode::ACCEPTED),
    };
    if session.engine.in_flight() >= sh.config.max_in_flight {
        rsrc::observe::http_refusal("rate");
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
    let Ok(id) = fresh_id() else {
        return status_only(StatusCode::INTERNAL_SERVER_ERROR);
    };
    let Some(name) = sh.sessions.names(&id, owner).into_iter().next() else {
        return status_only(StatusCode::INTERNAL_SERVER_ERROR);
    };
    let session = Arc::new(HttpSession::new(
        name,
        &sh.stop,
        sh.log_limits(),
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
        res.headers_mut()
            .insert(HeaderName::from_static(SESSION_ID), v);
    }
    res
}

/// GET: the standalone stream, or the resumption of any stream of the session.
pub(crate) async fn get(sh: &Arc<Endpoint>, headers: &HeaderMap, owner: Option<Owner>) -> Response {
    if !accepts(headers.get(http::header::ACCEPT), "text", "event-stream") {
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
        return too_many_streams(None);
    };
    let resume = headers
        .get(LAST_EVENT_ID)
        .map(|v| v.to_str().ok().and_then(parse_event_id));
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
    sse_response(with_permit(body, permit))
}

/// DELETE: ends the session, on every instance.
pub(crate) async fn delete(
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
