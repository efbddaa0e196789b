//! [`StreamLog`]: the events of one legacy stream, kept for `Last-Event-ID` replay.
//!
//! Invariants:
//! - A log holds at most `max_events` events and about `max_bytes` bytes, and all logs
//!   together about the shared budget: the oldest go first, never a log's newest (a
//!   request's final response is always delivered or kept). A resumption that asks for
//!   events already dropped continues with the oldest kept one.
//! - At most one event is *open* (being written a piece at a time): the newest, never
//!   dropped while it is written. A POST stream has one writer, its request's task, and
//!   only it writes a reply a piece at a time; stream 0 takes whole notifications only.
//! - Replay keeps whole messages: a large reply is escaped into its event a piece at a
//!   time and the event keeps every piece, so a resumption replays it whole and
//!   byte-identical. The live reader sends each piece as it is written, and the next
//!   piece is escaped only once the reader has been handed the last one (or no reader
//!   follows): the escaping goes as the body drains, as over stdio. The reply's share of
//!   the budget of content in flight is held until its event is whole and handed to the
//!   reader (or no reader follows); from then on the replay bounds hold the bytes.
//! - Pushing never blocks (a reply waits between its pieces, never under a lock);
//!   readers and the writer wait on a [`Notify`] without missing a wake-up.
//! - With a [`Mirror`], each event is also written to the store once whole, with the same
//!   bounds, so that another instance can resume the stream; a muted log (the standalone
//!   stream of a session another instance holds) takes no events.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::{BufMut, Bytes, BytesMut};
use tokio::sync::Notify;

use rsrc_protocol::http::sse::END;

use super::frame::numbered;
use super::mirror::Mirror;
use rsrc::server::{Framed, Reply};
use rsrc::transport::{PIECE, STREAM_FROM};

