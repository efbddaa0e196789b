//! Reading a [`StreamLog`]: the one client that follows it, from a cursor, as the body of
//! an SSE response; and the room a reader leaves its writer.
//!
//! Invariants:
//! - At most one reader follows a log at a time; a resumption takes the log over from a
//!   reader whose connection has not been seen to drop yet, and the reader taken over
//!   from stops.
//! - A reader sends events whole and in order: the pieces of a large reply as they are
//!   written, and nothing else (no keep-alive comment) until its event is whole. If the
//!   event it is in the middle of is dropped, it stops (the client resumes).
//! - A reader tells its log what it has been handed ([`StreamLog::delivered`]) each time
//!   it takes more: that sets the pace of a large reply's escaping, and lets its writer
//!   give back the reply's share of the content budget once the last piece is taken.
//! - Events are sent without copying large ones: small events are joined into one write,
//!   a piece of a large reply goes out as it was written.
//! - A reader more than [`ROOM`] events behind makes deliveries that can wait (change
//!   notifications) wait, and coalesce meanwhile.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::Stream;
use tokio_util::sync::CancellationToken;

use rsrc::NotificationSink;
use rsrc_protocol::http::sse::KEEP_ALIVE;

use super::frame::primed;
use super::log::{Cursor, StreamLog};

/// Events a reader may lag behind before deliveries that can wait (change
/// notifications) wait for it.
const ROOM: u64 = 64;

/// Chunks smaller than this are joined into one write; larger ones go out as they are.
const JOIN: usize = 64 * 1024;

impl StreamLog {
    /// Whether an attached reader lags behind by more than [`ROOM`] events.
    fn lagging(&self) -> bool {
        self.attached.load(Ordering::Acquire) && self.behind() > ROOM
    }

    /// Stops the attached reader, if any (the client now reads elsewhere).
    pub(crate) fn detach(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.attached.store(false, Ordering::Release);
        self.changed.notify_waiters();
        self.room.notify_waiters();
    }

    pub(crate) fn is_attached(&self) -> bool {
        self.attached.load(Ordering::Acquire)
    }

    /// Attaches the one reader; `None` if another is attached.
    pub(crate) fn attach(self: &Arc<Self>) -> Option<Attached> {
        self.attached
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            .then(|| self.reader())
    }

    /// Attaches a reader, stopping the one attached if any (a client resuming knows its
    /// previous connection is gone even when the server has not noticed yet).
    pub(crate) fn take_over(self: &Arc<Self>) -> Attached {
        self.attached.store(true, Ordering::Release);
        let reader = self.reader();
        self.changed.notify_waiters();
        reader
    }

    fn reader(self: &Arc<Self>) -> Attached {
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        Attached {
            log: Arc::clone(self),
            generation,
        }
    }

    fn is_current(&self, generation: u64) -> bool {
        self.generation.load(Ordering::Acquire) == generation
    }
}

impl NotificationSink for StreamLog {
    fn push(&self, message: Vec<u8>) -> bool {
        self.push_message(&message);
        true
    }

    /// Room while no reader is attached (the log keeps what it can for a resumption) or
    /// while the reader keeps up; a reader more than [`ROOM`] events behind makes change
    /// deliveries wait, and coalesce meanwhile.
    fn ready(&self) -> rsrc::BoxFuture<'_, ()> {
        Box::pin(async move {
            loop {
                let room = self.room.notified();
                tokio::pin!(room);
                room.as_mut().enable();
                if !self.lagging() {
                    return;
                }
                room.await;
            }
        })
    }
}

/// The right to read a log; releases it when dropped, unless taken over since.
pub(crate) struct Attached {
    log: Arc<StreamLog>,
    generation: u64,
}

impl Drop for Attached {
    fn drop(&mut self) {
        if self.log.is_current(self.generation) {
            self.log.attached.store(false, Ordering::Release);
            self.log.room.notify_waiters();
        }
    }
}

