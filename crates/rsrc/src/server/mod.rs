//! The server engine: a [`Router`] of providers, the [`Server`] that speaks both protocol
//! eras over it, and the per-connection [`Session`].
//!
//! The engine is transport-agnostic. [`Server::prepare`] decodes one message (a request's
//! params into its method's type); [`Server::run`] puts a request through the gate and
//! says whether it was refused or runs; [`Server::handle`] does both for transports that
//! need no look in between. A transport drives the returned futures on its own task, so
//! decode → route → provider → encode happens without a thread hop.
//!
//! Every inherent method of [`Server`] is in this file; the modules below hold the rules,
//! as functions over a `&Server`: the gate (`gate.rs`), decoding and running
//! (`dispatch.rs`), one handler per method (`handlers.rs`), the tools bridge (`tools/`),
//! and replies (`reply.rs`).

mod dispatch;
pub(crate) mod gate;
mod handlers;
mod reply;
mod session;
mod tools;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use rsrc_protocol::{CacheHint, CacheScope, Completion, Implementation, Meta, ResourceTemplate};

use crate::budget::ByteBudget;
use crate::bus::ChangeBus;
#[cfg(feature = "http")]
use crate::bus::SessionState;
use crate::changes::{ChangeFeed, Hub};
use crate::context::{Notifier, RequestContext};
use crate::cursor::CursorSealer;
use crate::error::DeclareError;
use crate::error::ResourceError;
use crate::extension::{self, MethodHandler, PromptCompleter, PromptCompletion};
use crate::provider::{DynProvider, IntoProvider, Provider};

pub use dispatch::{Handled, Incoming, Notice, Outcome, Prepared, Refusal};
pub use reply::Reply;
pub(crate) use reply::{Framed, Streaming, holding};
#[cfg(feature = "http")]
pub(crate) use session::Negotiated;
pub use session::Session;
pub use tools::ToolsConfig;

/// Providers mounted by URI prefix.
///
/// A URI is served by the provider with the longest prefix it starts with; the default
/// listing walks the providers in mount order.
#[derive(Default)]
pub struct Router {
    mounts: Vec<Mount>,
    /// Declarations that failed to become providers, reported by
    /// [`ServerBuilder::build`].
    invalid: Vec<(String, DeclareError)>,
}

pub(crate) struct Mount {
    pub(crate) prefix: String,
    pub(crate) provider: Arc<dyn DynProvider>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.mounts.iter().map(|m| &m.prefix))
            .finish()
    }
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    /// Mounts `provider` for the URIs starting with `prefix` (e.g. `"file:///"`, `"db:"`;
    /// `""` catches everything no other prefix claims). A type declared with the
    /// `#[resources]` macro mounts the same way. Every URI and template the provider
    /// declares must lie under the prefix (a template may also begin with a part of it,
    /// `db://{name}/…` under `db://shop`), or [`ServerBuilder::build`] fails naming both.
    #[must_use]
    pub fn mount<P: IntoProvider>(mut self, prefix: impl Into<String>, provider: P) -> Self {
        let prefix = prefix.into();
        let provider = provider
            .into_provider()
            .and_then(|p| match outside_mount(&prefix, &p) {
                Some(uri) => Err(DeclareError::OutsideMount {
                    uri,
                    prefix: prefix.clone(),
                }),
                None => Ok(p),
            });
        match provider {
            Ok(provider) => self.mounts.push(Mount {
                prefix,
                provider: Arc::new(provider),
            }),
            Err(e) => self.invalid.push((prefix, e)),
        }
        self
    }

    /// The mount serving `uri`: the longest matching prefix.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(u16, &Mount)> {
        self.mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| uri.starts_with(&m.prefix))
            .max_by_key(|(_, m)| m.prefix.len())
            .map(|(i, m)| (i as u16, m))
    }
}

