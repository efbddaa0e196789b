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

mod io;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rsrc_protocol::completion::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, Completion, Reference,
};
use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};
use rsrc_protocol::lifecycle::{
    ClientCapabilities, DiscoverResult, EmptyParams, InitializeParams, InitializeResult,
};
use rsrc_protocol::methods::{self, Method};
use rsrc_protocol::resources::{
    EmptyNotificationParams, ListResourceTemplatesParams, ListResourceTemplatesResult,
    ListResourcesParams, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    ResourceParams,
};
use rsrc_protocol::{
    Implementation, ProtocolVersion, RequestMeta, Resource, ResourceTemplate, ServerCapabilities,
};
use tokio::io::{AsyncRead, AsyncWrite};

pub use io::Notification;

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
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            client_info: Implementation::new("rsrc", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(30),
            probe_timeout: Duration::from_secs(5),
            era: EraPreference::Auto,
            max_message: 256 * 1024 * 1024,
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

/// Every item of a paginated listing, and whether the page cap cut it short.
#[derive(Debug, Clone, Default)]
pub struct Collected<T> {
    /// The items, in server order.
    pub items: Vec<T>,
    /// `true` if more pages existed beyond the cap.
    pub truncated: bool,
}

/// A connected client. Cheap to clone; clones share the connection.
#[derive(Clone, Debug)]
pub struct Client {
    conn: Arc<io::Connection>,
    server: Arc<ServerDescription>,
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
        let conn = Arc::new(io::Connection::start(reader, writer, options));
        let server = negotiate(&conn).await?;
        Ok(Client {
            conn,
            server: Arc::new(server),
        })
    }

    /// Starts a server process with `command` and connects over its stdin/stdout. The
    /// process's stderr is inherited; it is killed when the returned child is dropped.
    pub async fn spawn(
        command: &mut tokio::process::Command,
        options: ClientOptions,
    ) -> Result<(Client, tokio::process::Child), ClientError> {
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Protocol("the child has no stdio pipes".into()));
        };
        let client = Client::connect(stdout, stdin, options).await?;
        Ok((client, child))
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
        self.server.version.is_modern().then(|| {
            RequestMeta::modern(
                self.server.version.as_str(),
                self.conn.options().client_info.clone(),
            )
        })
    }

    /// Sends any request and decodes its result.
    pub async fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result, ClientError> {
        self.conn
            .request::<M>(
                params,
                self.meta().as_ref(),
                self.conn.options().request_timeout,
            )
            .await
    }

    /// One page of `resources/list` (of a collection's children when `uri` is given).
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
        uri: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.request::<methods::ListResources>(&ListResourcesParams {
            cursor,
            uri,
            meta: None,
        })
        .await
    }

    /// Every resource (or every child of `uri`), following cursors for at most `max_pages`
    /// pages.
    pub async fn list_all_resources(
        &self,
        uri: Option<&str>,
        max_pages: usize,
    ) -> Result<Collected<Resource>, ClientError> {
        collect(max_pages, |cursor| async move {
            let page = self.list_resources(cursor, uri.map(str::to_owned)).await?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.request::<methods::ListResourceTemplates>(&ListResourceTemplatesParams {
            cursor,
            meta: None,
        })
        .await
    }

    /// Every template, following cursors for at most `max_pages` pages.
    pub async fn list_all_templates(
        &self,
        max_pages: usize,
    ) -> Result<Collected<ResourceTemplate>, ClientError> {
        collect(max_pages, |cursor| async move {
            let page = self.list_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Reads a resource.
    pub async fn read(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request::<methods::ReadResource>(&ReadResourceParams {
            uri: uri.to_owned(),
            ..ReadResourceParams::default()
        })
        .await
    }

    /// A resource's metadata (`resources/metadata`, SEP-2093).
    pub async fn metadata(&self, uri: &str) -> Result<Resource, ClientError> {
        self.request::<methods::ResourceMetadata>(&ResourceParams {
            uri: uri.to_owned(),
            meta: None,
        })
        .await
        .map(|r| r.resource)
    }

    /// Completion values for `argument` of `template`, given what was typed and the
    /// variables already chosen.
    pub async fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<Completion, ClientError> {
        let params = CompleteParams {
            reference: Reference::Resource {
                uri: template.to_owned(),
            },
            argument: CompleteArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: (!context.is_empty()).then_some(CompleteContext {
                arguments: Some(context),
            }),
            meta: None,
        };
        self.request::<methods::Complete>(&params)
            .await
            .map(|r: CompleteResult| r.completion)
    }

    /// Pings a legacy server (2026-07-28 has no `ping`: it asks `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.server.version.is_modern() {
            self.request::<methods::Discover>(&EmptyParams::default())
                .await
                .map(drop)
        } else {
            self.request::<methods::Ping>(&EmptyParams::default())
                .await
                .map(drop)
        }
    }
}

/// Follows cursors: `fetch(cursor)` returns a page and the next cursor.
async fn collect<T, F, Fut>(max_pages: usize, mut fetch: F) -> Result<Collected<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut out = Collected {
        items: Vec::new(),
        truncated: false,
    };
    let mut seen = std::collections::HashSet::new();
    let mut cursor = None;
    for _ in 0..max_pages.max(1) {
        let (items, next) = fetch(cursor).await?;
        out.items.extend(items);
        match next {
            None => return Ok(out),
            Some(c) if !seen.insert(c.clone()) => {
                return Err(ClientError::Protocol(format!(
                    "the server repeated the cursor {c:?}"
                )));
            }
            Some(c) => cursor = Some(c),
        }
    }
    out.truncated = true;
    Ok(out)
}

fn modern_versions(list: &[String]) -> Option<ProtocolVersion> {
    list.iter()
        .filter_map(|s| s.parse::<ProtocolVersion>().ok())
        .filter(|v| v.is_modern())
        .max()
}

async fn negotiate(conn: &io::Connection) -> Result<ServerDescription, ClientError> {
    let options = conn.options().clone();
    let legacy_version = match options.era {
        EraPreference::Legacy(v) => return initialize(conn, v).await,
        EraPreference::Modern | EraPreference::Auto => ProtocolVersion::LATEST_LEGACY,
    };
    let strict = options.era == EraPreference::Modern;
    let probe = |version: ProtocolVersion| {
        let meta = RequestMeta::modern(version.as_str(), options.client_info.clone());
        async move {
            conn.request::<methods::Discover>(
                &EmptyParams::default(),
                Some(&meta),
                options.probe_timeout,
            )
            .await
        }
    };
    let modern = match probe(ProtocolVersion::LATEST).await {
        Ok(d) => Ok(d),
        // A modern server that prefers another modern revision says so.
        Err(ClientError::Rpc(e)) if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Vec<String> = e
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .unwrap_or_default();
            match modern_versions(&supported) {
                Some(v) => probe(v).await,
                None => Err(ClientError::Rpc(e)),
            }
        }
        Err(e) => Err(e),
    };
    match modern {
        Ok(d) => match modern_versions(&d.supported_versions) {
            Some(version) => Ok(describe_modern(version, d)),
            None if strict => Err(ClientError::Protocol(format!(
                "the server supports none of this client's modern revisions: {:?}",
                d.supported_versions
            ))),
            None => initialize(conn, legacy_version).await,
        },
        Err(ClientError::Closed) => Err(ClientError::Closed),
        Err(e) if strict => Err(e),
        Err(e) => {
            tracing::debug!(error = %e, "server/discover failed: assuming a legacy server");
            initialize(conn, legacy_version).await
        }
    }
}

