//! The legacy (2025) sessions of one endpoint as this instance holds them: the table
//! (`sessions.rs`: keyed by name, capped, evicting, expiring) and one session with its
//! streams (`session.rs`). The 2025 rules (`crate::legacy`) act on them; nothing here
//! knows the endpoint or its rules. This file is a facade.
//!
//! Invariant: a session is known by its name, a keyed digest of its id and of the
//! identity that created it; the id itself is kept nowhere.

mod session;
mod sessions;

pub(crate) use session::{HttpSession, LOCAL_STREAMS, Synced, fresh_id, plausible_id};
pub(crate) use sessions::{Reloads, Sessions};
