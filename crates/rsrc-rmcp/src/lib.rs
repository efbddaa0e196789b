//! `rsrc-rmcp`: rsrc's resources inside an [rmcp](rmcp) server. A server built on rmcp
//! keeps its tools and prompts and gains what rsrc serves — `#[resources]` types,
//! `ResourceSet`s, every `rsrc-providers` source, a whole `rsrc::Router` — with rsrc's
//! listing, sealed cursors, templates, completion, read cache, subscriptions and both
//! protocol eras.
//!
//! ```no_run
//! use rmcp::{ServerHandler, ServiceExt};
//! use rsrc_rmcp::{Resources, resource_handler};
//!
//! #[derive(Clone)]
//! struct MyServer {
//!     resources: Resources,
//! }
//!
//! #[resource_handler] // supplies list_resources, read_resource, subscribe, listen, …
//! impl ServerHandler for MyServer {}
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let docs = rsrc::ResourceSet::new().with_text(
//!     rsrc::protocol::Resource::new("docs:///hello", "hello"),
//!     "Hello!",
//! );
//! let server = rsrc::Server::builder("my-server", "1.0").mount("docs:", docs).build()?;
//! let handler = MyServer { resources: Resources::new(server) };
//! handler.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(()) }
//! ```
//!
//! [`Resources`] holds the engine (an [`rsrc::Server`]) and has one method per
//! `ServerHandler` method it answers, with the same signature; `#[resource_handler]`
//! writes the delegations (and merges the capabilities into `get_info`), or write them by
//! hand. `docs/rmcp.md` is the guide: what is supplied, how tool code announces changes
//! ([`Resources::changes`], `ServerBuilder::mount_announced`), and what rmcp's types
//! cannot carry. The engine runs through its typed host API (`rsrc::server::HostRequest`):
//! no JSON passes between rmcp and the engine on a request's way.
//!
//! Invariants: every answer is the engine's own, for the revision the engine decides
//! from the same inputs as on rsrc's own server (`engine.rs`), decoded into rmcp's
//! types; what those types have no place for is left out, never moved elsewhere
//! (`convert.rs`). A clone of [`Resources`] is a new connection's view (its own 2025
//! session and subscriptions) of the same engine, cache and change feed.

mod convert;
mod engine;
mod listed;

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, DiscoverResult, ErrorData,
    GetSkillRequestParams, GetSkillResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rsrc::protocol::resources as ours;
use rsrc::protocol::resources::ResourceMetadataExtension;
use rsrc::server::{HostRequest, Reply};
use rsrc::{ChangeFeed, ListEntry, Server};
use serde_json::{Map, Value};

use engine::Mode;

/// The rmcp this crate is built with, for the code `#[resource_handler]` writes.
pub use rmcp;
/// The engine this crate drives.
pub use rsrc;
/// Supplies the resource methods of an `impl ServerHandler` from a [`Resources`] field
/// (`#[resource_handler]` uses `self.resources`; `#[resource_handler(resources =
/// self.other)]` names another expression). It writes the methods the impl does not
/// have — `list_resources`, `list_resource_templates`, `read_resource`, `subscribe`,
/// `unsubscribe`, `accepted_subscription_filter`, `listen`, `list_skills`, `get_skill`,
/// `read_resource_directory`, `supported_protocol_versions`, `discover` — and wraps those
/// it shares with the impl: `get_info` (capabilities merged), `complete` (prompt
/// references go to yours), `set_level`, `on_initialized` (yours runs too) and
/// `on_custom_request` (what the engine does not serve goes to yours).
#[cfg(feature = "macros")]
pub use rsrc_rmcp_macros::resource_handler;

/// Standard input and output for rmcp's stdio transport, driven as rsrc's own server
/// drives them: pipes and sockets on the runtime's reactor, with no blocking-thread hop
/// per message as `rmcp::transport::stdio()` makes (tokio's stdio); anything else (a
/// terminal, a file) through tokio's stdio. Serve with `handler.serve(rsrc_rmcp::stdio()?)`.
/// When standard input ends, every connection's session closes gracefully: an open
/// `subscriptions/listen` stream ends with its result, so the server exits at once
/// rather than after rmcp's drain timeout. The pipes go back to blocking mode when rmcp
/// drops them.
#[cfg(feature = "transport-io")]
pub fn stdio() -> std::io::Result<(Stdin, rsrc::transport::StdoutStream)> {
    let (stdin, stdout) = rsrc::transport::stdio_streams()?;
    engine::SERVES_STDIN.store(true, std::sync::atomic::Ordering::Release);
    Ok((Stdin(stdin), stdout))
}

/// Standard input as [`stdio`] gives it: rsrc's reader, which closes the connections'
/// sessions when it reaches the end.
#[cfg(feature = "transport-io")]
#[derive(Debug)]
pub struct Stdin(rsrc::transport::StdinStream);

#[cfg(feature = "transport-io")]
impl tokio::io::AsyncRead for Stdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.0).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled
            && buf.filled().len() == before
            && buf.remaining() > 0
        {
            engine::stdin_closed().cancel();
        }
        polled
    }
}

