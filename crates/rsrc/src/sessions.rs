//! Shared HTTP sessions: [`SessionStore`] is where the sessions of the 2025 revisions
//! over HTTP live when several instances serve one endpoint, so that any instance can
//! serve any session. A [`ChangeBus`](crate::bus::ChangeBus) that can hold them provides
//! one ([`ChangeBus::session_store`](crate::bus::ChangeBus::session_store); `rsrc-redis`'s
//! does); the HTTP transport uses it.
//!
//! What is shared, and who writes it:
//! - The record ([`StoredSession`]): written by `initialize`, and after every request that
//!   changed the session (its `initialized` flag, log level or subscriptions), before
//!   that request is answered — so the client's next request finds it on any instance.
//!   A save writes only what its request changed, and returns the merged record with its
//!   revision: a copy never overwrites another instance's newer change, and never applies
//!   a record older than the one it has.
//! - The resumption log of each stream (the events a client that reconnects with
//!   `Last-Event-ID` is sent again), written only by the instance that produces the
//!   stream: the one running the request for a POST stream; the session's *holder* for
//!   the standalone GET stream (stream 0). An instance becomes the holder by serving the
//!   session's GET stream ([`SessionStore::claim`]); the store refuses stream-0 entries
//!   from any other instance, and tells the one refused (which then reloads its copy and
//!   stops writing).
//! - Every change to a record is announced to the other instances, which reload their
//!   copy of that session ([`SessionStore::on_change`]).
//! - A deleted session leaves a tombstone for a while, so that a record the store lost
//!   (a restart without persistence: [`Lookup::Missing`]) can be told from one that was
//!   deleted ([`Lookup::Deleted`]); an instance that still has a copy of a lost one
//!   re-creates it ([`SessionStore::restore`]).
//!
//! The store knows a session by its *name*, a keyed digest of its id and of the identity
//! that owns it ([`SessionStore::names`]): the id, which a client presents as a bearer
//! credential, never leaves the instance that received it, and an identity presenting
//! another's id finds no session under the name it computes.
//!
//! Invariants: appending never blocks (the queue is bounded; an event that does not fit
//! is kept only by the instance that wrote it, and the stored log then has a hole, which
//! [`SessionStore::read`] reports as [`StreamTail::broken`] rather than resuming past
//! it); a record, its subscriptions and its logs expire together after `idle` (plus a
//! margin) without use.

use std::time::Duration;

use bytes::Bytes;

use crate::future::BoxFuture;

/// POST streams of a session kept for resumption, newest first: older ones are
/// forgotten (on every instance, and in a [`SessionStore`]).
pub const RETAINED_STREAMS: usize = 16;

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
    /// The record's revision: one more for every saved change.
    pub rev: u64,
    /// How many POST streams were numbered ([`SessionStore::open_stream`]).
    pub streams: u64,
}

