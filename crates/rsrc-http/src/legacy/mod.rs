//! The 2025 revisions over HTTP: sessions named by `Mcp-Session-Id`, the standalone GET
//! stream, and resumption with `Last-Event-ID`. The rules here take the endpoint's
//! state (`crate::state`) and the session table (`crate::table`: the sessions of one
//! endpoint, cap, eviction, expiry; one session and its streams): `handlers.rs` the
//! request handlers (POST, `initialize`, GET, DELETE), `lookup.rs` the session a request
//! names, `refusals.rs` the answers shared by those, `records.rs` a session's record in a
//! [`SessionStore`] (persist, apply, reload, put back), `streams.rs` the streams shared
//! through the store (holding stream 0, following a POST stream written elsewhere). This
//! file is a facade.
//!
//! Invariants:
//! - A session exists only after a successful `initialize`; its id carries 192 random
//!   bits in visible ASCII. It is kept and looked up by its name, a keyed digest of the
//!   id and of the identity that created it: another identity presenting the id finds
//!   no session, and with a store the id never leaves this instance.
//! - At most `max_sessions` sessions exist. At the cap, expired sessions go first, then
//!   the least recently used one with nothing in flight and no stream attached; if every
//!   session is busy, `initialize` gets 503.
//! - An ended session (DELETE, expiry, eviction, shutdown) cancels its requests, ends its
//!   streams, and answers 404 from then on.
//! - A session keeps at most [`RETAINED_STREAMS`] finished POST streams for replay, and
//!   has at most `max_in_flight` requests running (429 beyond).
//! - A request answered as JSON is cancelled when its connection drops (there is no stream
//!   to resume it on); once its answer became a stream, it runs on, for resumption.
//!
//! With a [`SessionStore`] (a bus that holds sessions) every instance serves every
//! session: the instance that first sees an unknown id loads it from the store; a request
//! that changed the session records its change (only it) before it is answered; the
//! replay logs are mirrored to the store; the instance serving the GET stream *holds* the
//! session (only its copy of stream 0 takes notifications, and the store refuses stream-0
//! entries from any other) and, taking it over from another instance, replays the stored
//! log and then re-announces every subscription, since notifications may have been lost
//! with the previous holder (or the stored log has a hole). DELETE and expiry act on the
//! store, and other instances drop their copies when told or when they next check; so
//! does an eviction at the cap. A copy applies only records at least as recent as the
//! one it has, keeping its own changes not yet recorded; a session the store lost (not
//! deleted: no tombstone) is re-created from a copy. Each instance's copy is bounded and
//! expires as above; the store's record expires after `idle` unused.
//!
//! [`RETAINED_STREAMS`]: rsrc::sessions::RETAINED_STREAMS
//! [`SessionStore`]: rsrc::sessions::SessionStore

mod handlers;
mod lookup;
mod records;
mod refusals;
mod streams;

pub(crate) use handlers::{delete, get, post};
pub(crate) use records::reload;
