//! Server-Sent Events: framing, and the replayable [`StreamLog`] behind every legacy
//! (2025) stream.
//!
//! A legacy session numbers its streams (0 is the standalone GET stream, then one per
//! POST answered with SSE) and each stream numbers its events, so the event id
//! `"{stream}-{seq}"` names one event of one stream of that session. `Last-Event-ID` is
//! resolved within the session that presents it, so a client can only ever resume its
//! own streams, and only the stream the id belongs to.
//!
//! Invariants:
//! - A log holds at most `max_events` events and about `max_bytes` bytes, and all logs
//!   together about the shared budget: the oldest go first, never a log's newest (a
//!   request's final response is always delivered or kept). A resumption that asks for
//!   events already dropped continues with the oldest kept one.
//! - At most one reader follows a log at a time; a resumption takes the log over from a
//!   reader whose connection has not been seen to drop yet.
//! - Pushing never blocks; readers wait on a [`Notify`] without missing a wake-up.
//! - Event numbers never overflow: a `Last-Event-ID` beyond [`MAX_SEQ`] is malformed, and
//!   numbers read back from a store saturate.
//! - With a [`SessionStore`], a log's events are also written there ([`Mirror`]), with
//!   the same bounds, so that another instance can resume the stream; a muted log (the
//!   standalone stream of a session another instance holds) takes no events.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::Stream;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::bus::{SessionStore, StoredEvent};
use crate::context::NotificationSink;

/// Where a log's events are also written: the session's shared replay log.
#[derive(Clone)]
pub(super) struct Mirror {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) session: Arc<str>,
}

/// One `data:` event without an id, as three chunks around `json` (not copied).
pub(super) fn frame_parts(json: Bytes) -> [Bytes; 3] {
    [
        Bytes::from_static(b"data: "),
        json,
        Bytes::from_static(b"\n\n"),
    ]
}

/// A comment line: keeps idle connections open through proxies; clients ignore it.
pub(super) const KEEP_ALIVE: &[u8] = b":\n\n";

/// Bytes held by all the logs of an endpoint, against a limit.
#[derive(Debug)]
pub(super) struct Budget {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            limit,
        })
    }

    fn over(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.limit
    }
}

/// Bounds of one [`StreamLog`].
#[derive(Debug, Clone)]
pub(super) struct LogLimits {
    pub(super) max_events: usize,
    pub(super) max_bytes: usize,
    pub(super) budget: Arc<Budget>,
}

/// The events of one stream, kept for replay.
pub(super) struct StreamLog {
    stream: u64,
    mirror: Option<Mirror>,
    /// Takes no events: another instance writes this stream.
    muted: AtomicBool,
    state: Mutex<LogState>,
    changed: Notify,
    attached: AtomicBool,
    /// Which reader may read: a take-over makes the previous one stop.
    generation: AtomicU64,
    /// The last event handed to the reader.
    read_to: AtomicU64,
    /// Signalled when the reader moves on or goes.
    room: Notify,
}

/// Events a reader may lag behind before deliveries that can wait (change
/// notifications) wait for it.
const ROOM: u64 = 64;

struct LogState {
    /// Frames, each with its sequence number.
    events: VecDeque<(u64, Bytes)>,
    bytes: usize,
    next_seq: u64,
    closed: bool,
    limits: LogLimits,
}

impl LogState {
    fn pop_oldest(&mut self) {
        if let Some((_, old)) = self.events.pop_front() {
            self.bytes -= old.len();
            self.limits
                .budget
                .used
                .fetch_sub(old.len(), Ordering::Relaxed);
        }
    }
}

