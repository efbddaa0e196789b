//! The client's settings ([`ClientOptions`]): how it introduces itself, its timeouts, which
//! era it speaks, the longest message it accepts, the headers it sends over HTTP and the
//! trace context its requests carry.
//!
//! Invariant: every setting has a bounded default (a request 30 s, the era probe 5 s, a
//! message 256 MiB), so a client built with `ClientOptions::default()` never waits or
//! buffers without limit.

use std::sync::Arc;
use std::time::Duration;

use rsrc_protocol::{Implementation, ProtocolVersion};

/// The target of the client's CLIENT span for each request (`mcp.request`).
pub const CLIENT_TARGET: &str = "rsrc::client";

/// How the client picks an era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EraPreference {
    /// Probe with `server/discover`, fall back to `initialize` (the default).
    #[default]
    Auto,
    /// Only 2026-07-28: fail if the server does not speak it.
    Modern,
    /// Only the `initialize` handshake, asking for this revision.
    Legacy(ProtocolVersion),
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// How the client introduces itself.
    pub client_info: Implementation,
    /// How long a request may take (default 30 s).
    pub request_timeout: Duration,
    /// How long the `server/discover` probe may take before assuming a legacy server
    /// (default 5 s).
    pub probe_timeout: Duration,
    /// Which era to speak.
    pub era: EraPreference,
    /// Longest accepted message from the server, in bytes (default 256 MiB).
    pub max_message: usize,
    /// Headers sent with every HTTP request (e.g. `Authorization`).
    pub http_headers: Vec<(String, String)>,
    /// What each request carries in `params._meta` to continue the caller's trace
    /// (SEP-414: `traceparent`, `tracestate`, `baggage`); none by default.
    pub trace_context: Option<TraceContext>,
}

/// Gives the trace context of the request about to be sent, as `_meta` members, called
/// inside that request's span (`mcp.request`, target [`CLIENT_TARGET`]): with
/// `tracing-opentelemetry`, the W3C propagator's fields of `Span::current()`.
#[derive(Clone)]
pub struct TraceContext(pub Arc<dyn Fn() -> Vec<(String, String)> + Send + Sync>);

impl std::fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceContext(..)")
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            client_info: Implementation::new("rsrc", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(30),
            probe_timeout: Duration::from_secs(5),
            era: EraPreference::Auto,
            max_message: 256 * 1024 * 1024,
            http_headers: Vec::new(),
            trace_context: None,
        }
    }
}
