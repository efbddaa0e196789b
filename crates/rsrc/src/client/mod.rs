//! A client for any MCP server's resources, speaking both eras.
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
//! This file holds the client, its settings and errors, and the connection under it;
//! beside it, `era.rs` picks the era when connecting, `calls.rs` has the typed calls
//! (list, read, metadata, complete, ping), `paging.rs` the helpers that follow cursors,
//! `filter.rs` listings narrowed by a SEP-2564 filter (by the server or here),
//! `metadata.rs` rsrc's SEP-2093 extension, used only where the server declares it
//! (`described.rs` what it finds without it),
//! `watch.rs` subscriptions and the changes they report, `process.rs` a stdio server the
//! client starts (and the tail of its stderr), and `io.rs` and `http.rs` the byte-stream
//! and Streamable HTTP connections.

mod calls;
mod described;
mod era;
mod filter;
#[cfg(feature = "http-client")]
mod http;
mod io;
mod metadata;
mod paging;
mod process;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};
use rsrc_protocol::methods::Method;
use rsrc_protocol::{Implementation, ProtocolVersion, RequestMeta, ServerCapabilities};
use tokio::io::{AsyncRead, AsyncWrite};

pub use described::{Described, Via, below};
use era::negotiate;
pub use filter::{Filtered, anywhere, expressible, in_any_segment, spellings};
pub use io::Notification;
pub use paging::Collected;
pub use process::{LINE_BYTES, SpawnError, Spawned, StderrTail, TAIL_LINES};
pub use watch::{Change, Watch};

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
/// inside that request's span (`mcp.request`, target `rsrc::client`): with
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

