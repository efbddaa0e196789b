//! [`HttpConfig`]: the settings of the HTTP transport, with their defaults.
//!
//! Invariant: every default is a bound, and every bound a request, a session or a stream
//! can reach is here: body size and time, header time, connections, sessions, streams,
//! requests in flight, notifications queued, replay kept, a stalled reader's patience.

use std::time::Duration;

use crate::auth::AuthConfig;

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The MCP endpoint (default `/mcp`).
    pub path: String,
    /// `Host` values accepted; empty means the loopback names with the bound port. `"*"`
    /// accepts any (only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted when the header is present; empty means the default
    /// hosts over http and https. `"*"` accepts any.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes (default 4 MiB).
    pub max_body: usize,
    /// Longest time to receive a request body (default 30 s).
    pub body_timeout: Duration,
    /// Longest time to receive a request's headers, and to wait for the next request on
    /// an idle keep-alive connection (default 10 s).
    pub header_read_timeout: Duration,
    /// Most connections open at once; more wait in the listen backlog (default 1024).
    pub max_connections: usize,
    /// How long a response may wait on a client that does not read it before the
    /// connection is closed: in every such period at least 16 KiB must be sent
    /// (default 30 s).
    pub write_stall_timeout: Duration,
    /// Most legacy sessions at once (default 4096).
    pub max_sessions: usize,
    /// A legacy session unused this long ends (default 30 min).
    pub session_idle: Duration,
    /// Interval of SSE keep-alive comments on idle streams (default 15 s).
    pub keep_alive: Duration,
    /// Notifications queued per request; more are dropped (default 256).
    pub notification_queue: usize,
    /// Requests running at once in one legacy session; more get 429 (default 64).
    pub max_in_flight: usize,
    /// Long-lived streams open at once (GET streams, `subscriptions/listen`); more get
    /// 503, so that they cannot take every connection (default 256).
    pub max_streams: usize,
    /// Events kept per legacy stream for `Last-Event-ID` replay (default 1024).
    pub replay_events: usize,
    /// Bytes kept per legacy stream for replay, beyond its newest event (default 1 MiB).
    pub replay_bytes: usize,
    /// Bytes kept for replay by all streams together, beyond each one's newest event
    /// (default 64 MiB).
    pub replay_budget: usize,
    /// How long in-flight requests may run once shutdown begins (default 10 s).
    pub shutdown_grace: Duration,
    /// Bearer-token authentication; `None` serves without it.
    pub auth: Option<AuthConfig>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1024,
            max_sessions: 4096,
            session_idle: Duration::from_secs(30 * 60),
            keep_alive: Duration::from_secs(15),
            notification_queue: 256,
            max_in_flight: 64,
            max_streams: 256,
            replay_events: 1024,
            replay_bytes: 1024 * 1024,
            replay_budget: 64 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
            write_stall_timeout: Duration::from_secs(30),
            auth: None,
        }
    }
}
