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

#[cfg(feature = "http-client")]
mod http;
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
use rsrc_protocol::subscriptions::{SubscriptionFilter, SubscriptionsListenParams};
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
    /// Headers sent with every HTTP request (e.g. `Authorization`).
    pub http_headers: Vec<(String, String)>,
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

/// A change a server reported on a [`Watch`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// The resource at this URI changed.
    Updated(String),
    /// The set of resources changed.
    ListChanged,
}

/// Subscriptions to resources (`resources/subscribe` in the 2025 revisions, one
/// `subscriptions/listen` stream in 2026-07-28) and the changes reported for them. Dropping
/// it ends a listen stream; legacy subscriptions end with the connection.
#[derive(Debug)]
pub struct Watch {
    notes: tokio::sync::mpsc::Receiver<Notification>,
    accepted: Vec<String>,
    list_changes: bool,
    stream: Option<tokio::task::JoinHandle<()>>,
}

impl Watch {
    /// The URIs the server agreed to report on.
    pub fn accepted(&self) -> &[String] {
        &self.accepted
    }

    /// The next change, or `None` once the connection (or the listen stream) ended.
    pub async fn next(&mut self) -> Option<Change> {
        loop {
            let note = self.notes.recv().await?;
            match note.method.as_str() {
                "notifications/resources/updated" => {
                    if let Some(uri) = note.params.get("uri").and_then(|u| u.as_str())
                        && self.accepted.iter().any(|a| a == uri)
                    {
                        return Some(Change::Updated(uri.to_owned()));
                    }
                }
                "notifications/resources/list_changed" if self.list_changes => {
                    return Some(Change::ListChanged);
                }
                _ => {}
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            stream.abort();
        }
    }
}

/// How long a listen request may stay open: for as long as anyone watches.
const LISTEN_FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl Client {
    /// Subscribes to `uris` (and to list changes when `list_changes`), in the way the
    /// connection's revision offers. Takes the client's notifications: a client watches
    /// once.
    pub async fn watch(&self, uris: &[String], list_changes: bool) -> Result<Watch, ClientError> {
        let mut notes = self.take_notifications().ok_or_else(|| {
            ClientError::Protocol("this client's notifications are already taken".into())
        })?;
        if !self.server.version.is_modern() {
            for uri in uris {
                self.request::<methods::Subscribe>(&ResourceParams {
                    uri: uri.clone(),
                    meta: None,
                })
                .await?;
            }
            return Ok(Watch {
                notes,
                accepted: uris.to_vec(),
                list_changes,
                stream: None,
            });
        }
        let params = SubscriptionsListenParams {
            notifications: SubscriptionFilter {
                resources_list_changed: list_changes.then_some(true),
                resource_subscriptions: Some(uris.to_vec()),
                ..SubscriptionFilter::default()
            },
            meta: None,
        };
        let stream = match &*self.conn {
            Link::Stream(_) => {
                let client = self.clone();
                Some(tokio::spawn(async move {
                    let r = client
                        .conn
                        .request::<methods::SubscriptionsListen>(
                            &params,
                            client.meta().as_ref(),
                            LISTEN_FOREVER,
                        )
                        .await;
                    tracing::debug!(outcome = ?r.map(drop), "the listen stream ended");
                }))
            }
            #[cfg(feature = "http-client")]
            Link::Http(h) => {
                let value = serde_json::to_value(&params)
                    .map_err(|e| ClientError::Protocol(format!("cannot encode the filter: {e}")))?;
                let meta = self.meta().unwrap_or_default();
                Some(h.listen(value, &meta).await?)
            }
        };
        // The acknowledgement says what will be reported.
        let timeout = self.conn.options().request_timeout;
        let ack = tokio::time::timeout(timeout, async {
            while let Some(note) = notes.recv().await {
                if note.method == "notifications/subscriptions/acknowledged" {
                    return Some(note);
                }
            }
            None
        })
        .await
        .map_err(|_| ClientError::Timeout)?
        .ok_or(ClientError::Closed)?;
        let accepted: SubscriptionFilter = ack
            .params
            .get("notifications")
            .and_then(|n| serde_json::from_value(n.clone()).ok())
            .unwrap_or_default();
        Ok(Watch {
            notes,
            accepted: accepted.resource_subscriptions.unwrap_or_default(),
            list_changes: accepted.resources_list_changed == Some(true),
            stream,
        })
    }

    /// Every resource (or every child of `collection`), page after page as they are
    /// needed, for at most `max_pages` pages (then an error names the cap).
    pub fn resources(
        &self,
        collection: Option<String>,
        max_pages: usize,
    ) -> impl futures_util::Stream<Item = Result<Resource, ClientError>> + '_ {
        paged(max_pages, move |cursor| {
            let uri = collection.clone();
            async move {
                let page = self.list_resources(cursor, uri).await?;
                Ok((page.resources, page.next_cursor))
            }
        })
    }

    /// Every template, page after page, for at most `max_pages` pages.
    pub fn templates(
        &self,
        max_pages: usize,
    ) -> impl futures_util::Stream<Item = Result<ResourceTemplate, ClientError>> + '_ {
        paged(max_pages, move |cursor| async move {
            let page = self.list_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
    }
}

/// Items of a paginated listing as a stream: pages fetched as the stream is read, cursors
/// followed for at most `max_pages` pages, a repeated cursor an error.
fn paged<'a, T, F, Fut>(
    max_pages: usize,
    fetch: F,
) -> impl futures_util::Stream<Item = Result<T, ClientError>> + 'a
where
    T: 'a,
    F: Fn(Option<String>) -> Fut + 'a,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>> + 'a,
{
    struct State<T> {
        buffered: std::collections::VecDeque<T>,
        cursor: Option<String>,
        pages: usize,
        seen: std::collections::HashSet<String>,
        done: bool,
    }
    let state = State {
        buffered: std::collections::VecDeque::new(),
        cursor: None,
        pages: 0,
        seen: std::collections::HashSet::new(),
        done: false,
    };
    futures_util::stream::unfold((state, fetch), move |(mut st, fetch)| async move {
        loop {
            if let Some(item) = st.buffered.pop_front() {
                return Some((Ok(item), (st, fetch)));
            }
            if st.done {
                return None;
            }
            if st.pages == max_pages.max(1) {
                st.done = true;
                let e = ClientError::Protocol(format!("more than {max_pages} pages: stopped"));
                return Some((Err(e), (st, fetch)));
            }
            st.pages += 1;
            match fetch(st.cursor.take()).await {
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), (st, fetch)));
                }
                Ok((items, next)) => {
                    st.buffered.extend(items);
                    match next {
                        None => st.done = true,
                        Some(c) if !st.seen.insert(c.clone()) => {
                            st.done = true;
                            let e = ClientError::Protocol(format!(
                                "the server repeated the cursor {c:?}"
                            ));
                            st.buffered.clear();
                            return Some((Err(e), (st, fetch)));
                        }
                        Some(c) => st.cursor = Some(c),
                    }
                }
            }
        }
    })
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

async fn negotiate(conn: &Link) -> Result<ServerDescription, ClientError> {
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
    conn: &Link,
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
    #[cfg(feature = "http-client")]
    if let Link::Http(h) = conn {
        h.legacy_session(&result.protocol_version);
    }
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