/// The first URI or template `provider` declares that no request routed by `prefix`
/// could reach: a fixed URI must start with the prefix; a template's expansions must be
/// able to, so the text before its first expression starts with the prefix or is the
/// start of it.
fn outside_mount(prefix: &str, provider: &impl Provider) -> Option<String> {
    let fixed = provider
        .fixed_uris()
        .into_iter()
        .find(|uri| !uri.starts_with(prefix));
    fixed.or_else(|| {
        provider.templates().into_iter().find_map(|t| {
            let text = t.uri_template;
            let literal = text.split('{').next().unwrap_or_default();
            let reachable = literal.starts_with(prefix) || prefix.starts_with(literal);
            (!reachable).then_some(text)
        })
    })
}

/// Why a server could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Two providers were mounted at the same prefix.
    DuplicatePrefix(String),
    /// More providers than a cursor can address.
    TooManyMounts,
    /// A limit was set to zero.
    ZeroLimit(&'static str),
    /// An extension method has the name of a method the engine serves.
    ReservedMethod(String),
    /// An extension capability has the name of one the engine declares.
    ReservedCapability(String),
    /// A declared provider is invalid (see [`IntoProvider`]).
    Declaration {
        /// Where it was mounted.
        prefix: String,
        /// What is wrong with it.
        error: DeclareError,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::DuplicatePrefix(p) => write!(f, "two providers are mounted at {p:?}"),
            BuildError::TooManyMounts => f.write_str("more than 65535 providers are mounted"),
            BuildError::ZeroLimit(what) => write!(f, "{what} must be greater than zero"),
            BuildError::ReservedMethod(m) => write!(f, "{m} is served by the engine"),
            BuildError::ReservedCapability(c) => {
                write!(f, "the {c} capability is declared by the engine")
            }
            BuildError::Declaration { prefix, error } => {
                write!(f, "the provider mounted at {prefix:?} is invalid: {error}")
            }
        }
    }
}

impl std::error::Error for BuildError {}

