//! The replay logs of shared sessions: one Redis Stream per SSE stream, written by one
//! task in the order entries were queued, and read back with their holes seen.
//!
//! Invariants:
//! - The queue is bounded: an event that does not fit is kept by its writer only (the
//!   stored stream then has a hole, which readers see); an end that does not fit waits
//!   among at most [`MAX_PENDING_ENDS`] and is written once the queue is empty, so a
//!   stream's end follows its events.
//! - Entries that find Redis away are dropped, except ends, which are tried again.
//! - An instance refused stream 0 of a session (another holds it) has its copy reloaded.
//! - A stream read back keeps only its newest events within the reader's bounds, and is
//!   broken if its entries are not consecutive from the position (or the writer's trim
//!   point) to the last, if its end marker names another last event, or if it ended
//!   after the position with nothing read.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::Script;
use redis::aio::MultiplexedConnection;
use tokio::sync::{Notify, mpsc};

use super::scripts::LOG;
use super::{Entries, RedisSessions, seq_of};
use crate::bus::redis::{BusState, connect};
use crate::bus::{Keep, StoreError, StoredEvent, StreamTail};

/// Log entries waiting to be written.
pub(super) const LOG_QUEUE: usize = 8192;
/// Log entries written per round trip.
const LOG_BATCH: usize = 256;
/// Stream entries read per round trip.
const PAGE: usize = 4096;
/// Most pages read for one stream (a stream is bounded by its writer's settings; this
/// only bounds the work should it not be).
const MAX_PAGES: usize = 4096;
/// Ends of streams kept to be written later: those that did not fit in the queue, and
/// those that found Redis away.
const MAX_PENDING_ENDS: usize = 1024;

#[derive(Default)]
pub(super) struct PendingEnds {
    ends: Mutex<VecDeque<Entry>>,
    added: Notify,
}

impl PendingEnds {
    pub(super) fn push(&self, entry: Entry) -> bool {
        let mut ends = self.ends.lock().unwrap_or_else(PoisonError::into_inner);
        if ends.len() >= MAX_PENDING_ENDS {
            return false;
        }
        ends.push_back(entry);
        drop(ends);
        self.added.notify_one();
        true
    }

    fn take(&self) -> Vec<Entry> {
        self.ends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect()
    }
}

pub(super) enum Entry {
    Event(StoredEvent),
    End {
        session: String,
        stream: u64,
        last: u64,
    },
}

impl Entry {
    fn session(&self) -> &str {
        match self {
            Entry::Event(e) => &e.session,
            Entry::End { session, .. } => session,
        }
    }
}

impl RedisSessions {
    /// Stream `stream` of session `id` after event `after`, for
    /// [`SessionStore::read`](crate::bus::SessionStore::read).
    pub(super) async fn read_log(
        &self,
        id: &str,
        stream: u64,
        after: u64,
        keep: Keep,
    ) -> Result<StreamTail, StoreError> {
        let key = self.key(id);
        let log = format!("{key}:s{stream}");
        let (first, top, writer): (Entries, Entries, Option<String>) = self
            .with(async |c| {
                redis::pipe()
                    .cmd("XRANGE")
                    .arg(&log)
                    .arg(format!("({after}-1"))
                    .arg("+")
                    .arg("COUNT")
                    .arg(PAGE)
                    .cmd("XREVRANGE")
                    .arg(&log)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(1)
                    .hget(&key, format!("w{stream}"))
                    .query_async(c)
                    .await
            })
            .await?;
        let mut reader = TailReader::new(after, keep);
        let mut page = first;
        for _ in 0..MAX_PAGES {
            let full = page.len() >= PAGE;
            let Some(last_id) = page.last().map(|(id, _)| id.clone()) else {
                break;
            };
            reader.take(page);
            if !full {
                break;
            }
            page = self
                .with(async |c| {
                    redis::cmd("XRANGE")
                        .arg(&log)
                        .arg(format!("({last_id}"))
                        .arg("+")
                        .arg("COUNT")
                        .arg(PAGE)
                        .query_async(c)
                        .await
                })
                .await?;
        }
        // The end, even when the position is past it (a client naming an event the
        // stream never had).
        let end = top
            .first()
            .and_then(|(id, _)| seq_of(id))
            .filter(|(_, n)| *n == 1)
            .map(|(last, _)| last);
        let writer_alive = match &writer {
            None => stream == 0,
            Some(w) => {
                let lease = format!("{}:lease:instance:{w}", self.shared.options.namespace);
                self.with(async |c| {
                    redis::cmd("EXISTS")
                        .arg(&lease)
                        .query_async::<bool>(c)
                        .await
                })
                .await?
            }
        };
        Ok(reader.finish(end, stream == 0 || writer.is_some(), writer_alive))
    }
}