fn describe_modern(version: ProtocolVersion, d: DiscoverResult) -> ServerDescription {
    ServerDescription {
        version,
        version_string: version.as_str().to_owned(),
        info: d.meta.and_then(|m| m.server_info),
        capabilities: d.capabilities,
        instructions: d.instructions,
    }
}

async fn initialize(
    conn: &io::Connection,
    version: ProtocolVersion,
) -> Result<ServerDescription, ClientError> {
    let options = conn.options();
    let params = InitializeParams {
        protocol_version: version.as_str().to_owned(),
        capabilities: ClientCapabilities::default(),
        client_info: Some(options.client_info.clone()),
        meta: None,
    };
    let result: InitializeResult = conn
        .request::<methods::Initialize>(&params, None, options.request_timeout)
        .await?;
    let negotiated = match result.protocol_version.parse::<ProtocolVersion>() {
        Ok(v) if !v.is_modern() => v,
        Ok(v) => {
            return Err(ClientError::Protocol(format!(
                "the server negotiated {v} through initialize"
            )));
        }
        // Older legacy revisions list, read and subscribe the same way; speak to them as to
        // the oldest modelled one.
        Err(_) => ProtocolVersion::V2025_06_18,
    };
    conn.notify::<methods::Initialized>(&EmptyNotificationParams::default())
        .await?;
    Ok(ServerDescription {
        version: negotiated,
        version_string: result.protocol_version,
        info: Some(result.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
