//! The client's connection: a writer task that batches outgoing lines, a reader task that
//! routes responses to waiting requests and notifications to a bounded queue, and the
//! table of requests awaiting an answer.
//!
//! Invariants:
//! - The reader holds only a weak handle on the outgoing queue, so dropping the last
//!   [`Connection`] closes the server's input (its cue to exit), whatever the reader does.
//! - When the connection ends, every waiting request fails with `Closed` at once.
//! - A request that ends without an answer (timeout, dropped future) is removed from the
//!   table and cancelled on the wire.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rsrc_protocol::RequestMeta;
use rsrc_protocol::jsonrpc::{self, ErrorCode, ErrorObject, Message, RequestId};
use rsrc_protocol::lifecycle::{CancelledParams, EmptyResult};
use rsrc_protocol::methods::{Cancelled, Method, NotificationMethod};
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::error::ClientError;
use crate::options::ClientOptions;
use rsrc::transport::{Frame, LineReader};

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Its method, e.g. `notifications/resources/updated`.
    pub method: String,
    /// Its params (`null` when absent).
    pub params: serde_json::Value,
}

type Outcome = Result<Box<RawValue>, ErrorObject>;

/// Requests awaiting an answer; `None` once the connection has ended.
type Pending = Option<HashMap<RequestId, oneshot::Sender<Outcome>>>;

#[derive(Debug)]
struct Waiting {
    pending: Mutex<Pending>,
}

impl Waiting {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Outcome>> {
        self.pending().as_mut().and_then(|p| p.remove(id))
    }
}

/// One connection to a server.
#[derive(Debug)]
pub(crate) struct Connection {
    waiting: Arc<Waiting>,
    out: mpsc::Sender<Vec<u8>>,
    notifications: Mutex<Option<mpsc::Receiver<Notification>>>,
    next_id: AtomicI64,
    options: ClientOptions,
}

const NOTIFICATION_QUEUE: usize = 1024;

