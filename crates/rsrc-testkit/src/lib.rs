//! Test support: a raw-JSON [`Peer`] that talks to a server over any byte stream, and
//! [`validate`], which checks a message against the official JSON schema of a protocol
//! revision (copied under `testdata/schema/`).
//!
//! Invariant: every message a [`Peer`] receives is validated against the schema of the
//! revision the peer speaks before the test sees it; a test cannot look at a server
//! message that the schema rejects.

mod peer;
mod schema;

pub use peer::{Peer, modern_meta};
pub use schema::validate;