/// Reads a stream's entries page by page: keeps the newest within the bounds, and sees
/// holes.
struct TailReader {
    after: u64,
    keep: Keep,
    events: VecDeque<(u64, Bytes)>,
    bytes: usize,
    /// The first event read, and the last.
    first: Option<u64>,
    last: Option<u64>,
    /// The oldest event the writer kept, as of the newest event.
    trimmed_to: u64,
    hole: bool,
}

impl TailReader {
    fn new(after: u64, keep: Keep) -> Self {
        TailReader {
            after,
            keep,
            events: VecDeque::new(),
            bytes: 0,
            first: None,
            last: None,
            trimmed_to: 0,
            hole: false,
        }
    }

    fn take(&mut self, page: Entries) {
        for (entry, mut fields) in page {
            let Some((seq, 0)) = seq_of(&entry) else {
                continue;
            };
            let Some(frame) = fields.remove("f") else {
                continue;
            };
            if let Some(prev) = self.last
                && seq != prev.saturating_add(1)
            {
                self.hole = true;
            }
            self.first.get_or_insert(seq);
            self.last = Some(seq);
            self.trimmed_to = fields
                .get("o")
                .and_then(|o| std::str::from_utf8(o).ok()?.parse().ok())
                .unwrap_or(0);
            self.bytes += frame.len();
            self.events.push_back((seq, Bytes::from(frame)));
            while self.events.len() > 1
                && (self.events.len() > self.keep.events.max(1) || self.bytes > self.keep.bytes)
            {
                if let Some((_, old)) = self.events.pop_front() {
                    self.bytes -= old.len();
                }
            }
        }
    }

    /// `end`: the stream's end marker (its last event), if it has one.
    fn finish(self, end: Option<u64>, writer_known: bool, writer_alive: bool) -> StreamTail {
        let next = self.after.saturating_add(1);
        let mut broken = self.hole;
        match (self.first, self.last) {
            // Entries present are those from the writer's trim point on: the first after
            // the position is the next one, or the oldest kept.
            (Some(first), Some(last)) => {
                broken |= first != next.max(self.trimmed_to);
                broken |= end.is_some_and(|e| e != last);
            }
            // No event after the position, though the stream ended after it.
            _ => broken |= end.is_some_and(|e| e > self.after),
        }
        let known = writer_known || end.is_some() || self.first.is_some();
        StreamTail {
            events: self.events.into(),
            ended: end.is_some(),
            known,
            writer_alive,
            broken,
        }
    }
}

