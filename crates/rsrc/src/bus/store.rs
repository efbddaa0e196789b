//! [`SessionStore`]: where the sessions of the 2025 revisions over HTTP live when several
//! instances serve one endpoint, so that any instance can serve any session.
//!
//! What is shared, and who writes it:
//! - The record ([`StoredSession`]): written by `initialize`, and after every request that
//!   changed the session (its `initialized` flag, log level or subscriptions), before
//!   that request is answered — so the client's next request finds it on any instance.
//! - The replay log of each stream, written only by the instance that produces the
//!   stream: the one running the request for a POST stream; the session's *holder* for
//!   the standalone GET stream (stream 0). An instance becomes the holder by serving the
//!   session's GET stream ([`SessionStore::claim`]).
//! - Every change to a record is announced to the other instances, which reload their
//!   copy of that session ([`SessionStore::on_change`]).
//!
//! Invariants: appending never blocks (the queue is bounded; an event that does not fit
//! is kept only by the instance that wrote it); a record, its subscriptions and its logs
//! expire together after `idle` without use.

use std::time::Duration;

use bytes::Bytes;

use crate::provider::BoxFuture;

/// POST streams of a session kept for replay, newest first: older ones are forgotten
/// (on every instance, and in a [`SessionStore`]).
#[cfg(any(feature = "http", feature = "redis"))]
pub(crate) const RETAINED_STREAMS: usize = 16;

/// Why the store could not answer.
#[derive(Debug, Clone)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// A 2025 session as every instance sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredSession {
    /// The identity that created it (hex digest), empty without authentication.
    pub owner: String,
    /// The negotiated revision.
    pub version: String,
    /// `{"clientInfo": …, "capabilities": …}` from `initialize`, as JSON.
    pub client: String,
    /// The state that requests change.
    pub state: SessionState,
    /// The instance serving the session's standalone stream, if any.
    pub holder: Option<String>,
    /// How many times the stream was claimed: a copy loaded before this instance's own
    /// claim has a smaller number, and must not take the stream back from it.
    pub claims: u64,
}

/// The outcome of [`SessionStore::claim`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Claim {
    /// The instance that held the stream before, if any.
    pub previous: Option<String>,
    /// The last sequence number of stream 0 in the store.
    pub last: u64,
    /// The claim's number ([`StoredSession::claims`] from now on).
    pub number: u64,
}

impl StoredSession {
    /// A record for a session just initialized.
    pub fn new(owner: String, version: String, client: String) -> Self {
        StoredSession {
            owner,
            version,
            client,
            ..StoredSession::default()
        }
    }
}

/// What requests change in a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionState {
    /// The client sent `notifications/initialized`.
    pub initialized: bool,
    /// The level set by `logging/setLevel`, as on the wire (`"info"`).
    pub log_level: Option<String>,
    /// Subscribed URIs, sorted.
    pub subscriptions: Vec<String>,
}

/// One event of a stream's replay log: the full SSE frame (`id: …\ndata: …\n\n`).
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The session's id.
    pub session: String,
    /// The stream's number within the session (0: the standalone stream).
    pub stream: u64,
    /// The event's number within the stream, from 1.
    pub seq: u64,
    /// `id: STREAM-SEQ\ndata: …\n\n`.
    pub frame: Bytes,
    /// The oldest event the writer still keeps: older ones are dropped from the store
    /// too, so that the shared log has the writer's bounds.
    pub oldest: u64,
}

/// The events of a stream after a position, as the store has them.
#[derive(Debug, Clone, Default)]
pub struct StreamTail {
    /// `(seq, frame)`, oldest first.
    pub events: Vec<(u64, Bytes)>,
    /// The stream ended (its request was answered).
    pub ended: bool,
    /// The stream exists: it has events, an end, or a writer on record.
    pub known: bool,
    /// The instance writing it is alive (a POST stream whose writer died never ends).
    pub writer_alive: bool,
}

/// Called with a session's id when another instance changed it, with `None` when
/// changes may have been missed.
pub type SessionChanged = Box<dyn Fn(Option<&str>) + Send + Sync>;

/// Shared 2025 sessions; see the [module](self) documentation. Provided by a
/// [`ChangeBus`](super::ChangeBus) that can hold them
/// ([`ChangeBus::session_store`](super::ChangeBus::session_store)).
pub trait SessionStore: Send + Sync + 'static {
    /// This instance's id, as [`StoredSession::holder`] names it.
    fn instance(&self) -> &str;
    /// Records a new session.
    fn create<'a>(
        &'a self,
        id: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The session `id`, if it exists; `touch` also restarts its expiry.
    fn load<'a>(
        &'a self,
        id: &'a str,
        touch: bool,
    ) -> BoxFuture<'a, Result<Option<StoredSession>, StoreError>>;
    /// Restarts the expiry of these sessions; for each, whether it still exists.
    fn touch<'a>(&'a self, ids: &'a [String]) -> BoxFuture<'a, Result<Vec<bool>, StoreError>>;
    /// Records `state` (the session's state was `before`), and tells the other
    /// instances.
    fn save<'a>(
        &'a self,
        id: &'a str,
        before: &'a SessionState,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Deletes the session and its logs, and tells the other instances.
    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Makes this instance the session's holder, and tells the other instances.
    fn claim<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Claim, StoreError>>;
    /// Numbers a new POST stream of the session, written by this instance. Only the most
    /// recent streams of a session are kept.
    fn open_stream<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<u64, StoreError>>;
    /// Queues an event for the stream's log. Never blocks.
    fn append(&self, event: StoredEvent);
    /// Queues the end of a stream whose last event is `last`, after its events.
    fn end_stream(&self, session: &str, stream: u64, last: u64);
    /// The events of a stream after `after`.
    fn read<'a>(
        &'a self,
        id: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<StreamTail, StoreError>>;
    /// Calls `handler` with a session's id when another instance changed it, and with
    /// `None` when changes may have been missed (every session should be reloaded).
    fn on_change(&self, handler: SessionChanged);
    /// How long a session lasts unused.
    fn idle(&self) -> Duration;
}