impl Drop for StreamLog {
    fn drop(&mut self) {
        let st = lock(&self.state);
        st.limits.budget.used.fetch_sub(st.bytes, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl StreamLog {
    pub(super) fn new(stream: u64, limits: LogLimits, mirror: Option<Mirror>) -> Arc<StreamLog> {
        Arc::new(StreamLog {
            stream,
            mirror,
            muted: AtomicBool::new(false),
            state: Mutex::new(LogState {
                events: VecDeque::new(),
                bytes: 0,
                next_seq: 1,
                closed: false,
                limits,
            }),
            changed: Notify::new(),
            attached: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            read_to: AtomicU64::new(0),
            room: Notify::new(),
        })
    }

    /// The reader has been handed everything up to `seq`.
    fn delivered(&self, seq: u64) {
        self.read_to.store(seq, Ordering::Release);
        self.room.notify_waiters();
    }

    /// Whether an attached reader lags behind by more than [`ROOM`] events.
    fn lagging(&self) -> bool {
        self.attached.load(Ordering::Acquire)
            && self
                .last_seq()
                .saturating_sub(self.read_to.load(Ordering::Acquire))
                > ROOM
    }

    pub(super) fn stream(&self) -> u64 {
        self.stream
    }

    /// Appends one message as an event.
    pub(super) fn push_message(&self, json: &[u8]) {
        let mut st = lock(&self.state);
        if st.closed || self.muted.load(Ordering::Acquire) {
            return;
        }
        let seq = st.next_seq;
        st.next_seq = st.next_seq.saturating_add(1);
        let mut b = BytesMut::with_capacity(json.len() + 32);
        b.put_slice(format!("id: {}-{seq}\ndata: ", self.stream).as_bytes());
        b.put_slice(json);
        b.put_slice(b"\n\n");
        let frame = b.freeze();
        st.bytes += frame.len();
        st.limits
            .budget
            .used
            .fetch_add(frame.len(), Ordering::Relaxed);
        st.events.push_back((seq, frame.clone()));
        while st.events.len() > 1
            && (st.events.len() > st.limits.max_events
                || st.bytes > st.limits.max_bytes
                || st.limits.budget.over())
        {
            st.pop_oldest();
        }
        if let Some(m) = &self.mirror {
            m.store.append(StoredEvent {
                session: m.session.to_string(),
                stream: self.stream,
                seq,
                frame,
                oldest: st.events.front().map_or(seq, |(s, _)| *s),
            });
        }
        drop(st);
        self.changed.notify_waiters();
    }

    /// No event follows; readers end after the last one.
    pub(super) fn close(&self) {
        let mut st = lock(&self.state);
        let newly = !std::mem::replace(&mut st.closed, true);
        let last = st.next_seq.saturating_sub(1);
        drop(st);
        if let (true, Some(m)) = (newly && self.stream != 0, &self.mirror) {
            m.store.end_stream(&m.session, self.stream, last);
        }
        self.changed.notify_waiters();
    }

    /// Stops or resumes taking events (another instance holds the stream, or this one
    /// again).
    pub(super) fn mute(&self, muted: bool) {
        self.muted.store(muted, Ordering::Release);
    }

    pub(super) fn is_muted(&self) -> bool {
        self.muted.load(Ordering::Acquire)
    }

    /// Replaces the kept events with `events` (read back from the store) and continues
    /// numbering after `last`, so that event ids stay unique across instances.
    pub(super) fn seed(&self, events: Vec<(u64, Bytes)>, last: u64) {
        let mut st = lock(&self.state);
        while !st.events.is_empty() {
            st.pop_oldest();
        }
        st.next_seq = st.next_seq.max(last.saturating_add(1));
        drop(st);
        self.extend(events);
    }

    /// Appends events another instance framed and numbered (those not newer than the
    /// last one kept are skipped).
    pub(super) fn extend(&self, events: Vec<(u64, Bytes)>) {
        if events.is_empty() {
            return;
        }
        let mut st = lock(&self.state);
        for (seq, frame) in events {
            if seq < st.next_seq && st.events.back().is_some_and(|(s, _)| *s >= seq) {
                continue;
            }
            st.next_seq = st.next_seq.max(seq.saturating_add(1));
            st.bytes += frame.len();
            st.limits
                .budget
                .used
                .fetch_add(frame.len(), Ordering::Relaxed);
            st.events.push_back((seq, frame));
        }
        while st.events.len() > 1
            && (st.events.len() > st.limits.max_events
                || st.bytes > st.limits.max_bytes
                || st.limits.budget.over())
        {
            st.pop_oldest();
        }
        drop(st);
        self.changed.notify_waiters();
    }

    /// Stops the attached reader, if any (the client now reads elsewhere).
    pub(super) fn detach(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.attached.store(false, Ordering::Release);
        self.changed.notify_waiters();
        self.room.notify_waiters();
    }

    pub(super) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// The sequence number of the last event pushed (0 if none).
    pub(super) fn last_seq(&self) -> u64 {
        lock(&self.state).next_seq.saturating_sub(1)
    }

    /// How much of a stored stream a copy of this log keeps.
    pub(super) fn keep(&self) -> crate::bus::Keep {
        let st = lock(&self.state);
        crate::bus::Keep {
            events: st.limits.max_events,
            bytes: st.limits.max_bytes,
        }
    }

    pub(super) fn is_attached(&self) -> bool {
        self.attached.load(Ordering::Acquire)
    }

    /// Attaches the one reader; `None` if another is attached.
    pub(super) fn attach(self: &Arc<Self>) -> Option<Attached> {
        self.attached
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            .then(|| self.reader())
    }

    /// Attaches a reader, stopping the one attached if any (a client resuming knows its
    /// previous connection is gone even when the server has not noticed yet).
    pub(super) fn take_over(self: &Arc<Self>) -> Attached {
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

    /// Events after `after`, concatenated; and whether the log is closed.
    fn take_after(&self, after: u64) -> (Option<(u64, Bytes)>, bool) {
        let st = lock(&self.state);
        let mut pending = st.events.iter().filter(|(s, _)| *s > after).peekable();
        let out = match pending.peek() {
            None => None,
            Some(_) => {
                let mut buf = BytesMut::new();
                let mut last = after;
                for (s, f) in pending {
                    buf.put_slice(f);
                    last = *s;
                }
                Some((last, buf.freeze()))
            }
        };
        (out, st.closed)
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
    fn ready(&self) -> crate::BoxFuture<'_, ()> {
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
pub(super) struct Attached {
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
pub(super) struct Follow {
    /// Deliver events after this sequence number.
    pub(super) after: u64,
    /// Send `id: {stream}-{after}` with empty data first, so that the client can resume
    /// from the start (2025-11-25 clients expect this).
    pub(super) prime: bool,
    pub(super) keep_alive: Duration,
    /// Ends the stream (the session ended).
    pub(super) stop: CancellationToken,
    /// Also ends the stream (the server is shutting down), for streams that carry no
    /// request in flight.
    pub(super) shutdown: Option<CancellationToken>,
}

/// The body of an SSE response that follows `log` from `follow.after`.
pub(super) fn follow(
    reader: Attached,
    follow: Follow,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    let prime = follow.prime.then(|| {
        Bytes::from(format!(
            "id: {}-{}\ndata: \n\n",
            reader.log.stream, follow.after
        ))
    });
    reader.log.delivered(follow.after);
    let shutdown = follow.shutdown.unwrap_or_default();
    let state = (
        reader,
        follow.after,
        prime,
        follow.keep_alive,
        (follow.stop, shutdown),
    );
    futures_util::stream::unfold(Some(state), |state| async move {
        let (reader, mut cursor, mut prime, keep_alive, stop) = state?;
        if let Some(p) = prime.take() {
            return Some((Ok(p), Some((reader, cursor, None, keep_alive, stop))));
        }
        loop {
            let log = Arc::clone(&reader.log);
            let notified = log.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !log.is_current(reader.generation) {
                // Taken over by a resumption.
                return None;
            }
            let (chunk, closed) = log.take_after(cursor);
            if let Some((last, bytes)) = chunk {
                cursor = last;
                log.delivered(last);
                return Some((Ok(bytes), Some((reader, cursor, None, keep_alive, stop))));
            }
            if closed {
                return None;
            }
            tokio::select! {
                () = &mut notified => {}
                () = stop.0.cancelled() => return None,
                () = stop.1.cancelled() => return None,
                () = tokio::time::sleep(keep_alive) => {
                    return Some((
                        Ok(Bytes::from_static(KEEP_ALIVE)),
                        Some((reader, cursor, None, keep_alive, stop)),
                    ));
                }
            }
        }
    })
}

/// The largest event number a `Last-Event-ID` may name (2^53: what every client can
/// hold as a number); beyond, it is malformed rather than numbered past.
pub(super) const MAX_SEQ: u64 = 1 << 53;

/// Parses a `Last-Event-ID` of the form `{stream}-{seq}`.
pub(super) fn parse_event_id(v: &str) -> Option<(u64, u64)> {
    let (s, q) = v.trim().split_once('-')?;
    let (stream, seq) = (s.parse().ok()?, q.parse().ok()?);
    (seq <= MAX_SEQ).then_some((stream, seq))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;

    fn limits() -> LogLimits {
        LogLimits {
            max_events: 3,
            max_bytes: 1 << 20,
            budget: Budget::new(1 << 20),
        }
    }

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

    #[test]
    fn all_logs_together_stay_within_the_budget() {
        let budget = Budget::new(100);
        let limits = LogLimits {
            max_events: 1000,
            max_bytes: 1 << 20,
            budget: Arc::clone(&budget),
        };
        let logs: Vec<_> = (0..4)
            .map(|i| StreamLog::new(i, limits.clone(), None))
            .collect();
        for _ in 0..20 {
            for log in &logs {
                log.push_message(b"0123456789");
            }
        }
        // Each log keeps at least its newest event; beyond that, the budget holds.
        let frame = "id: 0-20\ndata: 0123456789\n\n".len();
        assert!(budget.used.load(Ordering::Relaxed) <= 100 + 4 * frame);
        drop(logs);
        assert_eq!(budget.used.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn event_ids_parse() {
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id("3"), None);
        assert_eq!(parse_event_id("0-9007199254740992"), Some((0, MAX_SEQ)));
        assert_eq!(parse_event_id("0-9007199254740993"), None);
        assert_eq!(parse_event_id("0-18446744073709551615"), None);
    }

    #[test]
    fn numbers_at_the_top_saturate_instead_of_overflowing() {
        let log = StreamLog::new(0, limits(), None);
        log.seed(Vec::new(), u64::MAX);
        log.extend(vec![(u64::MAX, Bytes::from_static(b"x"))]);
        log.push_message(b"y");
        log.push_message(b"z");
        assert_eq!(log.last_seq(), u64::MAX - 1);
        log.close();
    }

    #[test]
    fn events_from_another_instance_stay_within_the_shared_budget() {
        let budget = Budget::new(100);
        let limits = LogLimits {
            max_events: 1000,
            max_bytes: 1 << 20,
            budget: Arc::clone(&budget),
        };
        let log = StreamLog::new(1, limits, None);
        log.extend(
            (1..=50)
                .map(|s| (s, Bytes::from(format!("id: 1-{s}\ndata: 0123456789\n\n"))))
                .collect(),
        );
        let frame = "id: 1-50\ndata: 0123456789\n\n".len();
        assert!(budget.used.load(Ordering::Relaxed) <= 100 + frame);
        assert_eq!(log.last_seq(), 50);
    }
}