/// Limits and defaults of a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Resources per `resources/list` page and templates per `resources/templates/list`
    /// page (default 1000).
    pub page_size: usize,
    /// Longest URI accepted, in bytes (default 16 KiB: a percent-encoded path of
    /// `PATH_MAX` bytes fits).
    pub max_uri_len: usize,
    /// Caching hint of listings when the provider gives none (default: immediately stale,
    /// private).
    pub list_cache: CacheHint,
    /// Caching hint of reads when the provider gives none (default: immediately stale,
    /// private).
    pub read_cache: CacheHint,
    /// Caching hint of `resources/templates/list` (default: 5 minutes, public).
    pub templates_cache: CacheHint,
    /// Caching hint of `server/discover` (default: 1 hour, public).
    pub discover_cache: CacheHint,
    /// Most resources one session, or one `subscriptions/listen` stream, may subscribe
    /// to (default 4096).
    pub max_subscriptions: usize,
    /// Content bytes all requests together may hold: content read for them and large
    /// responses not yet written out (default 256 MiB). Beyond it, reads wait for room.
    /// See [`RequestContext::reserve`].
    pub read_budget: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            page_size: 1000,
            max_uri_len: 16 * 1024,
            list_cache: CacheHint::NO_STORE,
            read_cache: CacheHint::NO_STORE,
            templates_cache: CacheHint::new(5 * 60 * 1000, CacheScope::Public),
            discover_cache: CacheHint::new(60 * 60 * 1000, CacheScope::Public),
            max_subscriptions: 4096,
            read_budget: 256 * 1024 * 1024,
        }
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    router: Router,
    config: ServerConfig,
    cursor_keys: Vec<[u8; 32]>,
    bus: Option<Arc<dyn ChangeBus>>,
    methods: BTreeMap<String, MethodHandler>,
    capabilities: Meta,
    prompt_completer: Option<PromptCompleter>,
    tools: Option<ToolsConfig>,
    extensions: Meta,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("router", &self.router)
            .field("methods", &self.methods.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Sets the instructions for the model, sent in `initialize` and `server/discover`.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Mounts a provider (see [`Router::mount`]).
    #[must_use]
    pub fn mount<P: IntoProvider>(mut self, prefix: impl Into<String>, provider: P) -> Self {
        self.router = self.router.mount(prefix, provider);
        self
    }

    /// Uses `router` for every mount made so far and after.
    #[must_use]
    pub fn router(mut self, router: Router) -> Self {
        self.router.mounts.extend(router.mounts);
        self.router.invalid.extend(router.invalid);
        self
    }

    /// Replaces the configuration.
    #[must_use]
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Serves `method`, which the engine does not know, with `handler`: it gets the
    /// params (without `_meta`) and returns the result object. For an application that
    /// offers more than resources (say `tools/list`); declare the matching capability
    /// with [`ServerBuilder::capability`].
    #[must_use]
    pub fn method<F, Fut>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(RequestContext, serde_json::Map<String, serde_json::Value>) -> Fut
            + Send
            + Sync
            + 'static,
        Fut: Future<Output = Result<serde_json::Value, ResourceError>> + Send + 'static,
    {
        self.methods
            .insert(method.into(), extension::method_handler(handler));
        self
    }

    /// Declares a capability beyond those of the engine (e.g. `"prompts"`, `{}`).
    #[must_use]
    pub fn capability(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
        self.capabilities.insert(name.into(), value);
        self
    }

    /// Declares extension `id` (e.g. `io.modelcontextprotocol/skills`) with its
    /// `settings` under `capabilities.extensions`; serve its methods with
    /// [`ServerBuilder::method`].
    #[must_use]
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Completes prompt arguments (`completion/complete` with `ref/prompt`).
    #[must_use]
    pub fn prompt_completion<F, Fut>(mut self, complete: F) -> Self
    where
        F: Fn(RequestContext, PromptCompletion) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ResourceError>> + Send + 'static,
    {
        self.prompt_completer = Some(extension::prompt_completer(complete));
        self
    }

    /// Also offers the resources as tools (`list_resources`, `read_resource`,
    /// `search_resources`, `list_resource_templates`) and declares `tools`, for hosts whose
    /// model only calls tools. The resource methods are unchanged. See
    /// [`ToolsConfig`].
    #[must_use]
    pub fn tools(mut self, config: ToolsConfig) -> Self {
        self.tools = Some(config);
        self
    }

    /// Seals cursors with this key instead of a random one, so that cursors survive a
    /// restart or work across replicas.
    #[must_use]
    pub fn cursor_key(self, key: [u8; 32]) -> Self {
        self.cursor_keys(vec![key])
    }

    /// Seals cursors with the first key and opens them with any: to rotate, give every
    /// instance the new key followed by the old one, then, once the old cursors have gone
    /// out of use, the new one alone. An empty list means a random key.
    #[must_use]
    pub fn cursor_keys(mut self, keys: Vec<[u8; 32]>) -> Self {
        self.cursor_keys = keys;
        self
    }

    /// Shares changes, and the right to watch each source, with the other instances of a
    /// deployment through `bus` (see [`crate::bus`]).
    #[must_use]
    pub fn bus(mut self, bus: impl ChangeBus) -> Self {
        self.bus = Some(Arc::new(bus));
        self
    }

    /// Checks the mounts and limits and builds the server.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some((prefix, error)) = self.router.invalid.drain(..).next() {
            return Err(BuildError::Declaration { prefix, error });
        }
        let mounts = &self.router.mounts;
        if mounts.len() > usize::from(u16::MAX) {
            return Err(BuildError::TooManyMounts);
        }
        for (i, m) in mounts.iter().enumerate() {
            if mounts[..i].iter().any(|o| o.prefix == m.prefix) {
                return Err(BuildError::DuplicatePrefix(m.prefix.clone()));
            }
        }
        if self.config.page_size == 0 {
            return Err(BuildError::ZeroLimit("page_size"));
        }
        if self.config.max_uri_len == 0 {
            return Err(BuildError::ZeroLimit("max_uri_len"));
        }
        if self.config.max_subscriptions == 0 {
            return Err(BuildError::ZeroLimit("max_subscriptions"));
        }
        if self.config.read_budget == 0 {
            return Err(BuildError::ZeroLimit("read_budget"));
        }
        let bridged = |name: &str| self.tools.is_some() && tools::METHODS.contains(&name);
        if let Some(m) = self
            .methods
            .keys()
            .find(|m| dispatch::ENGINE_METHODS.contains(&m.as_str()) || bridged(m))
        {
            return Err(BuildError::ReservedMethod(m.clone()));
        }
        if let Some(c) = self.capabilities.keys().find(|c| {
            extension::ENGINE_CAPABILITIES.contains(&c.as_str())
                || self.tools.is_some() && c.as_str() == tools::CAPABILITY
        }) {
            return Err(BuildError::ReservedCapability(c.clone()));
        }
        if self
            .tools
            .as_ref()
            .is_some_and(|t| t.page == 0 || t.max_text == 0 || t.scan == 0)
        {
            return Err(BuildError::ZeroLimit("tools"));
        }
        let hub = Hub::with_bus(self.bus.take());
        for m in mounts {
            m.provider.attach(hub.feed());
        }
        let templates = mounts
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                m.provider
                    .templates()
                    .into_iter()
                    .map(move |t| (i as u16, t))
            })
            .collect();
        Ok(Server {
            state: Arc::new(ServerState {
                info: self.info,
                instructions: self.instructions,
                router: self.router,
                sealer: match self.cursor_keys.split_first() {
                    None => CursorSealer::random(),
                    Some((key, older)) => CursorSealer::rotating(*key, older.to_vec()),
                },
                templates,
                hub,
                methods: self.methods,
                capabilities: self.capabilities,
                prompt_completer: self.prompt_completer,
                tools: self.tools,
                extensions: self.extensions,
                budget: ByteBudget::new(self.config.read_budget),
                config: self.config,
            }),
        })
    }
}

