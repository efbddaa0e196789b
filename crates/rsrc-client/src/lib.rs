//! `rsrc-client`: a client for any MCP server's resources, speaking both eras, over a
//! byte stream, a server it starts on stdio, an rsrc engine in memory, or Streamable HTTP
//! (feature `http`).
//!
//! [`Client::connect`] detects the server's era as the 2026-07-28 stdio binding
//! prescribes: it probes with `server/discover`; a `DiscoverResult` (or a recognised
//! modern error such as `-32022` naming a modern version) makes the session modern, and
//! anything else — any other error, or silence until the probe timeout — falls back to the
//! legacy `initialize` handshake. Modern requests then carry the per-request `_meta`.
//!
//! Invariants:
//! - Every request has a timeout; a request that times out, or whose future is dropped,
//!   is cancelled with `notifications/cancelled` and its late response is ignored.
//! - Listing helpers follow cursors under a page cap and stop on a cursor loop, so a
//!   misbehaving server cannot make them run forever.
//! - Server-to-client requests (a legacy server's `ping`) are answered; others get -32601.
//!
//! This file is the crate's facade: its modules and what they export. `client.rs` holds
//! the client and how it connects, `options.rs` its settings, `error.rs` its errors,
//! `description.rs` what it learns of the server, `link.rs` the connection under it and
//! `params.rs` the params every message carries; `era.rs` picks the era when connecting,
//! `calls.rs` has the typed calls (list, read, metadata, complete, ping), `paging.rs` the
//! helpers that follow cursors, `filter.rs` listings narrowed by a SEP-2564 filter (by the
//! server or here), `metadata.rs` rsrc's SEP-2093 extension, used only where the server
//! declares it (`described.rs` what it finds without it), `watch.rs` subscriptions and the
//! changes they report, `process.rs` a stdio server the client starts (and the tail of its
//! stderr; feature `process`, a default), and `io.rs` and `http.rs` the byte-stream and
//! Streamable HTTP connections.

mod calls;
mod client;
mod described;
mod description;
mod era;
mod error;
mod filter;
#[cfg(feature = "http")]
mod http;
mod io;
mod link;
mod metadata;
mod options;
mod paging;
mod params;
#[cfg(feature = "process")]
mod process;
mod watch;

pub use client::Client;
pub use described::{Described, Via, below};
pub use description::ServerDescription;
pub use error::ClientError;
pub use filter::{Filtered, anywhere, expressible, in_any_segment, spellings};
pub use io::Notification;
pub use options::{CLIENT_TARGET, ClientOptions, EraPreference, TraceContext};
pub use paging::Collected;
#[cfg(feature = "process")]
pub use process::{LINE_BYTES, SpawnError, Spawned, StderrTail, TAIL_LINES};
pub use watch::{Change, Watch};