fn encode_line(
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> Result<Vec<u8>, ClientError> {
    let mut line = Vec::with_capacity(256);
    write(&mut line).map_err(|e| ClientError::Protocol(format!("cannot encode a message: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

impl Connection {
    pub(crate) fn start<R, W>(reader: R, writer: W, options: ClientOptions) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let waiting = Arc::new(Waiting {
            pending: Mutex::new(Some(HashMap::new())),
        });
        let (out, out_rx) = mpsc::channel(1024);
        let (notes_tx, notes_rx) = mpsc::channel(NOTIFICATION_QUEUE);
        tokio::spawn(write_loop(writer, out_rx));
        tokio::spawn(read_loop(
            reader,
            Arc::clone(&waiting),
            out.downgrade(),
            notes_tx,
            options.max_message,
        ));
        Connection {
            waiting,
            out,
            notifications: Mutex::new(Some(notes_rx)),
            next_id: AtomicI64::new(1),
            options,
        }
    }

    pub(crate) fn options(&self) -> &ClientOptions {
        &self.options
    }

    pub(crate) fn take_notifications(&self) -> Option<mpsc::Receiver<Notification>> {
        self.notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    pub(crate) async fn notify<N: NotificationMethod>(
        &self,
        params: &N::Params,
    ) -> Result<(), ClientError> {
        let line = encode_line(|l| jsonrpc::write_notification(l, N::NAME, Some(params)))?;
        self.out.send(line).await.map_err(|_| ClientError::Closed)
    }

    pub(crate) async fn request<M: Method>(
        &self,
        params: &M::Params,
        meta: Option<&RequestMeta>,
        timeout: Duration,
    ) -> Result<M::Result, ClientError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let value = crate::params::with_meta(params, meta, M::NAME)?;
        let line = encode_line(|l| jsonrpc::write_request(l, &id, M::NAME, Some(&value)))?;
        let (tx, rx) = oneshot::channel();
        match self.waiting.pending().as_mut() {
            Some(p) => p.insert(id.clone(), tx),
            None => return Err(ClientError::Closed),
        };
        let mut guard = PendingGuard {
            conn: self,
            id: Some(id),
        };
        self.out.send(line).await.map_err(|_| ClientError::Closed)?;
        let outcome = tokio::time::timeout(timeout, rx).await;
        let outcome = match outcome {
            Err(_) => return Err(ClientError::Timeout),
            Ok(received) => {
                guard.id = None;
                received.map_err(|_| ClientError::Closed)?
            }
        };
        let raw = outcome.map_err(ClientError::Rpc)?;
        serde_json::from_str(raw.get())
            .map_err(|e| ClientError::Protocol(format!("malformed {} result: {e}", M::NAME)))
    }
}

/// Removes an unanswered request and tells the server to stop working on it.
struct PendingGuard<'a> {
    conn: &'a Connection,
    id: Option<RequestId>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if self.conn.waiting.take(&id).is_none() {
            return;
        }
        let params = CancelledParams {
            request_id: Some(id),
            reason: Some("the client stopped waiting".into()),
            meta: None,
        };
        if let Ok(line) =
            encode_line(|l| jsonrpc::write_notification(l, Cancelled::NAME, Some(&params)))
        {
            let _ = self.conn.out.try_send(line);
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(mut batch) = rx.recv().await {
        while let Ok(more) = rx.try_recv() {
            batch.extend_from_slice(&more);
        }
        if writer.write_all(&batch).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    waiting: Arc<Waiting>,
    out: mpsc::WeakSender<Vec<u8>>,
    notes: mpsc::Sender<Notification>,
    max_message: usize,
) {
    let mut lines = LineReader::new(reader, max_message);
    loop {
        while let Some(frame) = lines.next_buffered() {
            match frame {
                Frame::Line(bytes) => handle(bytes, &waiting, &out, &notes),
                Frame::TooLong(prefix) => {
                    tracing::warn!(
                        limit = max_message,
                        "discarded an over-long message from the server"
                    );
                    if let Some(tx) =
                        jsonrpc::id_from_prefix(&prefix).and_then(|id| waiting.take(&id))
                    {
                        let _ = tx.send(Err(ErrorObject::new(
                            ErrorCode::INTERNAL_ERROR,
                            format!(
                                "the response exceeds this client's limit of {max_message} bytes"
                            ),
                        )));
                    }
                }
            }
        }
        match lines.fill().await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tracing::debug!(error = %e, "reading from the server failed");
                break;
            }
        }
    }
    // Every request still waiting, and every later one, fails with `Closed`.
    *waiting.pending() = None;
}

fn handle(
    bytes: &[u8],
    waiting: &Waiting,
    out: &mpsc::WeakSender<Vec<u8>>,
    notes: &mpsc::Sender<Notification>,
) {
    match jsonrpc::decode(bytes) {
        Ok(Message::Response(r)) => match r.id {
            Some(id) => match waiting.take(&id) {
                Some(tx) => {
                    let _ = tx.send(r.outcome.map(|raw| raw.to_owned()));
                }
                None => {
                    tracing::debug!(%id, "a response to no waiting request (late or cancelled)");
                }
            },
            None => {
                tracing::warn!(error = ?r.outcome.err(), "the server reported an error without an id");
            }
        },
        Ok(Message::Notification(n)) => {
            let params = n
                .params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(serde_json::Value::Null);
            let note = Notification {
                method: n.method.into_owned(),
                params,
            };
            if notes.try_send(note).is_err() {
                tracing::debug!("notification queue full or unread: dropped");
            }
        }
        Ok(Message::Request(r)) => {
            // The only server-to-client request a resources client answers is ping.
            let line = if r.method == <rsrc_protocol::methods::Ping as Method>::NAME {
                encode_line(|l| jsonrpc::write_result(l, &r.id, &EmptyResult::default()))
            } else {
                let e = ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: {}", r.method),
                );
                encode_line(|l| jsonrpc::write_error(l, Some(&r.id), &e))
            };
            if let (Ok(line), Some(out)) = (line, out.upgrade()) {
                let _ = out.try_send(line);
            }
        }
        Err(e) => tracing::warn!(error = %e, "undecodable message from the server"),
    }
}
