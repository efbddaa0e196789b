//! [`ServerBuilder`]: how a [`Server`] is put together, and every check made before it
//! serves ([`BuildError`]).
//!
//! Invariant: a built server is consistent: no two mounts share a prefix, no limit is
//! zero, no declaration is invalid, and no extension method, capability or extension
//! shadows the engine's (its SEP-2093 extension included), or the tools bridge's when it
//! is on.

use std::future::Future;
use std::sync::Arc;

use rsrc_protocol::resources::RESOURCE_METADATA_EXTENSION;
use rsrc_protocol::{Completion, Implementation};

use super::config::ServerConfig;
use super::dispatch;
use super::handle::Server;
use super::inside::{AddOns, Core, ServerState};
use super::router::Router;
use super::tools_config::{self as tools, ToolsConfig};
use crate::budget::ByteBudget;
use crate::bus::ChangeBus;
use crate::changes::Hub;
use crate::context::RequestContext;
use crate::cursor::CursorSealer;
use crate::error::{DeclareError, ResourceError};
use crate::extension::{self, PromptCompletion};
use crate::provider::IntoProvider;

/// Why a server could not be built.
///
/// Its `Debug` form is its message, as `Display` writes it: `main` returning this error
/// (or a `Box<dyn Error>` holding it) through `?` prints the message, not the structure.
#[derive(Clone, PartialEq, Eq)]
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
    /// The operating system's random source failed, and no cursor key was given: no
    /// key is ever made from anything else.
    NoRandomness(String),
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
            BuildError::NoRandomness(why) => f.write_str(why),
        }
    }
}

impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    router: Router,
    config: ServerConfig,
    cursor_keys: Vec<[u8; 32]>,
    bus: Option<Arc<dyn ChangeBus>>,
    add_ons: AddOns,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("router", &self.router)
            .field("methods", &self.add_ons.methods.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }
}

impl ServerBuilder {
    pub(super) fn new(info: Implementation) -> Self {
        ServerBuilder {
            info,
            instructions: None,
            router: Router::new(),
            config: ServerConfig::default(),
            cursor_keys: Vec::new(),
            bus: None,
            add_ons: AddOns::default(),
        }
    }

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

    /// Mounts `provider` whose changes code outside it announces: see
    /// [`Router::mount_announced`].
    #[must_use]
    pub fn mount_announced<P: IntoProvider>(
        mut self,
        prefix: impl Into<String>,
        provider: P,
    ) -> Self {
        self.router = self.router.mount_announced(prefix, provider);
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

    /// Serves SEP-2093 as the declared extension `dev.rsrc/resource-metadata` (`true`,
    /// the default), or exactly the standard shapes (`false`): see
    /// [`ServerConfig::resource_metadata`]. A later [`ServerBuilder::config`] replaces it.
    #[must_use]
    pub fn resource_metadata(mut self, on: bool) -> Self {
        self.config.resource_metadata = on;
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
        self.add_ons
            .methods
            .insert(method.into(), extension::method_handler(handler));
        self
    }

    /// Declares a capability beyond those of the engine (e.g. `"prompts"`, `{}`).
    #[must_use]
    pub fn capability(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
        self.add_ons.capabilities.insert(name.into(), value);
        self
    }

    /// Declares extension `id` (e.g. `io.modelcontextprotocol/skills`) with its
    /// `settings` under `capabilities.extensions`; serve its methods with
    /// [`ServerBuilder::method`].
    #[must_use]
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.add_ons.extensions.insert(id.into(), settings);
        self
    }

    /// Completes prompt arguments (`completion/complete` with `ref/prompt`).
    #[must_use]
    pub fn prompt_completion<F, Fut>(mut self, complete: F) -> Self
    where
        F: Fn(RequestContext, PromptCompletion) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ResourceError>> + Send + 'static,
    {
        self.add_ons.prompt_completer = Some(extension::prompt_completer(complete));
        self
    }

    /// Traces requests with `tracing`: decides whether each request is sampled before
    /// its span (`mcp.request`) exists, and makes the span a child of the trace its client
    /// started (see [`RequestTracing`](crate::observe::RequestTracing)). Without it, every
    /// request's span has target `rsrc::request` and no parent.
    #[must_use]
    pub fn request_tracing(
        mut self,
        tracing: impl crate::observe::RequestTracing + 'static,
    ) -> Self {
        self.add_ons.request_tracing = Some(std::sync::Arc::new(tracing));
        self
    }

    /// Also offers the resources as tools (`list_resources`, `read_resource`,
    /// `search_resources`, `list_resource_templates`) and declares `tools`, for hosts whose
    /// model only calls tools. The resource methods are unchanged. See
    /// [`ToolsConfig`].
    #[must_use]
    pub fn tools(mut self, config: ToolsConfig) -> Self {
        self.add_ons.tools = Some(config);
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
        let config = &self.config;
        let zero = [
            (config.page_size == 0, "page_size"),
            (config.max_uri_len == 0, "max_uri_len"),
            (config.max_subscriptions == 0, "max_subscriptions"),
            (config.read_budget == 0, "read_budget"),
        ];
        if let Some((_, name)) = zero.into_iter().find(|(is_zero, _)| *is_zero) {
            return Err(BuildError::ZeroLimit(name));
        }
        self.add_ons.check()?;
        let hub = Hub::with_bus(self.bus.take());
        hub.set_lists_audible(mounts.iter().any(|m| m.capabilities().list_changed));
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
                core: Core {
                    info: self.info,
                    host_info: std::sync::OnceLock::new(),
                    instructions: self.instructions,
                    router: self.router,
                    sealer: match self.cursor_keys.split_first() {
                        None => CursorSealer::random()
                            .map_err(|e| BuildError::NoRandomness(e.to_string()))?,
                        Some((key, older)) => CursorSealer::rotating(*key, older.to_vec()),
                    },
                    templates,
                    hub,
                    budget: ByteBudget::new(self.config.read_budget),
                    config: self.config,
                },
                add_ons: self.add_ons,
            }),
        })
    }
}

impl AddOns {
    /// Refuses an extension method or capability that would shadow the engine's or the
    /// tools bridge's, and a tools bridge with a zero limit.
    fn check(&self) -> Result<(), BuildError> {
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
        // The engine declares rsrc's SEP-2093 extension itself, where its switch says.
        let experimental = self
            .capabilities
            .get("experimental")
            .and_then(|e| e.as_object());
        if let Some(id) = self
            .extensions
            .keys()
            .chain(experimental.into_iter().flat_map(|e| e.keys()))
            .find(|id| *id == RESOURCE_METADATA_EXTENSION)
        {
            return Err(BuildError::ReservedCapability(id.clone()));
        }
        if self
            .tools
            .as_ref()
            .is_some_and(|t| t.page == 0 || t.max_text == 0 || t.scan == 0)
        {
            return Err(BuildError::ZeroLimit("tools"));
        }
        Ok(())
    }
}