/// The revisions the engine speaks, newest first as its `server/discover` lists them:
/// what `supported_protocol_versions` answers.
const REVISIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
];

/// rsrc's resources, answered inside an rmcp `ServerHandler`: put one in your handler
/// and let [`resource_handler`] delegate to it, or call its methods from yours.
///
/// Cheap to clone. A clone shares the engine (providers, read cache, change feed) and
/// starts a connection of its own: rmcp's Streamable HTTP service makes one handler per
/// session with its factory (`move || Ok(handler.clone())`), so every session keeps its
/// own subscriptions.
pub struct Resources {
    shared: Arc<Shared>,
    connection: engine::Connection,
}

struct Shared {
    server: Server,
    /// The engine's capabilities in rmcp's form, read once: they are fixed when the
    /// engine is built.
    capabilities: ServerCapabilities,
    /// rmcp's forms of the resources listed so far (`listed.rs`).
    listed: listed::Listed,
}

impl Clone for Resources {
    fn clone(&self) -> Self {
        Resources {
            shared: Arc::clone(&self.shared),
            connection: engine::Connection::default(),
        }
    }
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("server", &self.shared.server)
            .field("connection", &self.connection)
            .finish()
    }
}

/// What [`Resources::on_custom_request`] did with a request.
#[derive(Debug)]
pub enum CustomOutcome {
    /// The engine served it (`resources/metadata`, an extension method, or an engine
    /// method whose params rmcp could not decode, refused as rsrc refuses it).
    Answered(Result<CustomResult, ErrorData>),
    /// The engine does not serve this method: the request is yours.
    NotServed(CustomRequest, RequestContext<RoleServer>),
}

impl Resources {
    /// Serves `server`'s resources. The server is built as for rsrc's own transports
    /// (`rsrc::Server::builder(…).mount(…)`, `.router(…)`, `.config(…)`, providers'
    /// `install`); its name and version stand in for the rmcp server's until `get_info`
    /// has been merged once.
    pub fn new(server: Server) -> Resources {
        // rmcp answers every revision with one declaration: rsrc's SEP-2093 extension is
        // declared where each era looks for it (`extensions`, and `experimental` before
        // 2026-07-28).
        let mut declared = server.capabilities();
        let mut legacy = declared.clone();
        ResourceMetadataExtension::place(&mut legacy, rsrc::protocol::Era::Legacy);
        if let Some(experimental) = legacy.other.remove("experimental") {
            declared
                .other
                .insert("experimental".to_owned(), experimental);
        }
        let capabilities = convert::retype(&declared).unwrap_or_else(|e| {
            tracing::error!(error = %e.message, "the engine's capabilities do not fit rmcp's");
            ServerCapabilities::default()
        });
        Resources {
            shared: Arc::new(Shared {
                server,
                capabilities,
                listed: listed::Listed::default(),
            }),
            connection: engine::Connection::default(),
        }
    }

    /// The engine.
    pub fn server(&self) -> &Server {
        &self.shared.server
    }

    /// Where code outside the providers — an rmcp tool — announces that a resource
    /// changed (`updated(uri)`: its cached reads are dropped and its subscribers told) or
    /// that the list changed (`list_changed()`). Clients can subscribe only to what the
    /// server declares: mount the provider announced for that
    /// ([`ServerBuilder::mount_announced`](rsrc::ServerBuilder::mount_announced)).
    pub fn changes(&self) -> ChangeFeed {
        self.shared.server.changes()
    }

