//! `rsrc-http`: the Streamable HTTP server transport of an [`rsrc::Server`]: one endpoint
//! (default `/mcp`) serving both protocol eras, with secure defaults.
//!
//! A request first passes the checks every request passes (`admit.rs`: headers stated
//! once, `Host` and `Origin`, no token in the query, the bearer token; for a POST its
//! content type, what it accepts and its body), then per method; a POST's
//! `MCP-Protocol-Version` header picks the era:
//! - a 2026-07-28 value: stateless (`modern.rs`) — the `Mcp-Method`/`Mcp-Name` headers are
//!   checked against the body, each request is served on a session of its own, and
//!   closing its stream cancels it;
//! - a 2025 value, or none (2025-03-26 assumed): sessions with `Mcp-Session-Id`, the GET
//!   stream and `Last-Event-ID` resumption (`legacy/`, over the session table of
//!   `table/`);
//! - anything else: 400 with `-32022` and the supported versions.
//!
//! The layout, top down: `serve.rs` the accept loop ([`serve_http`]); `service.rs` the
//! [`HttpService`] (the router, and the dispatch by method and era); `admit.rs`,
//! `modern.rs` and `legacy/` the rules, each taking the endpoint's state (`state.rs`),
//! never the service; beneath them `respond.rs` the responses both eras share,
//! `pieces.rs` a message's bytes as the connection drains, `sse/` the event streams and
//! their replay logs, `checks.rs` the header values compared, `auth.rs` bearer tokens,
//! `config.rs` the settings, `stall.rs` the writer that must make progress. The wire
//! rules both ends share (header names, the base64 sentinel, SSE framing) are
//! `rsrc_protocol::http`'s.
//!
//! This file is a facade: module declarations and re-exports only.
//!
//! Invariants:
//! - A response only ever answers the HTTP request that asked: replies are never routed
//!   by JSON-RPC id, so clients reusing ids cannot see each other's results.
//! - A rejected request allocates no session; sessions are capped and expire when idle.
//! - Every wait is bounded: header reads, body reads, idle keep-alive connections.

#![allow(
    clippy::result_large_err,
    reason = "a refused request is answered with its response, built where it is refused"
)]

mod admit;
mod auth;
mod checks;
mod config;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod legacy;
mod lock;
mod modern;
mod pieces;
mod respond;
mod serve;
mod service;
mod sse;
mod stall;
mod state;
mod table;

pub use auth::{AuthConfig, TokenVerifier};
#[cfg(feature = "jwt")]
pub use auth::{JwtError, JwtVerifier};
pub use config::HttpConfig;
pub use serve::serve_http;
pub use service::HttpService;
