//! The replay logs of shared sessions (the events of each SSE stream, sent again to
//! a client that resumes it, on any instance): one Redis Stream per SSE stream, written
//! by one task in the order entries were queued, and read back with their holes seen.
//!
//! Invariants:
//! - The queue is bounded: an event that does not fit is kept by its writer only (the
//!   stored stream then has a hole, which readers see); an end that does not fit waits
//!   among at most [`MAX_PENDING_ENDS`] and is written once the queue is empty, so a
//!   stream's end follows its events.
//! - Entries that find Redis away are dropped, except ends, which are tried again.
//! - An instance refused stream 0 of a session (another holds it) has its copy reloaded.
//! - Every entry carries its tag (the session, the stream, its numbers, its frame): an
//!   entry read back that does not verify, or is over [`MAX_ENTRY`], is never sent but
//!   counted, and leaves a hole.
//! - A stream is read back newest first, only as far as the reader's bounds (events,
//!   bytes) and the position: what is read is bounded whatever the stream holds. It is
//!   broken if the events read are not consecutive, if they do not reach down to the
//!   position (or the writer's trim point) when no bound stopped the reading, if its
//!   end marker names another last event, or if it ended after the position with
//!   nothing read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::Script;
use redis::aio::MultiplexedConnection;
use rsrc::keyring::Keyring;
use rsrc::sessions::{Keep, StoreError, StoredEvent, StreamTail};
use tokio::sync::{Notify, mpsc};

use super::conn::StoreConn;
use super::layout::{MAX_ENTRY, seq_of, session_key};
use super::scripts::{LOG, LOG_READ};
use crate::connect::connect;
use crate::state::BusState;

/// Log entries waiting to be written.
pub(crate) const LOG_QUEUE: usize = 8192;
/// Log entries written per round trip.
const LOG_BATCH: usize = 256;
/// Ends of streams kept to be written later: those that did not fit in the queue, and
/// those that found Redis away.
const MAX_PENDING_ENDS: usize = 1024;

#[derive(Default)]
pub(crate) struct PendingEnds {
    ends: Mutex<VecDeque<Entry>>,
    added: Notify,
}