/// Why a client call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with an error.
    Rpc(ErrorObject),
    /// No answer within the timeout.
    Timeout,
    /// The connection is closed.
    Closed,
    /// The server's answer does not fit the protocol.
    Protocol(String),
    /// An I/O failure (e.g. spawning the server).
    Io(std::io::Error),
    /// The call needs something the server does not declare (rsrc's SEP-2093
    /// extension): nothing was sent.
    NotOffered(String),
    /// An HTTP error status without a JSON-RPC error in the body.
    Http {
        /// The status code.
        status: u16,
        /// The beginning of the body.
        message: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Rpc(e) => write!(
                f,
                "the server returned an error: {} ({})",
                e.message, e.code
            ),
            ClientError::Timeout => f.write_str("the server did not answer in time"),
            ClientError::Closed => f.write_str("the connection to the server is closed"),
            ClientError::Protocol(m) => write!(f, "protocol error: {m}"),
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::NotOffered(m) => f.write_str(m),
            ClientError::Http { status, message } if message.is_empty() => {
                write!(f, "HTTP {status}")
            }
            ClientError::Http { status, message } => write!(f, "HTTP {status}: {message}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl ClientError {
    /// The server's error object, if the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the server said it does not know the method.
    pub fn is_method_not_found(&self) -> bool {
        self.rpc()
            .is_some_and(|e| e.code == ErrorCode::METHOD_NOT_FOUND)
    }
}

/// What the client learned about the server when connecting.
#[derive(Debug, Clone)]
pub struct ServerDescription {
    /// The revision in use.
    pub version: ProtocolVersion,
    /// The revision string the server named (for legacy servers older than 2025-06-18
    /// this differs from `version`, which is then the closest modelled revision).
    pub version_string: String,
    /// The server's name and version, if it said.
    pub info: Option<Implementation>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
}

/// A connected client. Cheap to clone; clones share the connection.
#[derive(Clone, Debug)]
pub struct Client {
    conn: Arc<Link>,
    server: Arc<ServerDescription>,
}

/// The connection under a client: a byte stream, or an HTTP endpoint.
#[derive(Debug)]
enum Link {
    Stream(Box<io::Connection>),
    #[cfg(feature = "http-client")]
    Http(http::HttpLink),
}

impl Link {
    fn options(&self) -> &ClientOptions {
        match self {
            Link::Stream(c) => c.options(),
            #[cfg(feature = "http-client")]
            Link::Http(h) => h.options(),
        }
    }

    fn take_notifications(&self) -> Option<tokio::sync::mpsc::Receiver<Notification>> {
        match self {
            Link::Stream(c) => c.take_notifications(),
            #[cfg(feature = "http-client")]
            Link::Http(h) => h.take_notifications(),
        }
    }

    async fn request<M: Method>(
        &self,
        params: &M::Params,
        meta: Option<&RequestMeta>,
        timeout: Duration,
    ) -> Result<M::Result, ClientError> {
        match self {
            Link::Stream(c) => c.request::<M>(params, meta, timeout).await,
            #[cfg(feature = "http-client")]
            Link::Http(h) => h.request::<M>(params, meta, timeout).await,
        }
    }

    async fn notify<N: rsrc_protocol::methods::NotificationMethod>(
        &self,
        params: &N::Params,
    ) -> Result<(), ClientError> {
        match self {
            Link::Stream(c) => c.notify::<N>(params).await,
            #[cfg(feature = "http-client")]
            Link::Http(h) => h.notify::<N>(params).await,
        }
    }
}

/// `params` as a JSON object, with `meta` as its `_meta` when given.
fn with_meta<P: serde::Serialize>(
    params: &P,
    meta: Option<&RequestMeta>,
    method: &str,
) -> Result<serde_json::Value, ClientError> {
    let mut value = serde_json::to_value(params)
        .map_err(|e| ClientError::Protocol(format!("cannot encode {method} params: {e}")))?;
    if let (Some(meta), Some(obj)) = (meta, value.as_object_mut()) {
        let meta = serde_json::to_value(meta)
            .map_err(|e| ClientError::Protocol(format!("cannot encode _meta: {e}")))?;
        obj.insert("_meta".into(), meta);
    }
    Ok(value)
}

impl Client {
    /// Connects over a byte stream and negotiates the era.
    pub async fn connect<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
    ) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let conn = Arc::new(Link::Stream(Box::new(io::Connection::start(
            reader, writer, options,
        ))));
        let server = negotiate(&conn).await?;
        Ok(Client {
            conn,
            server: Arc::new(server),
        })
    }

    /// Connects to a Streamable HTTP endpoint (`http://…/mcp` or `https://…`) and
    /// negotiates the era.
    #[cfg(feature = "http-client")]
    pub async fn connect_http(url: &str, options: ClientOptions) -> Result<Client, ClientError> {
        let conn = Arc::new(Link::Http(http::HttpLink::new(url, options)?));
        let server = negotiate(&conn).await?;
        Ok(Client {
            conn,
            server: Arc::new(server),
        })
    }

    /// Connects to `server` in memory.
    pub async fn in_memory(
        server: &crate::Server,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let stream =
            crate::transport::serve_in_memory(server, crate::transport::StreamConfig::default());
        let (r, w) = tokio::io::split(stream);
        Client::connect(r, w, options).await
    }

    /// What the server said about itself.
    pub fn server(&self) -> &ServerDescription {
        &self.server
    }

    /// The revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.server.version
    }

    /// Takes the stream of notifications from the server (once; later calls get `None`).
    pub fn take_notifications(&self) -> Option<tokio::sync::mpsc::Receiver<Notification>> {
        self.conn.take_notifications()
    }

    fn meta(&self) -> Option<RequestMeta> {
        let options = self.conn.options();
        let mut meta = self.server.version.is_modern().then(|| {
            RequestMeta::modern(self.server.version.as_str(), options.client_info.clone())
        });
        if let Some(TraceContext(fields)) = &options.trace_context {
            for (name, value) in fields() {
                meta.get_or_insert_with(RequestMeta::default)
                    .other
                    .insert(name, serde_json::Value::String(value));
            }
        }
        meta
    }

    /// Sends any request and decodes its result, in a CLIENT span of its own.
    pub async fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result, ClientError> {
        use tracing::Instrument as _;
        let span = tracing::info_span!(
            target: crate::observe::CLIENT_TARGET,
            "mcp.request",
            otel.name = M::NAME,
            otel.kind = "client",
            mcp.method.name = M::NAME,
            mcp.protocol.version = self.server.version.as_str(),
        );
        async {
            self.conn
                .request::<M>(
                    params,
                    self.meta().as_ref(),
                    self.conn.options().request_timeout,
                )
                .await
        }
        .instrument(span)
        .await
    }
}
