//! Serving one byte stream (stdio, a socket, an in-memory pipe): the per-connection event
//! loop.
//!
//! One task does everything: it reads lines, hands them to [`Server::handle`], polls the
//! handlers' futures, and writes replies and notifications, batching whatever is ready
//! into one write. Priorities, highest first: writing out, finishing requests, accepting
//! new input — so a client that stops reading stops being read from (backpressure), and
//! memory stays bounded by the line limit, the in-flight limit and the output high-water
//! mark — and a finished reply is encoded only while the output is under that mark, so
//! large responses wait as replies holding their share of the content budget
//! ([`crate::ByteBudget`]). A reply holding a large text streams: the text is escaped into
//! the output a piece at a time as it drains, so it is never in memory twice and its
//! escaping overlaps the client's reading; nothing else is appended until it is out.
//!
//! Invariants:
//! - Replies and notifications are written whole, one per line, never interleaved.
//! - A request's notifications are written before its reply.
//! - When the input ends, requests in flight get a grace period to finish; then they are
//!   cancelled and the loop ends.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::lines::{Frame, LineReader};
use super::pieces::{PIECE, STREAM_FROM};
use crate::context::Notifier;
use crate::future::BoxFuture;
use crate::server::{Handled, Reply, Server, Session, Streaming};

/// Limits of one stream connection.
#[derive(Debug, Clone)]
pub struct StreamConfig {
    /// Longest accepted line (one message), in bytes (default 16 MiB).
    pub max_line: usize,
    /// Most requests handled at once; beyond it, input is not read (default 128).
    pub max_in_flight: usize,
    /// Most notifications queued; more are dropped (default 1024).
    pub notification_queue: usize,
    /// Output bytes pending beyond which input is not read (default 8 MiB).
    pub output_high_water: usize,
    /// How long requests in flight may run after the input ended (default 5 s).
    pub shutdown_grace: Duration,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            max_line: 16 * 1024 * 1024,
            max_in_flight: 128,
            notification_queue: 1024,
            output_high_water: 8 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

type Pending = FuturesUnordered<BoxFuture<'static, Option<Reply>>>;

/// Output buffers up to this capacity are kept for the next replies; a larger one (after a
/// large read) is given back, so that an idle connection does not hold its peak memory.
const KEEP_BUFFER: usize = 4 * 1024 * 1024;

fn push_line(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

/// Appends a finished request's reply (after the notifications it queued); a large one
/// starts streaming instead, and nothing else may be appended until it is out.
fn push_reply(
    out: &mut Vec<u8>,
    notes: &mut mpsc::Receiver<Vec<u8>>,
    reply: Option<Reply>,
    streaming: &mut Option<Streaming>,
) {
    // Notifications a request queued are older than its reply.
    while let Ok(note) = notes.try_recv() {
        push_line(out, &note);
    }
    if let Some(reply) = reply {
        *streaming = reply.encode_line(out, STREAM_FROM);
    }
}

/// Serves `server` on one byte stream until the input ends (or writing fails).
pub async fn serve_stream<R, W>(
    server: &Server,
    reader: R,
    mut writer: W,
    config: &StreamConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (notifier, mut notes) = Notifier::channel(config.notification_queue);
    let session = Arc::new(Session::new(notifier));
    let mut lines = LineReader::new(reader, config.max_line);
    let mut inflight: Pending = FuturesUnordered::new();
    // `out` collects encoded messages while `writing` is being written.
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut writing: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut written = 0usize;
    // A large reply being written a piece at a time: nothing else is appended meanwhile.
    let mut streaming: Option<Streaming> = None;
    let mut input_done = false;
    // Armed when the input ends.
    let grace = tokio::time::sleep(Duration::from_secs(u32::MAX.into()));
    tokio::pin!(grace);

    loop {
        // Room for more output: under the high-water mark, and no reply streaming.
        let output_room =
            |out: &Vec<u8>, writing: &Vec<u8>, written: usize, streaming: &Option<Streaming>| {
                streaming.is_none()
                    && out.len() + (writing.len() - written) < config.output_high_water
            };
        let room = |inflight: &Pending,
                    out: &Vec<u8>,
                    writing: &Vec<u8>,
                    written: usize,
                    streaming: &Option<Streaming>| {
            inflight.len() < config.max_in_flight && output_room(out, writing, written, streaming)
        };
        while !input_done && room(&inflight, &out, &writing, written, &streaming) {
            match lines.next_buffered() {
                Some(Frame::Line(bytes)) => match server.handle(&session, bytes) {
                    Handled::None => {}
                    Handled::Reply(r) => push_reply(&mut out, &mut notes, Some(r), &mut streaming),
                    Handled::Pending(f) => inflight.push(f),
                },
                Some(Frame::TooLong(prefix)) => {
                    tracing::warn!(limit = config.max_line, "discarded an over-long message");
                    let reply = server.oversized(&prefix, config.max_line);
                    push_reply(&mut out, &mut notes, Some(reply), &mut streaming);
                }
                None => {
                    if lines.is_eof() {
                        input_done = true;
                        // Subscription streams end with their completion result.
                        session.close_gracefully();
                        grace
                            .as_mut()
                            .reset(tokio::time::Instant::now() + config.shutdown_grace);
                    }
                    break;
                }
            }
        }
        // Collect what finished without waiting, while the output has room: a finished
        // reply left waiting holds its share of the content budget, so reads elsewhere
        // wait too, instead of piling encoded responses up here.
        while output_room(&out, &writing, written, &streaming) {
            let Some(Some(reply)) = inflight.next().now_or_never() else {
                break;
            };
            push_reply(&mut out, &mut notes, reply, &mut streaming);
        }
        // Notifications wait while the output is backed up: change notifications then
        // coalesce upstream instead of piling up here.
        while output_room(&out, &writing, written, &streaming) {
            let Ok(note) = notes.try_recv() else { break };
            push_line(&mut out, &note);
        }
        // The next piece of a streaming reply, escaped while the last one is being read.
        if let Some(s) = streaming.as_mut()
            && out.len() < PIECE
            && s.fill(&mut out, PIECE)
        {
            streaming = None;
        }
        if written == writing.len() && !out.is_empty() {
            std::mem::swap(&mut out, &mut writing);
            out.clear();
            written = 0;
        }
        if input_done && inflight.is_empty() && written == writing.len() && streaming.is_none() {
            break;
        }
        let can_read = !lines.is_eof() && room(&inflight, &out, &writing, written, &streaming);
        tokio::select! {
            biased;
            n = writer.write(&writing[written..]), if written < writing.len() => {
                match n? {
                    0 => return Err(io::ErrorKind::WriteZero.into()),
                    n => {
                        written += n;
                        crate::observe::sent(crate::observe::Transport::Pipe, n);
                    }
                }
                if written == writing.len() && writing.capacity() > KEEP_BUFFER {
                    // Give back the memory of a very large reply.
                    writing = Vec::with_capacity(64 * 1024);
                    written = 0;
                }
            }
            Some(reply) = inflight.next(), if !inflight.is_empty() && output_room(&out, &writing, written, &streaming) => {
                push_reply(&mut out, &mut notes, reply, &mut streaming);
            }
            Some(note) = notes.recv(), if output_room(&out, &writing, written, &streaming) => {
                push_line(&mut out, &note);
            }
            more = lines.fill(), if can_read => {
                more?;
            }
            () = &mut grace, if input_done && !inflight.is_empty() => {
                tracing::debug!(in_flight = inflight.len(), "input closed: cancelling what still runs");
                session.cancel_all();
                inflight = FuturesUnordered::new();
            }
        }
    }
    writer.flush().await
}