/// How a reader starts and when it stops.
pub(crate) struct Follow {
    /// Deliver events after this sequence number.
    pub(crate) after: u64,
    /// Send `id: {stream}-{after}` with empty data first, so that the client can resume
    /// from the start (2025-11-25 clients expect this).
    pub(crate) prime: bool,
    pub(crate) keep_alive: Duration,
    /// Ends the stream (the session ended).
    pub(crate) stop: CancellationToken,
    /// Also ends the stream (the server is shutting down), for streams that carry no
    /// request in flight.
    pub(crate) shutdown: Option<CancellationToken>,
}

/// A reader's state between two chunks.
struct Following {
    reader: Attached,
    cursor: Cursor,
    /// Taken and not sent yet, oldest first.
    ready: VecDeque<Bytes>,
    keep_alive: Duration,
    stop: CancellationToken,
    shutdown: CancellationToken,
}

/// The body of an SSE response that follows `reader`'s log from `follow.after`.
pub(crate) fn follow(
    reader: Attached,
    follow: Follow,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    let log = Arc::clone(&reader.log);
    let mut ready = VecDeque::new();
    if follow.prime {
        ready.push_back(primed(log.stream, follow.after));
    }
    let cursor = Cursor {
        after: follow.after,
        within: None,
    };
    log.delivered(cursor);
    let state = Following {
        reader,
        cursor,
        ready,
        keep_alive: follow.keep_alive,
        stop: follow.stop,
        shutdown: follow.shutdown.unwrap_or_default(),
    };
    futures_util::stream::unfold(state, |mut f| async move {
        let chunk = f.next().await?;
        Some((Ok(chunk), f))
    })
}

impl Following {
    /// The next chunk to send; `None` once the stream ends.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                return Some(chunk);
            }
            let log = Arc::clone(&self.reader.log);
            let notified = log.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !log.is_current(self.reader.generation) {
                // Taken over by a resumption.
                return None;
            }
            // The event it was in the middle of is gone: the client resumes.
            let taken = log.take(self.cursor)?;
            self.cursor = taken.cursor;
            log.delivered(self.cursor);
            if !taken.chunks.is_empty() {
                batch(taken.chunks, &mut self.ready);
                continue;
            }
            if taken.closed {
                return None;
            }
            // No comment inside an event whose next piece is being escaped.
            let idle = self.cursor.within.is_none();
            tokio::select! {
                () = &mut notified => {}
                () = self.stop.cancelled() => return None,
                () = self.shutdown.cancelled() => return None,
                () = tokio::time::sleep(self.keep_alive), if idle => {
                    return Some(Bytes::from_static(KEEP_ALIVE));
                }
            }
        }
    }
}