impl PendingEnds {
    pub(crate) fn push(&self, entry: Entry) -> bool {
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

pub(crate) enum Entry {
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

/// What the tag of an event (`Some(frame)`) or of an end marker (`None`) covers, handed
/// to `f`: its kind, session `name`, stream `stream`, number `seq` (the last event, for
/// an end), the writer's trim point `oldest` and the frame.
fn entry_parts<R>(
    name: &str,
    stream: u64,
    seq: u64,
    oldest: u64,
    frame: Option<&[u8]>,
    f: impl FnOnce(&[&[u8]]) -> R,
) -> R {
    let kind: &[u8] = if frame.is_some() { b"event" } else { b"end" };
    let (stream, seq, oldest) = (
        stream.to_le_bytes(),
        seq.to_le_bytes(),
        oldest.to_le_bytes(),
    );
    f(&[
        kind,
        name.as_bytes(),
        &stream,
        &seq,
        &oldest,
        frame.unwrap_or_default(),
    ])
}

/// The tag of an entry (see [`entry_parts`]), base64url, with the sealing key.
pub(crate) fn entry_tag(
    keys: &Keyring,
    name: &str,
    stream: u64,
    seq: u64,
    oldest: u64,
    frame: Option<&[u8]>,
) -> String {
    entry_parts(name, stream, seq, oldest, frame, |parts| keys.tag(parts))
}

/// Whether `tag` (base64url) verifies for that entry under any key.
pub(crate) fn entry_verifies(
    keys: &Keyring,
    name: &str,
    stream: u64,
    seq: u64,
    oldest: u64,
    frame: Option<&[u8]>,
    tag: &[u8],
) -> bool {
    entry_parts(name, stream, seq, oldest, frame, |parts| {
        keys.verifies(tag, parts)
    })
}

/// One entry as [`LOG_READ`] returns it.
type Raw = (String, HashMap<String, Vec<u8>>);

/// Stream `stream` of session `name` after event `after`, for
/// [`SessionStore::read`](rsrc::sessions::SessionStore::read).
pub(crate) async fn read_log(
    conn: &StoreConn,
    shared: &BusState,
    name: &str,
    stream: u64,
    after: u64,
    keep: Keep,
) -> Result<StreamTail, StoreError> {
    let key = session_key(&shared.options.namespace, name);
    let log = format!("{key}:s{stream}");
    let read = Script::new(LOG_READ);
    let ((top, bounded, raw), writer): ((String, u8, Vec<Raw>), Option<String>) = conn
        .with(async |c| {
            let mut p = redis::pipe();
            p.load_script(&read).ignore();
            p.invoke_script(
                read.key(&log)
                    .arg(after)
                    .arg(keep.events.max(1))
                    .arg(keep.bytes)
                    .arg(MAX_ENTRY),
            )
            .hget(&key, format!("w{stream}"));
            p.query_async(c).await
        })
        .await?;
    let keys = &shared.keys.logs;
    let mut reader = TailReader::new(after);
    // Newest first: the reader takes them oldest first.
    for (id, fields) in raw.into_iter().rev() {
        let Some((seq, 0)) = seq_of(&id) else {
            continue;
        };
        let field = |f: &str| fields.get(f).map(Vec::as_slice);
        let oldest = field("o")
            .and_then(|o| std::str::from_utf8(o).ok()?.parse().ok())
            .unwrap_or(0);
        let event = match (field("f"), field("t"), field("big")) {
            (Some(frame), Some(tag), None)
                if entry_verifies(keys, name, stream, seq, oldest, Some(frame), tag) =>
            {
                Some(Bytes::copy_from_slice(frame))
            }
            (_, _, big) => {
                let why = if big.is_some() {
                    "it is over its bound"
                } else {
                    "it does not verify"
                };
                shared.rejected_stored("a replay-log entry", why);
                None
            }
        };
        reader.take(seq, oldest, event);
    }
    // The end, even when the position is past it (a client naming an event the
    // stream never had); an end marker that does not verify is none.
    let end = match seq_of(&top) {
        Some((last, 1)) => {
            let tag: Option<Vec<u8>> = conn
                .with(async |c| {
                    redis::cmd("XRANGE")
                        .arg(&log)
                        .arg(&top)
                        .arg(&top)
                        .query_async::<Vec<Raw>>(c)
                        .await
                })
                .await?
                .into_iter()
                .next()
                .and_then(|(_, mut f)| f.remove("t"));
            match tag {
                Some(t) if entry_verifies(keys, name, stream, last, 0, None, &t) => Some(last),
                _ => {
                    shared.rejected_stored("a replay log's end", "it does not verify");
                    None
                }
            }
        }
        _ => None,
    };
    let writer_alive = match &writer {
        None => stream == 0,
        Some(w) => {
            let lease = format!("{}:lease:instance:{w}", shared.options.namespace);
            conn.with(async |c| {
                redis::cmd("EXISTS")
                    .arg(&lease)
                    .query_async::<bool>(c)
                    .await
            })
            .await?
        }
    };
    Ok(reader.finish(
        end,
        bounded == 1,
        stream == 0 || writer.is_some(),
        writer_alive,
    ))
}

/// Takes a stream's entries read back (oldest first, within the reader's bounds) and
/// sees holes.
pub(crate) struct TailReader {
    after: u64,
    events: Vec<(u64, Bytes)>,
    /// The first event read, and the last.
    first: Option<u64>,
    last: Option<u64>,
    /// The oldest event the writer kept, as of the newest event.
    trimmed_to: u64,
    hole: bool,
}

impl TailReader {
    pub(crate) fn new(after: u64) -> Self {
        TailReader {
            after,
            events: Vec::new(),
            first: None,
            last: None,
            trimmed_to: 0,
            hole: false,
        }
    }

    /// Event `seq` (the writer keeping events from `oldest` on), or a hole where it
    /// should be (`None`: it did not verify).
    pub(crate) fn take(&mut self, seq: u64, oldest: u64, frame: Option<Bytes>) {
        if let Some(prev) = self.last
            && seq != prev.saturating_add(1)
        {
            self.hole = true;
        }
        self.first.get_or_insert(seq);
        self.last = Some(seq);
        self.trimmed_to = oldest;
        match frame {
            Some(frame) => self.events.push((seq, frame)),
            None => self.hole = true,
        }
    }

    /// `end`: the stream's end marker (its last event), if it has one; `bounded`: the
    /// reader's bounds stopped the reading before the position.
    pub(crate) fn finish(
        self,
        end: Option<u64>,
        bounded: bool,
        writer_known: bool,
        writer_alive: bool,
    ) -> StreamTail {
        let next = self.after.saturating_add(1);
        let mut broken = self.hole;
        match (self.first, self.last) {
            // Entries present are those from the writer's trim point on (or from where
            // the reader's bounds stopped): the first after the position is the next
            // one, or the oldest kept.
            (Some(first), Some(last)) => {
                broken |= !bounded && first != next.max(self.trimmed_to);
                broken |= end.is_some_and(|e| e != last);
            }
            // No event after the position, though the stream ended after it.
            _ => broken |= end.is_some_and(|e| e > self.after),
        }
        let known = writer_known || end.is_some() || self.first.is_some();
        StreamTail {
            events: self.events,
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
pub(crate) async fn write_logs(
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
        let keys = &s.keys.logs;
        let mut p = redis::pipe();
        p.load_script(&log).ignore();
        for entry in &entries {
            let name = entry.session();
            let session = session_key(ns, name);
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
                    .arg(if e.stream == 0 { "1" } else { "0" })
                    .arg(entry_tag(
                        keys,
                        name,
                        e.stream,
                        e.seq,
                        e.oldest,
                        Some(&e.frame),
                    )),
                Entry::End { stream, last, .. } => call
                    .key(format!("{session}:s{stream}"))
                    .arg("x")
                    .arg(*last)
                    .arg(0)
                    .arg("")
                    .arg(ttl)
                    .arg(&s.id)
                    .arg("0")
                    .arg(entry_tag(keys, name, *stream, *last, 0, None)),
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
    use super::*;

    fn frame(seq: u64) -> Option<Bytes> {
        Some(Bytes::from(format!("id: 1-{seq}\n")))
    }

    /// A reader at `after` that took `seqs` (oldest first), each kept from `oldest`.
    fn tail(after: u64, seqs: &[u64], oldest: u64, end: Option<u64>) -> StreamTail {
        let mut r = TailReader::new(after);
        for &s in seqs {
            r.take(s, oldest, frame(s));
        }
        r.finish(end, false, true, true)
    }

    #[test]
    fn a_stored_stream_with_a_hole_is_broken() {
        let whole = tail(2, &[3, 4], 1, Some(4));
        assert!(!whole.broken && whole.ended);
        assert_eq!(whole.events.len(), 2);
        // 4 lost between 3 and 5.
        assert!(tail(2, &[3, 5], 1, None).broken);
        // 3 lost right after the position.
        assert!(tail(2, &[4, 5], 1, None).broken);
        // The writer dropped 1 to 4 itself (its bounds): not a hole.
        assert!(!tail(2, &[5, 6], 5, None).broken);
        // The end says 6, the last event read is 5.
        assert!(tail(2, &[3, 4, 5], 1, Some(6)).broken);
        // Nothing after the position, though the stream ended later.
        assert!(tail(2, &[], 1, Some(4)).broken);
        // A position past the end: ended, nothing missing.
        let past = tail(9, &[], 1, Some(4));
        assert!(past.ended && !past.broken && past.events.is_empty());
        // The numbers at the very top do not overflow.
        assert!(!tail(u64::MAX, &[], 1, None).broken);
        assert_eq!(tail(u64::MAX - 1, &[u64::MAX], 1, None).events.len(), 1);
    }

    #[test]
    fn an_entry_that_does_not_verify_is_a_hole() {
        let mut r = TailReader::new(0);
        r.take(1, 1, frame(1));
        r.take(2, 1, None);
        r.take(3, 1, frame(3));
        let t = r.finish(None, false, true, true);
        assert!(t.broken);
        assert_eq!(t.events.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn reading_stopped_by_the_bounds_is_not_a_hole() {
        let mut r = TailReader::new(0);
        for s in 8..=9 {
            r.take(s, 1, frame(s));
        }
        assert!(!r.finish(None, true, true, true).broken);
    }

    #[test]
    fn an_entry_tag_covers_its_session_stream_numbers_and_frame() {
        let keys = Keyring::new(&[[5; 32]]).unwrap();
        let tag = entry_tag(&keys, "n", 1, 7, 2, Some(b"f"));
        let ok = |name, stream, seq, oldest, frame: &[u8]| {
            entry_verifies(
                &keys,
                name,
                stream,
                seq,
                oldest,
                Some(frame),
                tag.as_bytes(),
            )
        };
        assert!(ok("n", 1, 7, 2, b"f"));
        assert!(!ok("m", 1, 7, 2, b"f"));
        assert!(!ok("n", 0, 7, 2, b"f"));
        assert!(!ok("n", 1, 8, 2, b"f"));
        assert!(!ok("n", 1, 7, 3, b"f"));
        assert!(!ok("n", 1, 7, 2, b"g"));
        let end = entry_tag(&keys, "n", 1, 7, 0, None);
        assert!(entry_verifies(&keys, "n", 1, 7, 0, None, end.as_bytes()));
        assert!(!entry_verifies(
            &keys,
            "n",
            1,
            7,
            0,
            Some(b""),
            end.as_bytes()
        ));
    }
}
