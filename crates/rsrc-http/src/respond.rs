//! The responses both eras share: JSON replies and errors, bare statuses, event streams
//! (with keep-alive comments, holding a place among the long-lived streams while sent),
//! and settling a running request into one JSON reply or a stream of its notifications
//! followed by its reply.
//!
//! Invariant: a request's reply and notifications only ever go to the HTTP response of
//! that request; a reply keeps what it holds of the budget of content in flight until the
//! connection has sent or dropped its last byte, and a large one is written a piece at a
//! time ([`Pieces`]).

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use http::StatusCode;
use http::header::{self, HeaderName, HeaderValue};
use rsrc_protocol::http::sse::KEEP_ALIVE;
use rsrc_protocol::jsonrpc::{self, ErrorCode, ErrorObject, RequestId};
use tokio::sync::mpsc;

use crate::pieces::Pieces;
use rsrc::BoxFuture;
use rsrc::server::Reply;

const ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// How a request's answer is delivered.
pub(crate) enum Settled {
    /// One JSON response (or, for `None`, nothing: the request was cancelled).
    Json(Option<Reply>),
    /// Notifications came first: an event stream of encoded messages, the reply last.
    Stream(RequestEvents),
}

/// Waits until the answer of a request is either complete (JSON) or known to need a
/// stream (a notification arrived before the reply).
pub(crate) async fn settle(
    mut fut: BoxFuture<'static, Option<Reply>>,
    mut notes: mpsc::Receiver<Vec<u8>>,
) -> Settled {
    tokio::select! {
        biased;
        Some(first) = notes.recv() => Settled::Stream(RequestEvents {
            queued: vec![Message::Note(Bytes::from(first))],
            fut: Some(fut),
            notes,
        }),
        reply = &mut fut => {
            let mut queued = Vec::new();
            while let Ok(n) = notes.try_recv() {
                queued.push(Message::Note(Bytes::from(n)));
            }
            if queued.is_empty() {
                Settled::Json(reply)
            } else {
                queued.extend(reply.map(Message::Reply));
                Settled::Stream(RequestEvents { queued, fut: None, notes })
            }
        }
    }
}

/// One message of a request answered on a stream.
pub(crate) enum Message {
    /// A notification, encoded.
    Note(Bytes),
    /// The reply, encoded only as it is written (it holds its share of the content
    /// budget until then).
    Reply(Reply),
}

/// The messages of one request answered on a stream: its notifications, then its reply.
pub(crate) struct RequestEvents {
    /// Ready messages, oldest first.
    queued: Vec<Message>,
    fut: Option<BoxFuture<'static, Option<Reply>>>,
    notes: mpsc::Receiver<Vec<u8>>,
}

impl RequestEvents {
    /// The messages as a stream; dropping it drops (cancels) the request.
    pub(crate) fn into_stream(self) -> impl Stream<Item = Message> + Send + 'static {
        let mut this = self;
        this.queued.reverse();
        futures_util::stream::unfold(this, |mut this| async move {
            loop {
                if let Some(m) = this.queued.pop() {
                    return Some((m, this));
                }
                let fut = this.fut.as_mut()?;
                tokio::select! {
                    biased;
                    Some(n) = this.notes.recv() => return Some((Message::Note(Bytes::from(n)), this)),
                    reply = fut => {
                        this.fut = None;
                        let mut rest = Vec::new();
                        while let Ok(n) = this.notes.try_recv() {
                            rest.push(Message::Note(Bytes::from(n)));
                        }
                        rest.extend(reply.map(Message::Reply));
                        rest.reverse();
                        this.queued = rest;
                    }
                }
            }
        })
    }
}

pub(crate) fn json_response(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut res = Response::new(body.into());
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// The reply as a JSON response, a large one written a piece at a time; it keeps what
/// the reply held of the content budget until the connection has sent or dropped its
/// last byte.
pub(crate) fn reply_response(status: StatusCode, reply: Reply) -> Response {
    json_response(status, Pieces::json(reply).into_body())
}

pub(crate) fn error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> Response {
    let mut body = Vec::with_capacity(128);
    // Writing a plain error object into a Vec cannot fail.
    let _ = jsonrpc::write_error(&mut body, id, error);
    json_response(status, body)
}

/// A refusal at the HTTP level: a JSON-RPC error without an id.
pub(crate) fn rejection(
    status: StatusCode,
    code: ErrorCode,
    message: impl Into<String>,
) -> Response {
    error_response(status, None, &ErrorObject::new(code, message))
}

pub(crate) fn status_only(status: StatusCode) -> Response {
    let mut res = Response::new(Body::empty());
    *res.status_mut() = status;
    res
}

pub(crate) fn method_not_allowed() -> Response {
    let mut res = status_only(StatusCode::METHOD_NOT_ALLOWED);
    res.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    res
}

pub(crate) fn sse_response<S>(body: S) -> Response
where
    S: Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static,
{
    let mut res = Response::new(Body::from_stream(body));
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    h.insert(ACCEL_BUFFERING, HeaderValue::from_static("no"));
    res
}

/// 503: the cap on long-lived streams is reached.
pub(crate) fn too_many_streams(id: Option<&RequestId>) -> Response {
    rsrc::observe::http_refusal("stream_cap");
    let mut res = error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        &ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            "too many streams are open; retry later",
        ),
    );
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}

/// `body`, holding `permit` for as long as it is being sent.
pub(crate) fn with_permit<S, T>(
    body: S,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> impl Stream<Item = T> + Send + 'static
where
    S: Stream<Item = T> + Send + 'static,
{
    body.map(move |item| {
        let _ = &permit;
        item
    })
}

/// An SSE response of `events`, framed without ids (nothing to resume), with a comment
/// line after every `keep_alive` of silence between events so that a long-lived stream
/// (a `subscriptions/listen`) outlives proxies' idle timeouts.
pub(crate) fn unnumbered_sse(
    events: RequestEvents,
    keep_alive: Duration,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Response {
    let events = Box::pin(events.into_stream());
    // The message being written: a large reply goes a piece at a time, and nothing comes
    // between its pieces.
    let body = futures_util::stream::unfold(
        (events, None),
        move |(mut events, mut current): (_, Option<Pieces>)| async move {
            if let Some(chunk) = current.as_mut().and_then(Pieces::next) {
                return Some((Ok(chunk), (events, current)));
            }
            tokio::select! {
                m = events.next() => {
                    let mut pieces = match m? {
                        Message::Note(json) => Pieces::event(json),
                        Message::Reply(reply) => Pieces::reply_event(reply),
                    };
                    let first = pieces.next()?;
                    Some((Ok(first), (events, Some(pieces))))
                }
                () = tokio::time::sleep(keep_alive) => {
                    Some((Ok(Bytes::from_static(KEEP_ALIVE)), (events, None)))
                }
            }
        },
    );
    match permit {
        Some(permit) => sse_response(with_permit(body, permit)),
        None => sse_response(body),
    }
}
