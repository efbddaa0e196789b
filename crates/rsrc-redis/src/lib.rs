//! `rsrc-redis`: rsrc's change bus on Redis (7 or later), for deployments of several
//! instances ([`RedisBus`], a `rsrc::bus::ChangeBus`), with the 2025 HTTP sessions shared
//! through it (a `rsrc::sessions::SessionStore`): events over one pub/sub channel, leases as keys
//! with an expiry that their holder renews. Redis is not trusted: whoever can read it
//! learns nothing that lets them act as a client, and whoever can write to it can
//! disrupt the deployment but not make an instance believe what it wrote
//! (`docs/security.md`, "The cluster").
//!
//! - Events are JSON objects tagged with the sending instance's random id, the time and
//!   a sequence number, and authenticated with the deployment's bus keys (`wire.rs`); an
//!   instance ignores its own. A message that does not verify, is not one of ours, or
//!   is stale or heard before is dropped and counted ([`RedisBus::rejected`]), and logged at
//!   most once per ten seconds; an event too large to send (`MAX_MESSAGE`, 64 KiB) is sent as
//!   the resync of a prefix of its URI instead.
//! - Publishing puts the event in a bounded queue (`queue`, default 4096) drained by one
//!   task. An event that does not fit, or that Redis refused, is dropped, and once Redis
//!   answers again the other instances are sent one `Resync("")` instead; receiving it,
//!   an instance resynchronises its listeners *and* reloads its shared sessions, since a
//!   session's announcement may have been among the lost. Resyncs are coalesced and
//!   rate-limited (`resync.rs`): a burst costs one.
//! - The subscription is re-established with backoff (100 ms doubling to 2 s) whenever it
//!   ends; after each re-establishment (and after a first attempt that failed) this
//!   instance's listeners are resynchronised (as `BusSink::lost` does, through the
//!   coalescer) and its shared sessions reloaded, as events may have passed while it was
//!   away. Every instance publishes a
//!   heartbeat each renewal round and expects to hear its own within a bound: a
//!   subscription that stops delivering without closing is restarted too. Connections
//!   use TCP keepalive, and TLS with `rediss://` (rustls, the system's roots or a CA
//!   file).
//! - A lease is the key `NAMESPACE:lease:NAME`, held by the instance whose id it holds.
//!   One script renews it if it is this instance's or takes it if it is free, so a
//!   holder whose local hold lapsed (a stalled runtime) keeps it without a gap. Held
//!   leases are renewed every third of `ttl`, free ones tried every tenth; a lease
//!   counts as held here until 80 % of `ttl` after the last successful attempt began, so
//!   it lapses here before it expires in Redis. A holder that dies is replaced within
//!   `ttl` plus a tenth (3.3 s with the defaults). A failed round trip also restarts the
//!   subscription, so a Redis that stops answering without closing its connections is
//!   noticed. An instance shutting down gives its leases up (`ChangeBus::leave`) and
//!   takes none again (an attempt answered after that is given back at once); another
//!   instance takes each within a tenth of `ttl`.
//! - One namespace holds one deployment: every instance records what it serves
//!   (`members.rs`), and one that finds a live instance serving something else, or
//!   writing with keys it does not have, refuses to start.
//! - Every task ends when the bus is dropped.
//!
//! The files, from the handle down: `bus.rs` is the handle ([`RedisBus`]: connecting,
//! the `ChangeBus` methods); `store/` the sessions shared through Redis; `leases.rs` the
//! leases (kept by one task, given up at `ChangeBus::leave`), `members.rs` the record of
//! what each instance serves, `publish.rs` the publish task, `subscribe.rs` the
//! subscription loop and the heartbeat it listens for; `state.rs` the state all of them
//! share (`BusState`); under it `wire.rs` the format of the channel's messages,
//! `resync.rs` the coalescing of resyncs, `rejections.rs` the counts of what was
//! refused, `connect.rs` reaching Redis, and `options.rs` the options. Behind the
//! `fuzzing` feature (never in a production build), `fuzzing.rs` holds the checks of the
//! fuzz targets `bus_message` and `session_record`.
//!
//! Vocabulary: a *resync* tells listeners to catch up on changes they may have missed;
//! *resuming* an SSE stream sends its events again from a session's *replay log*; a
//! message *heard before* (sent again by someone who recorded it) is refused as stale.

mod bus;
mod connect;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod leases;
mod members;
mod options;
mod publish;
mod rejections;
mod resync;
mod state;
mod store;
mod subscribe;
mod wire;

pub use bus::RedisBus;
pub use options::{RedisBusError, RedisBusOptions};
pub use rejections::Rejected;