/// Writes queued log entries, in order, pipelined. Entries that find Redis away are kept
/// only by the instance that wrote them (the stored stream then has a hole), except
/// ends, which are tried again; an instance refused stream 0 of a session (another holds
/// it) has its copy reloaded.
pub(super) async fn write_logs(
    shared: Weak<BusState>,
    mut rx: mpsc::Receiver<Entry>,
    ttl: u64,
    pending: Arc<PendingEnds>,
) {
    let log = Script::new(LOG);
    let mut conn: Option<MultiplexedConnection> = None;
    let mut batch: Vec<Entry> = Vec::with_capacity(LOG_BATCH);
    // Ends that found Redis away.
    let mut retry: Vec<Entry> = Vec::new();
    let mut warned = false;
    loop {
        if batch.is_empty() {
            let waiting = !retry.is_empty();
            tokio::select! {
                n = rx.recv_many(&mut batch, LOG_BATCH) => if n == 0 { return },
                () = pending.added.notified() => {}
                () = tokio::time::sleep(Duration::from_secs(1)), if waiting => {}
            }
        }
        let Some(s) = shared.upgrade() else { return };
        // Ends tried again first (their streams have nothing after them), then what was
        // queued, then the ends that did not fit in the queue once it is empty.
        let mut entries: Vec<Entry> = std::mem::take(&mut retry);
        entries.append(&mut batch);
        if rx.is_empty() {
            entries.extend(pending.take());
        }
        if entries.is_empty() {
            continue;
        }
        if conn.is_none() {
            conn = connect(&s.client, s.options.timeout).await.ok();
        }
        let ns = &s.options.namespace;
        let mut p = redis::pipe();
        p.load_script(&log).ignore();
        for entry in &entries {
            let session = format!("{ns}:session:{}", entry.session());
            let mut call = log.key(&session);
            match entry {
                Entry::Event(e) => call
                    .key(format!("{session}:s{}", e.stream))
                    .arg("e")
                    .arg(e.seq)
                    .arg(e.oldest)
                    .arg(&e.frame[..])
                    .arg(ttl)
                    .arg(&s.id)
                    .arg(if e.stream == 0 { "1" } else { "0" }),
                Entry::End { stream, last, .. } => call
                    .key(format!("{session}:s{stream}"))
                    .arg("x")
                    .arg(*last)
                    .arg(0)
                    .arg("")
                    .arg(ttl)
                    .arg(&s.id)
                    .arg("0"),
            };
            p.invoke_script(&call);
        }
        let result = match conn.as_mut() {
            Some(c) => p.query_async::<Vec<i64>>(c).await,
            None => Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "not connected",
            ))),
        };
        match result {
            Ok(results) => {
                warned = false;
                let mut refused = HashSet::new();
                for (entry, r) in entries.iter().zip(results) {
                    if r == 0 {
                        refused.insert(entry.session().to_owned());
                    }
                }
                for id in refused {
                    tracing::debug!(
                        "another instance holds a session's stream: this one stops writing it"
                    );
                    s.sessions_changed(Some(&id));
                }
            }
            Err(e) => {
                if !warned {
                    tracing::warn!(error = %e, "cannot write replay logs to Redis: they are kept on this instance only");
                    warned = true;
                }
                conn = None;
                retry = entries
                    .into_iter()
                    .filter(|e| matches!(e, Entry::End { .. }))
                    .take(MAX_PENDING_ENDS)
                    .collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Entries, Keep, TailReader};
    use std::collections::HashMap;

    fn entry(seq: u64, n: u64, oldest: u64) -> (String, HashMap<String, Vec<u8>>) {
        let mut fields = HashMap::new();
        if n == 0 {
            fields.insert("f".to_owned(), format!("id: 1-{seq}\n").into_bytes());
            fields.insert("o".to_owned(), oldest.to_string().into_bytes());
        } else {
            fields.insert("end".to_owned(), b"1".to_vec());
        }
        (format!("{seq}-{n}"), fields)
    }

    fn tail(after: u64, page: Entries, end: Option<u64>) -> super::StreamTail {
        let mut r = TailReader::new(
            after,
            Keep {
                events: 100,
                bytes: 1 << 20,
            },
        );
        r.take(page);
        r.finish(end, true, true)
    }

    #[test]
    fn a_stored_stream_with_a_hole_is_broken() {
        let whole = tail(
            2,
            vec![entry(3, 0, 1), entry(4, 0, 1), entry(4, 1, 0)],
            Some(4),
        );
        assert!(!whole.broken && whole.ended);
        assert_eq!(whole.events.len(), 2);
        // 4 lost between 3 and 5.
        assert!(tail(2, vec![entry(3, 0, 1), entry(5, 0, 1)], None).broken);
        // 3 lost right after the position.
        assert!(tail(2, vec![entry(4, 0, 1), entry(5, 0, 1)], None).broken);
        // The writer dropped 1 to 4 itself (its bounds): not a hole.
        assert!(!tail(2, vec![entry(5, 0, 5), entry(6, 0, 5)], None).broken);
        // The end says 6, the last event read is 5.
        assert!(
            tail(
                2,
                vec![entry(3, 0, 1), entry(4, 0, 1), entry(5, 0, 1)],
                Some(6)
            )
            .broken
        );
        // Nothing after the position, though the stream ended later.
        assert!(tail(2, Vec::new(), Some(4)).broken);
        // A position past the end: ended, nothing missing.
        let past = tail(9, Vec::new(), Some(4));
        assert!(past.ended && !past.broken && past.events.is_empty());
        // The numbers at the very top do not overflow.
        assert!(!tail(u64::MAX, Vec::new(), None).broken);
        assert!(
            tail(u64::MAX - 1, vec![entry(u64::MAX, 0, 1)], None)
                .events
                .len()
                == 1
        );
    }

    #[test]
    fn a_reader_keeps_the_newest_within_its_bounds() {
        let mut r = TailReader::new(
            0,
            Keep {
                events: 2,
                bytes: 1 << 20,
            },
        );
        r.take((1..=5).map(|s| entry(s, 0, 1)).collect());
        let t = r.finish(None, true, true);
        assert!(!t.broken);
        assert_eq!(t.events.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [4, 5]);
    }
}
