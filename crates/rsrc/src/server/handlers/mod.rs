//! One handler per method. Each takes decoded params and the request's context (which
//! knows the revision) and returns the typed result, with the caching hint that applies
//! (the provider's, else the server's default); fitting the result to the revision
//! (`resultType`, `_meta.serverInfo`, and dropping the caching members before 2026-07-28)
//! is done once for every method by the dispatcher ([`Fit`](super::fit::Fit)). Handlers
//! reach the engine through its inside API (`inside.rs`): the state, never the handle.
//! This file only declares and re-exports; `checks.rs` holds the checks they share.
//!
//! Invariants:
//! - Every URI from a client is validated before a provider sees it.
//! - A provider only sees cursor positions this server sealed for the same listing.
//! - A read never answers an empty `contents` for a document: that is a provider bug and
//!   becomes an internal error, never a false "exists but empty".
//! - Every resource leaving the server carries both SEP-2093 spellings of its kind while
//!   the server serves rsrc's extension, and none of SEP-2093's members otherwise
//!   ([`FitExtension`](super::fit::FitExtension), applied by each handler whose result
//!   holds resources).

mod checks;
mod complete;
mod lifecycle;
mod listing;
mod read;
mod subscriptions;

pub(super) use checks::{canonicalize, check_position};
pub(super) use complete::{complete, extension};
pub(super) use lifecycle::{discover, initialize, ping};
pub(super) use listing::{directory_read, list, listing, templates};
pub(super) use read::{metadata, read};
pub(super) use subscriptions::{listen, listener_of, subscribe, unsubscribe};
