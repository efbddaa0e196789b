//! Test support: a raw-JSON [`Peer`] that talks to a server over any byte stream, an
//! [`HttpPeer`] that talks Streamable HTTP over loopback sockets, and
//! [`validate`], which checks a message against the official JSON schema of a protocol
//! revision (copied under `testdata/schema/`), [`fixtures`] for test data, and a
//! throwaway Redis ([`redis::RedisServer`]).
//!
//! Invariant: every message a [`Peer`] receives is validated against the schema of the
//! revision the peer speaks before the test sees it; a test cannot look at a server
//! message that the schema rejects.

pub mod fixtures;
pub mod http;
mod peer;
pub mod redis;
mod schema;

pub use http::{HttpPeer, HttpResponse, SseEvent, SseStream};
pub use peer::{Peer, modern_meta};
pub use schema::validate;