/// What the store says of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T> {
    /// It exists (with what was asked).
    Found(T),
    /// It was deleted (or ended) on some instance: every copy ends.
    Deleted,
    /// The store has no record of it and no sign that it ended: it lost it (Redis
    /// restarted without persistence) or let it expire. An instance with a copy still in
    /// use re-creates it ([`SessionStore::restore`]).
    Missing,
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
    pub fn new(version: String, client: String) -> Self {
        StoredSession {
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

/// A session's state as the store holds it after a save, with its revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Revision {
    /// The merged state: this save's changes on top of every earlier one.
    pub state: SessionState,
    /// Its revision ([`StoredSession::rev`]).
    pub rev: u64,
}

impl Revision {
    /// A revision of a state.
    pub fn new(state: SessionState, rev: u64) -> Self {
        Revision { state, rev }
    }
}

/// One event of a stream's resumption log: the full SSE frame (`id: …\ndata: …\n\n`).
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The session's name ([`SessionStore::names`]).
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

/// How much of a stream a reader keeps: the newest events within both bounds (at least
/// the newest one).
#[derive(Debug, Clone, Copy)]
pub struct Keep {
    /// Most events.
    pub events: usize,
    /// Most bytes, beyond the newest event.
    pub bytes: usize,
}

/// The events of a stream after a position, as the store has them.
#[derive(Debug, Clone, Default)]
pub struct StreamTail {
    /// `(seq, frame)`, oldest first, consecutive (unless `broken`).
    pub events: Vec<(u64, Bytes)>,
    /// The stream ended (its request was answered), and no event after the position
    /// is missing.
    pub ended: bool,
    /// The stream exists: it has events, an end, or a writer on record.
    pub known: bool,
    /// The instance writing it is alive now (a POST stream whose writer died never
    /// ends); see [`SessionStore::liveness_grace`].
    pub writer_alive: bool,
    /// Events after the position are missing from the store (they could not be written,
    /// the store lost them, or what it holds of them does not verify): resuming from what
    /// it has would skip them silently.
    pub broken: bool,
}

/// Called with a session's name when another instance changed it, with `None` when
/// changes may have been missed.
pub type SessionChanged = Box<dyn Fn(Option<&str>) + Send + Sync>;

/// Shared 2025 sessions; see the [module](self) documentation. Provided by a
/// [`ChangeBus`](crate::bus::ChangeBus) that can hold them
/// ([`ChangeBus::session_store`](crate::bus::ChangeBus::session_store)).
pub trait SessionStore: Send + Sync + 'static {
    /// This instance's id, as [`StoredSession::holder`] names it.
    fn instance(&self) -> &str;
    /// The names the session `id` created by `owner` (the digest of an identity, empty
    /// without authentication) may have in the store: one for each key the store
    /// accepts, the one new sessions are created under first. Every other method takes
    /// a name: the id itself never leaves this instance.
    fn names(&self, id: &str, owner: &[u8]) -> Vec<String>;
    /// Records a new session.
    fn create<'a>(
        &'a self,
        name: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The session `name`; `touch` also restarts its expiry. A record the store cannot
    /// vouch for (it does not verify, or exceeds the store's bounds) is
    /// [`Lookup::Missing`].
    fn load<'a>(
        &'a self,
        name: &'a str,
        touch: bool,
    ) -> BoxFuture<'a, Result<Lookup<StoredSession>, StoreError>>;
    /// Restarts the expiry of these sessions; for each, what the store knows of it.
    fn touch<'a>(
        &'a self,
        names: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Lookup<()>>, StoreError>>;
    /// Records what changed from `before` to `state` (only that: what other instances
    /// changed meanwhile stays), tells the other instances, and returns the merged state.
    /// A session that no longer exists is not re-created.
    fn save<'a>(
        &'a self,
        name: &'a str,
        before: &'a SessionState,
        state: &'a SessionState,
    ) -> BoxFuture<'a, Result<Lookup<Revision>, StoreError>>;
    /// Re-creates a session the store lost ([`Lookup::Missing`]) from this instance's
    /// copy: unless it was deleted meanwhile, or another instance re-created it from a
    /// copy at least as recent (its holder then becomes `session.holder` if it had none).
    /// Tells the other instances when it wrote anything.
    fn restore<'a>(
        &'a self,
        name: &'a str,
        session: &'a StoredSession,
    ) -> BoxFuture<'a, Result<Lookup<()>, StoreError>>;
    /// Deletes the session and its logs, leaving a tombstone, and tells the other
    /// instances.
    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Makes this instance the session's holder, and tells the other instances.
    fn claim<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Lookup<Claim>, StoreError>>;
    /// Numbers a new POST stream of the session, written by this instance. Only the most
    /// recent streams of a session are kept.
    fn open_stream<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<u64, StoreError>>;
    /// Queues an event for the stream's log. Never blocks. An event of stream 0 is
    /// written only while this instance holds the session; when refused, the store
    /// calls the [`on_change`](SessionStore::on_change) handlers with the session's name
    /// (on this instance only), so that its copy is reloaded and stops writing.
    fn append(&self, event: StoredEvent);
    /// Queues the end of a stream whose last event is `last`, after its events.
    fn end_stream(&self, session: &str, stream: u64, last: u64);
    /// The events of a stream after `after`, of which the newest within `keep`.
    fn read<'a>(
        &'a self,
        name: &'a str,
        stream: u64,
        after: u64,
        keep: Keep,
    ) -> BoxFuture<'a, Result<StreamTail, StoreError>>;
    /// Calls `handler` with a session's name when another instance changed it, and with
    /// `None` when changes may have been missed (every session should be reloaded). The
    /// handler is dropped with the store.
    fn on_change(&self, handler: SessionChanged);
    /// How long a session lasts unused.
    fn idle(&self) -> Duration;
    /// How long a writer may look dead ([`StreamTail::writer_alive`] false) before its
    /// streams are given up: a live instance may miss one renewal of its liveness.
    fn liveness_grace(&self) -> Duration {
        Duration::from_secs(3)
    }
    /// Whether the store came back from an outage a moment ago: a session it says is
    /// [`Lookup::Missing`] may be one it lost, which an instance with a copy is about to
    /// put back (so a request for it should be retried rather than refused).
    fn recovering(&self) -> bool {
        false
    }
}
