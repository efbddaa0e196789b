//! A log's copy in the [`SessionStore`]: each event, once whole, and the end of a POST
//! stream, so that another instance can resume the stream.
//!
//! Invariants:
//! - The store receives events in the order of their numbers, each whole and once (a
//!   log has one writer, and an event is mirrored when its last piece is written), with
//!   the oldest event its writer still keeps, so that a reader can tell a hole.
//! - Writing never waits: the store queues what it writes, and what it cannot queue
//!   leaves a hole that readers see.
//! - Stream 0 never ends: only POST streams are marked ended.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};

use rsrc::sessions::{SessionStore, StoredEvent};

/// Where a log's events are also written: the session's shared replay log.
#[derive(Clone)]
pub(crate) struct Mirror {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) session: Arc<str>,
}

impl Mirror {
    /// Writes event `seq` of `stream`, whose frame is `pieces` in order, while its writer
    /// keeps the events from `oldest` on.
    pub(crate) fn event(&self, stream: u64, seq: u64, pieces: &[Bytes], oldest: u64) {
        let frame = match pieces {
            [one] => one.clone(),
            pieces => {
                let mut whole = BytesMut::with_capacity(pieces.iter().map(Bytes::len).sum());
                for p in pieces {
                    whole.put_slice(p);
                }
                whole.freeze()
            }
        };
        self.store.append(StoredEvent {
            session: self.session.to_string(),
            stream,
            seq,
            frame,
            oldest,
        });
    }

    /// Marks POST stream `stream` ended after event `last`.
    pub(crate) fn end(&self, stream: u64, last: u64) {
        if stream != 0 {
            self.store.end_stream(&self.session, stream, last);
        }
    }
}