/// Queues `chunks` as few writes: runs of small ones joined, large ones (the pieces of a
/// large reply) as they are.
fn batch(chunks: Vec<Bytes>, ready: &mut VecDeque<Bytes>) {
    if chunks.len() == 1 {
        ready.extend(chunks);
        return;
    }
    let mut joined = BytesMut::new();
    for chunk in chunks {
        if chunk.len() >= JOIN {
            if !joined.is_empty() {
                ready.push_back(joined.split().freeze());
            }
            ready.push_back(chunk);
        } else {
            joined.put_slice(&chunk);
            if joined.len() >= JOIN {
                ready.push_back(joined.split().freeze());
            }
        }
    }
    if !joined.is_empty() {
        ready.push_back(joined.freeze());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::log::tests::limits;
    use futures_util::StreamExt as _;

    fn opts(after: u64) -> Follow {
        Follow {
            after,
            prime: false,
            keep_alive: Duration::from_secs(60),
            stop: CancellationToken::new(),
            shutdown: None,
        }
    }

    #[tokio::test]
    async fn a_reader_gets_events_after_its_cursor_then_ends_on_close() {
        let log = StreamLog::new(4, limits(), None);
        log.push_message(b"{\"a\":1}");
        log.push_message(b"{\"a\":2}");
        log.close();
        let body: Vec<_> = follow(log.attach().unwrap(), opts(1))
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(body.concat(), b"id: 4-2\ndata: {\"a\":2}\n\n");
    }

    #[tokio::test]
    async fn the_oldest_events_go_first_and_one_reader_at_a_time() {
        let log = StreamLog::new(0, limits(), None);
        for i in 0..5 {
            log.push_message(format!("{i}").as_bytes());
        }
        let first = log.attach().unwrap();
        assert!(log.attach().is_none());
        log.close();
        let body: Vec<_> = follow(first, opts(0)).map(Result::unwrap).collect().await;
        let text = String::from_utf8(body.concat()).unwrap();
        assert!(text.starts_with("id: 0-3\n"), "{text}");
        assert!(text.contains("id: 0-5\n"));
        assert!(log.attach().is_some(), "the reader was released");
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_for_new_events() {
        let log = StreamLog::new(1, limits(), None);
        let mut body = Box::pin(follow(log.attach().unwrap(), opts(0)));
        let pusher = Arc::clone(&log);
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            pusher.push_message(b"x");
            pusher.close();
        });
        assert_eq!(
            &body.next().await.unwrap().unwrap()[..],
            b"id: 1-1\ndata: x\n\n"
        );
        assert!(body.next().await.is_none());
    }

    #[tokio::test]
    async fn a_resumption_takes_the_log_over_from_a_stale_reader() {
        let log = StreamLog::new(2, limits(), None);
        let mut stale = Box::pin(follow(log.attach().unwrap(), opts(0)));
        let mut fresh = Box::pin(follow(log.take_over(), opts(0)));
        log.push_message(b"x");
        assert!(stale.next().await.is_none(), "the stale reader stops");
        assert_eq!(
            &fresh.next().await.unwrap().unwrap()[..],
            b"id: 2-1\ndata: x\n\n"
        );
        drop(stale);
        assert!(log.attach().is_none(), "the fresh reader still holds it");
    }

    #[tokio::test]
    async fn a_large_reply_is_escaped_as_its_reader_takes_it_and_kept_whole() {
        use crate::sse::log::tests::{read_reply, text_server};
        use rsrc::transport::{PIECE, STREAM_FROM};
        let server = text_server(&"line \"quoted\"\n".repeat(4 * STREAM_FROM / 15));
        let content = server.budget();
        let mut whole = b"id: 6-1\ndata: ".to_vec();
        read_reply(&server, 3).await.encode(&mut whole);
        whole.extend_from_slice(b"\n\n");
        let pieces = whole.len().div_ceil(PIECE);
        assert!(pieces > 8, "{pieces}");

        let reply = read_reply(&server, 3).await;
        let held = content.limit() - content.available();
        assert!(held > 0, "a large reply holds its share of the budget");
        let log = StreamLog::new(6, limits(), None);
        let mut body = Box::pin(follow(log.attach().unwrap(), opts(0)));
        let writer = Arc::clone(&log);
        let written = tokio::spawn(async move { writer.push_reply(reply).await });
        let written_so_far = |log: &StreamLog| log.take(Cursor::default()).unwrap().chunks.len();
        let mut sent = Vec::new();
        let mut chunks = 0;
        while sent.len() < whole.len() {
            sent.extend_from_slice(&body.next().await.unwrap().unwrap());
            chunks += 1;
            // The writer may run as it likes meanwhile (one thread: it runs only here)...
            for _ in 0..64 {
                tokio::task::yield_now().await;
            }
            // ...and escapes a piece only once the reader took the one before.
            assert!(written_so_far(&log) <= chunks + 1, "ahead of the reader");
            if sent.len() < whole.len() {
                assert_eq!(
                    content.limit() - content.available(),
                    held,
                    "held until the last piece is taken"
                );
            }
        }
        written.await.unwrap();
        assert_eq!(sent, whole);
        assert_eq!(content.available(), content.limit());
        // Kept whole, for a resumption.
        assert_eq!(log.take(Cursor::default()).unwrap().chunks.concat(), whole);
    }

    #[test]
    fn small_chunks_are_joined_and_large_ones_pass_as_they_are() {
        let large = Bytes::from(vec![b'x'; JOIN]);
        let mut ready = VecDeque::new();
        batch(
            vec![
                Bytes::from_static(b"a"),
                Bytes::from_static(b"b"),
                large.clone(),
                Bytes::from_static(b"c"),
            ],
            &mut ready,
        );
        assert_eq!(ready.len(), 3);
        assert_eq!(&ready[0][..], b"ab");
        assert_eq!(ready[1].as_ptr(), large.as_ptr(), "not copied");
        assert_eq!(&ready[2][..], b"c");
    }
}
