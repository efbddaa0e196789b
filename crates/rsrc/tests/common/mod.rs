//! Shared fixtures for the engine's wire tests: a server with one of every kind of
//! resource (`fixtures.rs`, which the client's, the HTTP transport's and the Redis
//! crate's tests include too), and a raw-JSON peer connected to it in memory.
#![allow(dead_code, unreachable_pub)]

mod fixtures;

#[allow(unused_imports)]
pub use fixtures::*;

use rsrc::Server;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc_testkit::Peer;

pub fn connect(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    Peer::new(r, w)
}

/// A peer connected to `server`, speaking `v` (initialized for a legacy revision).
pub async fn connect_as(server: &Server, v: rsrc::protocol::ProtocolVersion) -> Peer {
    let mut p = connect(server);
    p.begin(v).await;
    p
}

/// `resources/read` of `uri` in the peer's revision.
pub async fn read(p: &mut Peer, uri: &str) -> serde_json::Value {
    p.call("resources/read", serde_json::json!({ "uri": uri }))
        .await
}

/// The URIs of a listing response, in order.
pub fn listed_uris(resp: &serde_json::Value) -> Vec<&str> {
    resp["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("not a listing: {resp}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap_or_default())
        .collect()
}
