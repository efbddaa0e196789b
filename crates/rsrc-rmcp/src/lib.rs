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
//! ([`Resources::changes`], [`Announced`]), and what rmcp's types cannot carry.
//!
//! Invariants: every answer is the engine's own, for the revision the engine decides
//! from the same inputs as on rsrc's own server (`engine.rs`), decoded into rmcp's
//! types; what those types have no place for is left out, never moved elsewhere
//! (`convert.rs`). A clone of [`Resources`] is a new connection's view (its own 2025
//! session and subscriptions) of the same engine, cache and change feed.

mod announced;
mod convert;
mod engine;
mod listed;
mod replay;

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use futures_util::FutureExt as _;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, DiscoverResult, ErrorData,
    GetSkillRequestParams, GetSkillResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, MetaObject, PaginatedRequestParams, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, Reference, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rsrc::{ChangeFeed, Server};
use serde_json::{Value, json};

pub use announced::{Announced, AnnouncedProvider};
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
/// The pipes go back to blocking mode when rmcp drops them.
#[cfg(feature = "transport-io")]
pub fn stdio() -> std::io::Result<(rsrc::transport::StdinStream, rsrc::transport::StdoutStream)> {
    rsrc::transport::stdio_streams()
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
    /// The engine's `server/discover`: capabilities, instructions, caching hint.
    discovered: DiscoverResult,
    /// The rmcp server's name and version, once `get_info` has been merged
    /// ([`Resources::merge_info`]): written as the serverInfo of 2026-07-28 results.
    server_info: OnceLock<Value>,
    /// The last changes published, for listen streams (`replay.rs`).
    log: Arc<replay::ChangeLog>,
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
        let discovered = discover(&server);
        let log = Arc::new(replay::ChangeLog::default());
        let recorder = Arc::clone(&log);
        server
            .changes()
            .on_change(move |event| recorder.record(event));
        Resources {
            shared: Arc::new(Shared {
                server,
                discovered,
                server_info: OnceLock::new(),
                log,
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
    /// server declares; mount the provider as [`Announced`] for that.
    pub fn changes(&self) -> ChangeFeed {
        self.shared.server.changes()
    }

    /// `info` with the resources' capabilities added: `resources` (`subscribe`,
    /// `listChanged`), `completions`, `logging`, the extensions the engine declares
    /// (skills), and the engine's instructions when `info` has none. What `info` already
    /// declares stays.
    pub fn merge_info(&self, mut info: ServerConfig) -> ServerConfig {
        let _ = self
            .shared
            .server_info
            .get_or_init(|| serde_json::to_value(&info.server_info).unwrap_or(Value::Null));
        merge_capabilities(&mut info.capabilities, &self.shared.discovered.capabilities);
        if info.instructions.is_none() {
            info.instructions
                .clone_from(&self.shared.discovered.instructions);
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
        let mut result = DiscoverResult::from_server_info(versions, info);
        result.ttl_ms = self.shared.discovered.ttl_ms;
        result.cache_scope = self.shared.discovered.cache_scope;
        result
    }

    /// `resources/list`: the engine's listing, a page at a time, with its sealed
    /// cursors.
    pub async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut params = request.unwrap_or_default();
        params.meta = None;
        self.list(&context, "resources/list", &params).await
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut params = request.unwrap_or_default();
        params.meta = None;
        let mut result: ListResourceTemplatesResult = self
            .request(&context, "resources/templates/list", &params)
            .await?;
        self.fix_meta(&mut result.meta);
        Ok(result)
    }

    /// `resources/read`: format alternatives, collections' children, the read cache.
    pub async fn read_resource(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        request.meta = None;
        let reply = self
            .call(&context, "resources/read", &request, engine::Mode::Request)
            .await?;
        let Some(reply) = reply else {
            return Err(ErrorData::internal_error("no reply", None));
        };
        if let Some(e) = reply.error_object() {
            return Err(engine::error_data(e));
        }
        let result = match reply.into_result::<rsrc::protocol::resources::ReadResourceResult>() {
            Ok(typed) => convert::read_result(typed, self.shared.server_info.get()),
            Err(reply) => engine::decode(reply)?,
        };
        Ok(result.into())
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
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        request.meta = None;
        let mut result: CompleteResult = self
            .request(&context, "completion/complete", &request)
            .await?;
        self.fix_meta(&mut result.meta);
        Ok(result)
    }

    /// `logging/setLevel` (2025 revisions): the level of the logs providers send this
    /// connection. (rmcp deprecates logging, after SEP-2577; the engine still serves it.)
    #[allow(deprecated)]
    pub async fn set_level(
        &self,
        mut request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        request.meta = None;
        self.request::<_, Value>(&context, "logging/setLevel", &request)
            .await
            .map(drop)
    }

    /// `resources/subscribe` (2025 revisions): `notifications/resources/updated` for this
    /// URI on this connection.
    pub async fn subscribe(
        &self,
        mut request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        request.meta = None;
        self.request::<_, Value>(&context, "resources/subscribe", &request)
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` (2025 revisions).
    pub async fn unsubscribe(
        &self,
        mut request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        request.meta = None;
        self.request::<_, Value>(&context, "resources/unsubscribe", &request)
            .await
            .map(drop)
    }

    /// What a `subscriptions/listen` stream (2026-07-28) is acknowledged with: the
    /// resources' list changes if a provider publishes them, and the requested URIs if
    /// a provider offers subscriptions (at most `ServerConfig::max_subscriptions`). rmcp
    /// asks this synchronously, before `listen` runs; the engine then subscribes to the
    /// URIs that exist and that their provider accepts, as rsrc's own server
    /// acknowledges (`docs/rmcp.md`). Where the change log stands, and whether every
    /// provider hears every change yet (a watcher may still be starting), is noted here,
    /// before the acknowledgement, so that a change a client makes as soon as it is
    /// acknowledged reaches the stream (`replay.rs`).
    pub fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.shared
            .log
            .note(self.shared.server.hears_every_change());
        let offered = self
            .shared
            .discovered
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
        Some(accepted)
    }

    /// `subscriptions/listen` (2026-07-28): runs the engine's stream for the accepted
    /// filter until rmcp ends it, its changes sent on the stream.
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let since = self.shared.log.noted();
        let params = json!({ "notifications": context.accepted() });
        let mode = engine::Mode::Listen {
            log: &self.shared.log,
            since,
        };
        let reply = self
            .call(
                context.request_context(),
                "subscriptions/listen",
                &params,
                mode,
            )
            .await?;
        match reply.as_ref().and_then(|r| r.error_object()) {
            Some(e) => Err(engine::error_data(e)),
            None => Ok(()),
        }
    }

    /// Opens the connection's 2025 session when rmcp's handshake is done, so that list
    /// changes reach the client before its first resource request.
    pub fn on_initialized(&self, context: &NotificationContext<RoleServer>) {
        let legacy = context
            .peer
            .peer_info()
            .is_some_and(|info| !engine::is_modern_version(&info.protocol_version));
        if legacy {
            self.connection.session(&self.shared.server, &context.peer);
        }
    }

    /// A request rmcp does not know (`resources/metadata`; an extension method; an
    /// engine method whose params rmcp could not decode): the engine's answer, or the
    /// request back when the engine does not serve the method.
    pub async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> CustomOutcome {
        let params = match &request.params {
            None => Value::Object(Default::default()),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(_) => return CustomOutcome::NotServed(request, context),
        };
        let reply = self
            .call(&context, &request.method, &params, engine::Mode::Request)
            .await;
        let reply = match reply {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                return CustomOutcome::Answered(Err(ErrorData::internal_error("no reply", None)));
            }
            Err(e) => return CustomOutcome::Answered(Err(e)),
        };
        if reply
            .error_object()
            .is_some_and(|e| e.code == rsrc::protocol::ErrorCode::METHOD_NOT_FOUND)
        {
            return CustomOutcome::NotServed(request, context);
        }
        CustomOutcome::Answered(engine::decode::<Value>(reply).map(|mut result| {
            if let Some(Value::Object(meta)) = result.get_mut("_meta")
                && let Some(info) = self.shared.server_info.get()
                && meta.contains_key(convert::SERVER_INFO)
            {
                meta.insert(convert::SERVER_INFO.to_owned(), info.clone());
            }
            CustomResult(result)
        }))
    }

    /// `skills/list` (the skills extension, when a skills provider is installed).
    pub async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let mut params = request.unwrap_or_default();
        params.meta = None;
        let mut result: ListSkillsResult = self.request(&context, "skills/list", &params).await?;
        self.fix_meta(&mut result.meta);
        Ok(result)
    }

    /// `skills/get`.
    pub async fn get_skill(
        &self,
        mut request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        request.meta = None;
        let mut result: GetSkillResult = self.request(&context, "skills/get", &request).await?;
        self.fix_meta(&mut result.meta);
        Ok(result)
    }

    /// `resources/directory/read` (the skills extension): a directory's children.
    pub async fn read_resource_directory(
        &self,
        mut request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        request.meta = None;
        self.list(&context, "resources/directory/read", &request)
            .await
    }

    /// A listing method (`resources/list`, `resources/directory/read`): the engine's
    /// page, its resources in rmcp's form from the table of those listed before
    /// (`listed.rs`).
    async fn list<P: serde::Serialize>(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
        params: &P,
    ) -> Result<ListResourcesResult, ErrorData> {
        let reply = self
            .call(context, method, params, engine::Mode::Request)
            .await?
            .ok_or_else(|| ErrorData::internal_error("no reply", None))?;
        if let Some(e) = reply.error_object() {
            return Err(engine::error_data(e));
        }
        type Page = rsrc::protocol::resources::ListResourcesResult<rsrc::ListEntry>;
        match reply.into_result::<Page>() {
            Ok(page) => self
                .shared
                .listed
                .page(page, self.shared.server_info.get())
                .map_err(|e| {
                    ErrorData::internal_error(
                        format!("a result rmcp's types cannot hold: {e}"),
                        None,
                    )
                }),
            Err(reply) => {
                let mut result: ListResourcesResult = engine::decode(reply)?;
                self.fix_meta(&mut result.meta);
                Ok(result)
            }
        }
    }

    async fn call<P: serde::Serialize>(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
        params: &P,
        mode: engine::Mode<'_>,
    ) -> Result<Option<rsrc::server::Reply>, ErrorData> {
        engine::call(
            &self.shared.server,
            &self.connection,
            context,
            method,
            params,
            mode,
        )
        .await
    }

    async fn request<P: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
        params: &P,
    ) -> Result<T, ErrorData> {
        engine::request(
            &self.shared.server,
            &self.connection,
            context,
            method,
            params,
        )
        .await
    }

    fn fix_meta(&self, meta: &mut Option<MetaObject>) {
        if let Some(meta) = meta {
            convert::set_server_info(meta, self.shared.server_info.get());
        }
    }
}

/// The engine's `server/discover`, asked once: its capabilities are fixed when it is
/// built.
fn discover(server: &Server) -> DiscoverResult {
    // The handler answers at once: it only reads the server's state.
    engine::alone(server, "server/discover", json!({}))
        .now_or_never()
        .flatten()
        .and_then(|r| engine::decode(r).ok())
        .unwrap_or_else(|| DiscoverResult::new(REVISIONS.to_vec(), ServerCapabilities::default()))
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
    if let Some(extensions) = &ours.extensions {
        let mine = caps.extensions.get_or_insert_with(Default::default);
        for (id, settings) in extensions {
            mine.entry(id.clone()).or_insert_with(|| settings.clone());
        }
    }
}