    /// `info` with the resources' capabilities added: `resources` (`subscribe`,
    /// `listChanged`), `completions`, `logging`, the extensions the engine declares,
    /// and the engine's instructions when `info` has none. What `info` already declares
    /// stays. The first call stamps `info`'s name and version on the engine's results.
    pub fn merge_info(&self, mut info: ServerConfig) -> ServerConfig {
        if let Ok(name) = convert::retype(&info.server_info) {
            self.shared.server.stamp_info(name);
        }
        merge_capabilities(&mut info.capabilities, &self.shared.capabilities);
        if info.instructions.is_none() {
            info.instructions = self.shared.server.instructions().map(str::to_owned);
        }
        info
    }

    /// The revisions the engine speaks (2025-06-18, 2025-11-25, 2026-07-28): rmcp then
    /// negotiates one of them in `initialize` and refuses others per request, as rsrc does.
    pub fn supported_protocol_versions() -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(REVISIONS)
    }

    /// `server/discover` for an rmcp server whose `get_info` is `info`: rmcp's answer with
    /// the engine's caching hint (`ServerConfig::discover_cache`, an hour, public).
    pub fn discover(&self, versions: Vec<ProtocolVersion>, info: ServerConfig) -> DiscoverResult {
        let hint = self.shared.server.config().discover_cache;
        let mut result = DiscoverResult::from_server_info(versions, info);
        result.ttl_ms = hint.ttl_ms;
        result.cache_scope = convert::cache_scope_of(hint.scope);
        result
    }

    /// `resources/list`: the engine's listing, a page at a time, with its sealed
    /// cursors.
    pub async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let params = ours::ListResourcesParams {
            cursor: request.and_then(|r| r.cursor),
            meta: convert::take_meta(&mut context),
            ..Default::default()
        };
        self.list(&context, HostRequest::List(params)).await
    }

    /// Lists the default listing once, without a client, so that the first
    /// `resources/list` a client sends is answered as fast as the next ones: the providers'
    /// listings are walked (and cached, where a provider caches) and the pages' rmcp forms
    /// kept (`listed.rs`), as a hand-written server that builds its table at start. Stops
    /// at the first error, after `max_pages` pages, or once the table of rmcp forms is
    /// full (65,536 resources): a larger listing is prepared from its start.
    pub async fn prepare_listing(&self, max_pages: usize) {
        self.shared
            .listed
            .prepare(&self.shared.server, max_pages)
            .await;
    }

    /// `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let params = ours::ListResourceTemplatesParams {
            cursor: request.and_then(|r| r.cursor),
            meta: convert::take_meta(&mut context),
            ..Default::default()
        };
        let result: ours::ListResourceTemplatesResult = self
            .request(&context, HostRequest::Templates(params))
            .await?;
        convert::retype(&result)
    }

    /// `resources/read`: format alternatives, collections' children, the read cache.
    pub async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let params = ours::ReadResourceParams {
            uri: request.uri,
            meta: convert::take_meta(&mut context),
            ..Default::default()
        };
        let result: ours::ReadResourceResult =
            self.request(&context, HostRequest::Read(params)).await?;
        Ok(convert::read_result(result).into())
    }

    /// Whether `request` completes a resource template (the engine's) rather than a
    /// prompt argument (yours).
    pub fn completes(request: &CompleteRequestParams) -> bool {
        matches!(request.r#ref, Reference::Resource(_))
    }

    /// `completion/complete` of a resource template's variable.
    pub async fn complete(
        &self,
        mut request: CompleteRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        request.meta = None;
        let mut params: rsrc::protocol::completion::CompleteParams = convert::retype(&request)?;
        params.meta = convert::take_meta(&mut context);
        let result = self
            .request(&context, HostRequest::Complete(params))
            .await?;
        Ok(convert::complete_result(result))
    }

    /// `logging/setLevel` (2025 revisions): the level of the logs providers send this
    /// connection. (rmcp deprecates logging, after SEP-2577; the engine still serves it.)
    #[allow(deprecated)]
    pub async fn set_level(
        &self,
        mut request: rmcp::model::SetLevelRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        request.meta = None;
        let mut params: rsrc::protocol::lifecycle::SetLevelParams = convert::retype(&request)?;
        params.meta = convert::take_meta(&mut context);
        self.acknowledge(&context, HostRequest::SetLevel(params))
            .await
    }

    /// `resources/subscribe` (2025 revisions): `notifications/resources/updated` for this
    /// URI on this connection.
    pub async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = ours::ResourceParams {
            uri: request.uri,
            meta: convert::take_meta(&mut context),
        };
        self.acknowledge(&context, HostRequest::Subscribe(params))
            .await
    }

    /// `resources/unsubscribe` (2025 revisions).
    pub async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = ours::ResourceParams {
            uri: request.uri,
            meta: convert::take_meta(&mut context),
        };
        self.acknowledge(&context, HostRequest::Unsubscribe(params))
            .await
    }

    /// What a `subscriptions/listen` stream (2026-07-28) is acknowledged with: the
    /// resources' list changes if a provider publishes them, and the requested URIs if
    /// a provider offers subscriptions (at most `ServerConfig::max_subscriptions`). rmcp
    /// asks this synchronously and acknowledges the stream itself before `listen` runs,
    /// so the engine holds the stream's changes from here on
    /// ([`rsrc::Server::hold_changes`]); `listen` then subscribes to the URIs that exist
    /// and that their provider accepts, as rsrc's own server acknowledges
    /// (`docs/rmcp.md`).
    pub fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let offered = self
            .shared
            .capabilities
            .resources
            .clone()
            .unwrap_or_default();
        let mut accepted = SubscriptionFilter::default();
        if requested.resources_list_changed == Some(true) && offered.list_changed == Some(true) {
            accepted.resources_list_changed = Some(true);
        }
        if let Some(uris) = &requested.resource_subscriptions {
            let max = self.shared.server.config().max_subscriptions;
            accepted.resource_subscriptions = Some(if offered.subscribe == Some(true) {
                uris.iter().take(max).cloned().collect()
            } else {
                Vec::new()
            });
        }
        self.connection.hold(&self.shared.server, &accepted);
        Some(accepted)
    }

    /// `subscriptions/listen` (2026-07-28): runs the engine's stream for the accepted
    /// filter until rmcp ends it, its changes sent on the stream.
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = context.accepted();
        let held = self.connection.take_held(accepted);
        let mut request = context.request_context().clone();
        let params = rsrc::protocol::subscriptions::SubscriptionsListenParams {
            notifications: convert::filter(accepted),
            meta: convert::take_meta(&mut request),
        };
        engine::run(
            &self.shared.server,
            &self.connection,
            &request,
            HostRequest::Listen(params, held),
            Mode::Listen,
            Reply::into_typed::<rsrc::protocol::subscriptions::SubscriptionsListenResult>,
        )
        .await
        .map(drop)
    }

    /// Opens the connection's session when rmcp's handshake is done, so that list
    /// changes reach the client before its first resource request.
    pub fn on_initialized(&self, context: &NotificationContext<RoleServer>) {
        self.connection.session(&self.shared.server, &context.peer);
    }

    /// A request rmcp does not know (`resources/metadata`; an extension method; an
    /// engine method whose params rmcp could not decode): the engine's answer, or the
    /// request back when the engine does not serve the method.
    pub async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> CustomOutcome {
        let mut params = match &request.params {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return CustomOutcome::NotServed(request, context),
        };
        // rmcp keeps the request's `_meta` in its context (left there for your handler,
        // should the engine not serve the method).
        let meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => convert::meta_of(meta),
            _ => convert::meta_of(context.meta.0.0.clone()),
        };
        let metadata = request.method
            == <rsrc::protocol::methods::ResourceMetadata as rsrc::protocol::methods::Method>::NAME;
        let typed = metadata
            .then(|| serde_json::from_value::<ours::ResourceParams>(Value::Object(params.clone())));
        let host = match typed {
            Some(Ok(p)) => HostRequest::Metadata(ours::ResourceParams { meta, ..p }),
            // Params that do not decode reach the engine as they are, to be refused.
            _ => HostRequest::Other {
                method: request.method.clone(),
                meta,
                params,
            },
        };
        let answer = engine::run(
            &self.shared.server,
            &self.connection,
            &context,
            host,
            Mode::Request,
            Reply::into_json,
        )
        .await;
        match answer {
            Err(e) if e.code.0 == rsrc::protocol::ErrorCode::METHOD_NOT_FOUND.0 => {
                CustomOutcome::NotServed(request, context)
            }
            Err(e) => CustomOutcome::Answered(Err(e)),
            Ok(None) => CustomOutcome::Answered(Err(ErrorData::internal_error("no reply", None))),
            Ok(Some(result)) => CustomOutcome::Answered(Ok(CustomResult(result))),
        }
    }

    /// `skills/list` (the skills extension, when a skills provider is installed).
    pub async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let mut params = Map::new();
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            params.insert("cursor".to_owned(), Value::String(cursor));
        }
        self.extension(&mut context, "skills/list", params).await
    }

    /// `skills/get`.
    pub async fn get_skill(
        &self,
        mut request: GetSkillRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        request.meta = None;
        let params = convert::retype(&request)?;
        self.extension(&mut context, "skills/get", params).await
    }

    /// `resources/directory/read` (the skills extension): a directory's children.
    pub async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let params = ours::ListResourcesParams {
            uri: Some(request.uri),
            cursor: request.cursor,
            meta: convert::take_meta(&mut context),
            ..Default::default()
        };
        self.list(&context, HostRequest::DirectoryRead(params))
            .await
    }

    /// A listing method (`resources/list`, `resources/directory/read`): the engine's
    /// page, its resources in rmcp's form from the table of those listed before
    /// (`listed.rs`).
    async fn list(
        &self,
        context: &RequestContext<RoleServer>,
        request: HostRequest,
    ) -> Result<ListResourcesResult, ErrorData> {
        let page: ours::ListResourcesResult<ListEntry> = self.request(context, request).await?;
        self.shared.listed.page(page).map_err(|e| {
            ErrorData::internal_error(format!("a result rmcp's types cannot hold: {e}"), None)
        })
    }

    /// An extension method of the engine's, its result as rmcp's type `T`.
    async fn extension<T: serde::de::DeserializeOwned>(
        &self,
        context: &mut RequestContext<RoleServer>,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<T, ErrorData> {
        let request = HostRequest::Other {
            method: method.to_owned(),
            meta: convert::take_meta(context),
            params,
        };
        let result = engine::run(
            &self.shared.server,
            &self.connection,
            context,
            request,
            Mode::Request,
            Reply::into_json,
        )
        .await?
        .ok_or_else(|| ErrorData::internal_error("no reply", None))?;
        serde_json::from_value(result).map_err(|e| {
            ErrorData::internal_error(format!("a result rmcp's types cannot hold: {e}"), None)
        })
    }

    /// Runs a request whose result is empty.
    async fn acknowledge(
        &self,
        context: &RequestContext<RoleServer>,
        request: HostRequest,
    ) -> Result<(), ErrorData> {
        self.request::<rsrc::protocol::lifecycle::EmptyResult>(context, request)
            .await
            .map(drop)
    }

    async fn request<T: 'static>(
        &self,
        context: &RequestContext<RoleServer>,
        request: HostRequest,
    ) -> Result<T, ErrorData> {
        engine::request(&self.shared.server, &self.connection, context, request).await
    }
}

/// Adds `ours` (the engine's) to `caps` (the rmcp server's), keeping what `caps` declares.
fn merge_capabilities(caps: &mut ServerCapabilities, ours: &ServerCapabilities) {
    if let Some(r) = &ours.resources {
        let mine = caps.resources.get_or_insert_with(Default::default);
        mine.subscribe = mine.subscribe.or(r.subscribe);
        mine.list_changed = mine.list_changed.or(r.list_changed);
    }
    if caps.completions.is_none() {
        caps.completions.clone_from(&ours.completions);
    }
    if caps.logging.is_none() {
        caps.logging.clone_from(&ours.logging);
    }
    for (mine, theirs) in [
        (&mut caps.extensions, &ours.extensions),
        (&mut caps.experimental, &ours.experimental),
    ] {
        if let Some(theirs) = theirs {
            let mine = mine.get_or_insert_with(Default::default);
            for (id, settings) in theirs {
                mine.entry(id.clone()).or_insert_with(|| settings.clone());
            }
        }
    }
}