/// Bytes held by all the logs of an endpoint, against a limit.
#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) used: AtomicUsize,
    limit: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Arc<Budget> {
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
pub(crate) struct LogLimits {
    pub(crate) max_events: usize,
    pub(crate) max_bytes: usize,
    pub(crate) budget: Arc<Budget>,
}

/// The events of one stream, kept for replay.
pub(crate) struct StreamLog {
    pub(crate) stream: u64,
    mirror: Option<Mirror>,
    /// Takes no events: another instance writes this stream.
    muted: AtomicBool,
    state: Mutex<LogState>,
    /// Signalled when an event or a piece is added, and when the log closes.
    pub(crate) changed: Notify,
    pub(crate) attached: AtomicBool,
    /// Which reader may read: a take-over makes the previous one stop.
    pub(crate) generation: AtomicU64,
    /// Signalled when the reader moves on or goes, and when the log closes.
    pub(crate) room: Notify,
}

/// One event: its frame, in the pieces it was written in (one, unless it is a large reply
/// written a piece at a time).
struct Event {
    seq: u64,
    pieces: Vec<Bytes>,
    /// More pieces follow.
    open: bool,
}

impl Event {
    fn len(&self) -> usize {
        self.pieces.iter().map(Bytes::len).sum()
    }
}

struct LogState {
    events: VecDeque<Event>,
    bytes: usize,
    next_seq: u64,
    closed: bool,
    limits: LogLimits,
    /// What the attached reader has been handed.
    read: Cursor,
}

impl LogState {
    fn counted(&mut self, bytes: usize) {
        self.bytes += bytes;
        self.limits.budget.used.fetch_add(bytes, Ordering::Relaxed);
    }

    fn pop_oldest(&mut self) {
        if let Some(old) = self.events.pop_front() {
            let len = old.len();
            self.bytes -= len;
            self.limits.budget.used.fetch_sub(len, Ordering::Relaxed);
        }
    }

    /// Drops the oldest events beyond the bounds, never the newest.
    fn trim(&mut self) {
        while self.events.len() > 1
            && (self.events.len() > self.limits.max_events
                || self.bytes > self.limits.max_bytes
                || self.limits.budget.over())
        {
            self.pop_oldest();
        }
    }

    fn oldest(&self) -> Option<u64> {
        self.events.front().map(|e| e.seq)
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

/// How far a reader has read a log.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cursor {
    /// Every event up to this number is out.
    pub(crate) after: u64,
    /// Of the open event that follows, if it has begun to go out: its number and how
    /// many of its pieces are out.
    pub(crate) within: Option<(u64, usize)>,
}

/// What a reader takes from a log at its cursor.
pub(crate) struct Taken {
    /// The bytes to send, in order.
    pub(crate) chunks: Vec<Bytes>,
    pub(crate) cursor: Cursor,
    /// No event follows.
    pub(crate) closed: bool,
}

impl StreamLog {
    pub(crate) fn new(stream: u64, limits: LogLimits, mirror: Option<Mirror>) -> Arc<StreamLog> {
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
                read: Cursor::default(),
            }),
            changed: Notify::new(),
            attached: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            room: Notify::new(),
        })
    }

    pub(crate) fn stream(&self) -> u64 {
        self.stream
    }

    /// Appends one message as an event.
    pub(crate) fn push_message(&self, json: &[u8]) {
        let mut st = lock(&self.state);
        let Some(seq) = self.begin(&mut st) else {
            return;
        };
        let head = numbered(self.stream, seq);
        let mut frame = BytesMut::with_capacity(head.len() + json.len() + END.len());
        frame.put_slice(head.as_bytes());
        frame.put_slice(json);
        frame.put_slice(END);
        self.write(&mut st, seq, frame.freeze(), true);
        drop(st);
        self.changed.notify_waiters();
    }

    /// Appends a reply as an event: whole, or, holding a large text, a piece at a time,
    /// each piece readable as soon as it is written and the next one escaped once the
    /// reader has been handed it (or at once when no reader follows). Returns once the
    /// event is whole and handed to the reader, or the log closed meanwhile.
    pub(crate) async fn push_reply(&self, reply: Reply) {
        let Some(seq) = self.begin(&mut lock(&self.state)) else {
            return;
        };
        let head = numbered(self.stream, seq);
        let mut streaming = match reply.into_framed(head.as_bytes(), END, STREAM_FROM) {
            // Whole: what the reply held is given back now; the replay bounds hold it.
            Framed::Whole(frame, _hold) => {
                self.add(seq, frame.into(), true);
                return;
            }
            Framed::Streaming(streaming) => streaming,
        };
        let mut written = 0;
        loop {
            let (piece, last) = streaming.next_piece(PIECE);
            if !self.add(seq, piece.into(), last) {
                return;
            }
            written += 1;
            self.handed(seq, written).await;
            if last {
                // What the reply held of the content budget goes with `streaming`.
                return;
            }
        }
    }

    /// Adds `piece` to the open event `seq` and wakes the reader; false if the log
    /// takes no more of it (closed meanwhile).
    fn add(&self, seq: u64, piece: Bytes, last: bool) -> bool {
        let added = self.write(&mut lock(&self.state), seq, piece, last);
        self.changed.notify_waiters();
        added
    }

    /// Waits until the reader has been handed the first `written` pieces of event `seq`,
    /// or no reader follows the log, or it is closed.
    async fn handed(&self, seq: u64, written: usize) {
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if !self.attached.load(Ordering::Acquire) {
                return;
            }
            {
                let st = lock(&self.state);
                let read = st.read;
                if st.closed
                    || read.after >= seq
                    || read.within.is_some_and(|(s, n)| s == seq && n >= written)
                {
                    return;
                }
            }
            room.await;
        }
    }

    /// Opens a new, empty, event; its number, or `None` if the log takes no events.
    fn begin(&self, st: &mut LogState) -> Option<u64> {
        if st.closed || self.muted.load(Ordering::Acquire) {
            return None;
        }
        let seq = st.next_seq;
        st.next_seq = st.next_seq.saturating_add(1);
        st.events.push_back(Event {
            seq,
            pieces: Vec::new(),
            open: true,
        });
        st.trim();
        Some(seq)
    }

    /// Adds `piece` to the open event `seq`, whole once `last` (then mirrored); false if
    /// the log takes no more of it (closed meanwhile).
    fn write(&self, st: &mut LogState, seq: u64, piece: Bytes, last: bool) -> bool {
        if st.closed {
            return false;
        }
        let len = piece.len();
        let Some(event) = st.events.iter_mut().rev().find(|e| e.seq == seq && e.open) else {
            return false;
        };
        event.pieces.push(piece);
        event.open = !last;
        st.counted(len);
        st.trim();
        if let (true, Some(m)) = (last, &self.mirror) {
            let oldest = st.oldest().unwrap_or(seq);
            if let Some(event) = st.events.iter().rev().find(|e| e.seq == seq) {
                m.event(self.stream, seq, &event.pieces, oldest);
            }
        }
        true
    }

    /// The reader has been handed everything up to `cursor`.
    pub(crate) fn delivered(&self, cursor: Cursor) {
        lock(&self.state).read = cursor;
        self.room.notify_waiters();
    }

    /// How many events the reader is behind the newest.
    pub(crate) fn behind(&self) -> u64 {
        let st = lock(&self.state);
        st.next_seq.saturating_sub(1).saturating_sub(st.read.after)
    }

    /// No event follows; readers end after the last one.
    pub(crate) fn close(&self) {
        let mut st = lock(&self.state);
        let newly = !std::mem::replace(&mut st.closed, true);
        let last = st.next_seq.saturating_sub(1);
        drop(st);
        if let (true, Some(m)) = (newly, &self.mirror) {
            m.end(self.stream, last);
        }
        self.changed.notify_waiters();
        self.room.notify_waiters();
    }

    /// Stops or resumes taking events (another instance holds the stream, or this one
    /// again).
    pub(crate) fn mute(&self, muted: bool) {
        self.muted.store(muted, Ordering::Release);
    }

    pub(crate) fn is_muted(&self) -> bool {
        self.muted.load(Ordering::Acquire)
    }

    /// Replaces the kept events with `events` (read back from the store) and continues
    /// numbering after `last`, so that event ids stay unique across instances.
    pub(crate) fn seed(&self, events: Vec<(u64, Bytes)>, last: u64) {
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
    pub(crate) fn extend(&self, events: Vec<(u64, Bytes)>) {
        if events.is_empty() {
            return;
        }
        let mut st = lock(&self.state);
        for (seq, frame) in events {
            if seq < st.next_seq && st.events.back().is_some_and(|e| e.seq >= seq) {
                continue;
            }
            st.next_seq = st.next_seq.max(seq.saturating_add(1));
            st.counted(frame.len());
            st.events.push_back(Event {
                seq,
                pieces: vec![frame],
                open: false,
            });
        }
        st.trim();
        drop(st);
        self.changed.notify_waiters();
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// The sequence number of the last event begun (0 if none).
    pub(crate) fn last_seq(&self) -> u64 {
        lock(&self.state).next_seq.saturating_sub(1)
    }

    /// How much of a stored stream a copy of this log keeps.
    pub(crate) fn keep(&self) -> rsrc::sessions::Keep {
        let st = lock(&self.state);
        rsrc::sessions::Keep {
            events: st.limits.max_events,
            bytes: st.limits.max_bytes,
        }
    }

    /// What follows `cursor`: the rest of the events after it, up to and including the
    /// pieces of an open event written so far; `None` if the event the reader was in the
    /// middle of is gone (its client can only resume).
    pub(crate) fn take(&self, cursor: Cursor) -> Option<Taken> {
        let st = lock(&self.state);
        let mut taken = Taken {
            chunks: Vec::new(),
            cursor,
            closed: st.closed,
        };
        for event in st.events.iter().filter(|e| e.seq > cursor.after) {
            let out = match taken.cursor.within {
                Some((seq, out)) if seq == event.seq => out,
                Some(_) => return None,
                None => 0,
            };
            taken.chunks.extend(event.pieces.iter().skip(out).cloned());
            if event.open {
                // Nothing after an open event is read before it is whole.
                taken.cursor.within = Some((event.seq, event.pieces.len()));
                break;
            }
            taken.cursor = Cursor {
                after: event.seq,
                within: None,
            };
        }
        Some(taken)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn limits() -> LogLimits {
        LogLimits {
            max_events: 3,
            max_bytes: 1 << 20,
            budget: Budget::new(1 << 20),
        }
    }

    /// A server whose one resource, `t:///a`, is the text `text`.
    pub(crate) fn text_server(text: &str) -> rsrc::Server {
        use rsrc_protocol::Resource;
        rsrc::Server::builder("t", "0")
            .mount(
                "t:",
                rsrc::ResourceSet::new().with_text(Resource::new("t:///a", "a"), text.to_owned()),
            )
            .build()
            .unwrap()
    }

    /// The engine's reply to reading `t:///a` (2026-07-28) as request `id`: a large one
    /// holds its share of `server`'s budget of content in flight until it is written.
    pub(crate) async fn read_reply(server: &rsrc::Server, id: i64) -> Reply {
        use rsrc::server::{Incoming, Outcome, Session};
        use rsrc_protocol::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
        let request = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
            "params": {"uri": "t:///a", "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28",
                CLIENT_CAPABILITIES_KEY: {}}}});
        let Incoming::Request(request) = server.prepare(request.to_string().as_bytes()) else {
            panic!("not a request");
        };
        let session = std::sync::Arc::new(Session::stateless(rsrc::Notifier::discard()));
        match server.run(&session, request, &rsrc::Notifier::discard()) {
            Outcome::Running(fut) => fut.await.expect("answered"),
            Outcome::Answered(reply) => reply,
            Outcome::Refused(refusal) => panic!("refused: {:?}", refusal.into_reply()),
        }
    }

    /// Opens an event to write a piece at a time.
    fn open(log: &StreamLog) -> u64 {
        log.begin(&mut lock(&log.state)).unwrap()
    }

    fn text(taken: &Taken) -> String {
        String::from_utf8(taken.chunks.concat()).unwrap()
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

    #[test]
    fn an_open_event_is_read_piece_by_piece_and_nothing_after_it_before_it_is_whole() {
        let log = StreamLog::new(5, limits(), None);
        log.push_message(b"1");
        let seq = open(&log);
        assert!(log.add(seq, Bytes::from_static(b"id: 5-2\ndata: {\"a\""), false));
        let taken = log.take(Cursor::default()).unwrap();
        assert_eq!(text(&taken), "id: 5-1\ndata: 1\n\nid: 5-2\ndata: {\"a\"");
        assert_eq!(
            taken.cursor,
            Cursor {
                after: 1,
                within: Some((2, 1))
            }
        );
        assert!(log.add(seq, Bytes::from_static(b":1}\n\n"), true));
        log.close();
        let rest = log.take(taken.cursor).unwrap();
        assert_eq!(text(&rest), ":1}\n\n");
        assert!(rest.closed);
        // A replay from the start gets the whole event.
        let replay = log.take(Cursor::default()).unwrap();
        assert_eq!(
            text(&replay),
            "id: 5-1\ndata: 1\n\nid: 5-2\ndata: {\"a\":1}\n\n"
        );
        assert!(!log.add(seq, Bytes::from_static(b"x"), true), "whole");
    }

    #[test]
    fn a_log_closed_while_an_event_is_written_takes_no_more_of_it() {
        let log = StreamLog::new(1, limits(), None);
        let seq = open(&log);
        assert!(log.add(seq, Bytes::from_static(b"id: 1-1\ndata: {"), false));
        log.close();
        assert!(!log.add(seq, Bytes::from_static(b"}\n\n"), true));
        let taken = log.take(Cursor::default()).unwrap();
        assert_eq!(taken.chunks.concat(), b"id: 1-1\ndata: {");
        assert!(
            taken.closed,
            "the reader ends: the event cannot be finished"
        );
        assert!(log.begin(&mut lock(&log.state)).is_none());
    }

    #[test]
    fn a_reader_whose_event_was_dropped_is_told_so() {
        let log = StreamLog::new(0, limits(), None);
        let seq = open(&log);
        log.add(seq, Bytes::from_static(b"id: 0-1\ndata: "), false);
        let half = log.take(Cursor::default()).unwrap().cursor;
        log.add(seq, Bytes::from_static(b"1\n\n"), true);
        for _ in 0..3 {
            log.push_message(b"later");
        }
        assert!(log.take(half).is_none());
    }

    #[tokio::test]
    async fn a_large_reply_is_kept_whole_and_its_share_of_the_budget_given_back() {
        let server = text_server(&"line \"quoted\"\n".repeat(STREAM_FROM / 8));
        let budget = server.budget();
        let mut whole = b"id: 2-1\ndata: ".to_vec();
        read_reply(&server, 9).await.encode(&mut whole);
        whole.extend_from_slice(END);
        assert_eq!(budget.available(), budget.limit());

        let reply = read_reply(&server, 9).await;
        assert!(
            budget.available() < budget.limit(),
            "a large reply holds its share"
        );
        let log = StreamLog::new(
            2,
            LogLimits {
                max_events: 8,
                max_bytes: 1024,
                budget: Budget::new(1024),
            },
            None,
        );
        log.push_reply(reply).await;
        assert_eq!(budget.available(), budget.limit(), "given back once whole");
        let taken = log.take(Cursor::default()).unwrap();
        assert!(taken.chunks.len() > 4, "{} pieces", taken.chunks.len());
        assert_eq!(taken.chunks.concat(), whole, "the newest is kept whole");
    }
}
