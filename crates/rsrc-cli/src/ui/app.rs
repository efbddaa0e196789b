//! What every route of the page's API shares: the servers, the reads kept for the page,
//! the shape of a failure, and calling a server.
//!
//! Invariants:
//! - A failure is `{"error": {"kind", "message", "code"?, "data"?}}`: the server's own
//!   code and message when it answered with an error (502), 503 when it is not connected,
//!   504 when it did not answer in time, 501 (`unsupported`) for what the server does not
//!   declare (rsrc's SEP-2093 extension: nothing was asked), 400 for a bad request from
//!   the page.
//! - What is kept for the page is bounded: the last [`READS_KEPT`] reads, at most
//!   [`READS_BYTES`] in all; an answer over [`MAX_READ`] is refused, not buffered.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use rsrc::protocol::resources::ReadResourceResult;
use rsrc_client::{Client, ClientError};
use serde_json::{Value, json};

use super::servers::{Servers, Slot, Unavailable};

/// The largest answer taken from a server (a larger one is refused, not buffered).
pub(super) const MAX_READ: usize = 64 * 1024 * 1024;
/// Reads whose contents stay available to the page.
const READS_KEPT: usize = 8;
/// Bytes of contents kept for the page, in all.
const READS_BYTES: usize = 256 * 1024 * 1024;

/// What every route shares.
#[derive(Clone)]
pub(super) struct App {
    pub(super) servers: Arc<Servers>,
    pub(super) reads: Arc<Reads>,
}

impl App {
    pub(super) fn new(servers: Arc<Servers>) -> App {
        App {
            servers,
            reads: Arc::new(Reads::default()),
        }
    }

    pub(super) fn slot(&self, id: usize) -> Result<&Arc<Slot>, ApiError> {
        self.servers
            .get(id)
            .ok_or_else(|| ApiError::bad(format!("there is no server {id}")))
    }

    pub(super) fn client(&self, id: usize) -> Result<(&Arc<Slot>, Client), ApiError> {
        let slot = self.slot(id)?;
        Ok((slot, slot.client()?))
    }
}

/// The last reads, whose contents the page fetches by `/api/content/{read}/{index}`.
#[derive(Default)]
pub(super) struct Reads {
    next: AtomicU64,
    kept: Mutex<VecDeque<(u64, Arc<ReadResourceResult>)>>,
}

impl Reads {
    pub(super) fn keep(&self, read: Arc<ReadResourceResult>) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.push_back((id, read));
        let size = |r: &ReadResourceResult| r.contents.iter().map(|c| c.body.len()).sum::<usize>();
        while kept.len() > READS_KEPT
            || (kept.len() > 1 && kept.iter().map(|(_, r)| size(r)).sum::<usize>() > READS_BYTES)
        {
            kept.pop_front();
        }
        id
    }

    pub(super) fn get(&self, id: u64) -> Option<Arc<ReadResourceResult>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(i, _)| *i == id)
            .map(|(_, r)| Arc::clone(r))
    }
}

/// A failure, as the page sees it.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    pub(super) body: Value,
}

impl ApiError {
    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({"kind": "bad_request", "message": message.into()}),
        }
    }

    /// The message, for a list of failures.
    pub(super) fn message(&self) -> String {
        let message = self.body["message"].as_str().unwrap_or("failed");
        match self.body["code"].as_i64() {
            Some(code) => format!("{message} ({code})"),
            None => message.to_owned(),
        }
    }

    pub(super) fn not_found(message: &str) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            body: json!({"kind": "not_found", "message": message}),
        }
    }
}

impl From<Unavailable> for ApiError {
    fn from(u: Unavailable) -> ApiError {
        let Unavailable::NotConnected(message) = u;
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: json!({"kind": "disconnected", "message": message}),
        }
    }
}

impl From<ClientError> for ApiError {
    fn from(e: ClientError) -> ApiError {
        let (status, body) = match &e {
            ClientError::Rpc(err) => {
                let mut body = json!({"kind": "rpc", "code": err.code.0, "message": err.message});
                if let Some(data) = &err.data {
                    body["data"] = data.clone();
                }
                (StatusCode::BAD_GATEWAY, body)
            }
            ClientError::Timeout => (
                StatusCode::GATEWAY_TIMEOUT,
                json!({"kind": "timeout", "message": e.to_string()}),
            ),
            ClientError::Closed => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"kind": "closed", "message": e.to_string()}),
            ),
            ClientError::NotOffered(m) => (
                StatusCode::NOT_IMPLEMENTED,
                json!({"kind": "unsupported", "message": m}),
            ),
            _ => (
                StatusCode::BAD_GATEWAY,
                json!({"kind": "protocol", "message": e.to_string()}),
            ),
        };
        ApiError { status, body }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.body}))).into_response()
    }
}

pub(super) type ApiResult = Result<Json<Value>, ApiError>;

/// Runs a call to a server; a failure for want of an answer has the server checked.
pub(super) async fn call<T>(
    slot: &Slot,
    f: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ApiError> {
    f.await.map_err(|e| {
        slot.failed(&e);
        ApiError::from(e)
    })
}

pub(super) fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