/// A resources server: cheap to clone, shared by every connection.
#[derive(Clone, Debug)]
pub struct Server {
    state: Arc<ServerState>,
}

struct ServerState {
    info: Implementation,
    instructions: Option<String>,
    router: Router,
    config: ServerConfig,
    sealer: CursorSealer,
    /// Every provider's templates, with the mount that serves them, gathered once.
    templates: Vec<(u16, ResourceTemplate)>,
    /// Where providers' changes meet the listeners.
    hub: Arc<Hub>,
    /// Methods beyond the engine's.
    methods: BTreeMap<String, MethodHandler>,
    /// Capabilities beyond the engine's.
    capabilities: Meta,
    prompt_completer: Option<PromptCompleter>,
    /// The tools bridge, when enabled.
    tools: Option<ToolsConfig>,
    /// Extensions declared under `capabilities.extensions`.
    extensions: Meta,
    /// Content bytes in flight, across every connection.
    budget: ByteBudget,
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.info)
            .field("router", &self.router)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            router: Router::new(),
            config: ServerConfig::default(),
            cursor_keys: Vec::new(),
            bus: None,
            methods: BTreeMap::new(),
            capabilities: Meta::new(),
            prompt_completer: None,
            tools: None,
            extensions: Meta::new(),
        }
    }

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.state.info
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.state.config
    }

    /// The tools bridge's settings; refused as an unknown method when it is off.
    pub(crate) fn tools_config(&self) -> Result<&ToolsConfig, crate::error::RequestError> {
        self.state
            .tools
            .as_ref()
            .ok_or_else(|| crate::error::RequestError::MethodNotFound("tools".into()))
    }

    /// The budget of content in flight ([`ServerConfig::read_budget`]).
    pub fn budget(&self) -> &ByteBudget {
        &self.state.budget
    }

    /// The change feed providers publish to (the same one each provider received in
    /// [`Provider::attach`](crate::Provider::attach)): for code outside a provider that knows a resource changed.
    pub fn changes(&self) -> ChangeFeed {
        self.state.hub.feed()
    }

    /// Gives up this instance's leases on the bus (at shutdown), so that other instances
    /// take over the watches at once; a no-op without a bus.
    pub async fn leave_cluster(&self) {
        if let Some(bus) = self.state.hub.bus() {
            bus.leave().await;
        }
    }

    /// Decodes one message: a request's params into the type its method declares, so that
    /// a transport can look at the typed request ([`Prepared`]) before running it.
    pub fn prepare(&self, bytes: &[u8]) -> Incoming {
        dispatch::prepare(self, bytes)
    }

    /// Puts a prepared request through the gate and runs it on `session`; the
    /// notifications it sends (progress, logs) go to `notifier`. Says whether it was
    /// refused before running, answered at once, or is running.
    pub fn run(&self, session: &Arc<Session>, request: Prepared, notifier: &Notifier) -> Outcome {
        dispatch::run(self, session, request, notifier)
    }

    /// Applies a notification to `session` (`initialized`, `cancelled`).
    pub fn notify(&self, session: &Session, notice: &Notice) {
        dispatch::notify(session, notice);
    }

    /// Handles one encoded message received on `session`: [`Server::prepare`], then
    /// [`Server::run`] or [`Server::notify`]; the notifications of the request it starts
    /// go to the session's notifier.
    pub fn handle(&self, session: &Arc<Session>, bytes: &[u8]) -> Handled {
        self.handle_incoming(session, self.prepare(bytes), session.notifier())
    }

    fn handle_incoming(
        &self,
        session: &Arc<Session>,
        incoming: Incoming,
        notifier: &Notifier,
    ) -> Handled {
        match incoming {
            Incoming::Request(request) => match self.run(session, request, notifier) {
                Outcome::Refused(refusal) => Handled::Reply(refusal.into_reply()),
                Outcome::Answered(reply) => Handled::Reply(reply),
                Outcome::Running(fut) => Handled::Pending(fut),
            },
            Incoming::Notification(notice) => {
                self.notify(session, &notice);
                Handled::None
            }
            Incoming::Response => Handled::None,
            Incoming::Malformed(reply) => Handled::Reply(reply),
        }
    }

    /// The reply to a message the transport discarded for exceeding `limit` bytes;
    /// `prefix` is its beginning, from which the request id is recovered when possible.
    pub fn oversized(&self, prefix: &[u8], limit: usize) -> Reply {
        dispatch::oversized(prefix, limit)
    }

    /// Whether `method` is served beyond the engine's own: the tools bridge's, or an
    /// extension method.
    fn serves_extension(&self, method: &str) -> bool {
        self.state.tools.is_some() && tools::METHODS.contains(&method)
            || self.state.methods.contains_key(method)
    }

    /// What requests changed in `session` (for a [`SessionStore`](crate::bus::SessionStore)).
    #[cfg(feature = "http")]
    pub(crate) fn session_state(session: &Session) -> SessionState {
        SessionState {
            initialized: session.is_initialized(),
            log_level: session.log_level().and_then(|l| {
                serde_json::to_value(l)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
            }),
            subscriptions: session
                .existing_listener()
                .map(|l| l.uris())
                .unwrap_or_default(),
        }
    }

    /// Gives `session` the state another instance recorded. Subscriptions are taken
    /// without asking providers again: the instance that took them did.
    #[cfg(feature = "http")]
    pub(crate) fn apply_session_state(&self, session: &Session, state: &SessionState) {
        if state.initialized {
            session.mark_initialized();
        }
        if let Some(level) = state
            .log_level
            .as_deref()
            .and_then(|l| serde_json::from_value(serde_json::Value::from(l)).ok())
        {
            session.set_log_level(level);
        }
        let listener = match session.existing_listener() {
            Some(l) => l,
            None if state.subscriptions.is_empty() => return,
            None => handlers::listener_of(self, session),
        };
        for uri in listener.uris() {
            if state.subscriptions.binary_search(&uri).is_err() {
                listener.unsubscribe(&uri);
            }
        }
        for uri in &state.subscriptions {
            if listener.subscribe(uri).is_err() {
                tracing::debug!("a stored session holds more subscriptions than allowed here");
                break;
            }
        }
    }

    /// Tells `session` that anything may have changed: `list_changed` if it hears list
    /// changes, and an update of each of its subscriptions (its notifications may have
    /// been lost with another instance).
    #[cfg(feature = "http")]
    pub(crate) fn resync_session(session: &Session) {
        if let Some(l) = session.existing_listener() {
            l.resync();
        }
    }

    /// Where legacy HTTP sessions lasting `idle` are shared with the other instances,
    /// if the server's bus holds sessions.
    #[cfg(feature = "http")]
    pub(crate) fn session_store(
        &self,
        idle: std::time::Duration,
    ) -> Option<Arc<dyn crate::bus::SessionStore>> {
        self.state.hub.bus()?.session_store(idle)
    }
}
