//! The client itself ([`Client`]): how it connects (a byte stream, an HTTP endpoint, an
//! engine in memory), what it learned of the server, and how every request is sent.
//!
//! Invariants: the era is negotiated before a [`Client`] exists, so every request it sends
//! is of that era (a modern one carries its `_meta`); every request runs in a CLIENT span
//! of its own (target [`CLIENT_TARGET`]) and under the request timeout.

use std::sync::Arc;

use rsrc_protocol::methods::Method;
use rsrc_protocol::{ProtocolVersion, RequestMeta};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::description::ServerDescription;
use crate::era::negotiate;
use crate::error::ClientError;
#[cfg(feature = "http")]
use crate::http;
use crate::io::{self, Notification};
use crate::link::Link;
use crate::options::{CLIENT_TARGET, ClientOptions, TraceContext};

/// A connected client. Cheap to clone; clones share the connection.
#[derive(Clone, Debug)]
pub struct Client {
    pub(crate) conn: Arc<Link>,
    pub(crate) server: Arc<ServerDescription>,
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
    #[cfg(feature = "http")]
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
        server: &rsrc::Server,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let stream =
            rsrc::transport::serve_in_memory(server, rsrc::transport::StreamConfig::default());
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

    pub(crate) fn meta(&self) -> Option<RequestMeta> {
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
            target: CLIENT_TARGET,
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
