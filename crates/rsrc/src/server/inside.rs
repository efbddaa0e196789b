//! The engine's inside API: what a server holds ([`ServerState`]: its [`Core`] and its
//! [`AddOns`]), and the few named methods through which the handlers, the dispatcher,
//! the tools bridge and the HTTP session glue reach it.
//!
//! Invariants:
//! - Only this file and the server's own public methods (`handle.rs`, `host.rs`,
//!   `builder.rs`) read the state's fields; every rule asks one of the methods below,
//!   and takes the state, never the [`Server`](super::Server) handle.
//! - The capabilities are derived from what the mounted providers and add-ons offer, so no
//!   provider can offer subscriptions, list changes or completion without the capability
//!   being declared, nor the reverse. `resources.filtering` (SEP-2564) is always declared
//!   with both fields: the engine applies a filter to every provider's listing
//!   (`handlers/listing.rs`), whether or not the provider applies it itself.
//! - rsrc's SEP-2093 extension (`dev.rsrc/resource-metadata`) is declared exactly when
//!   it is served (`serves_resource_metadata`), under `extensions` from
//!   2026-07-28 and `experimental` before (`capabilities_for`).

use std::collections::BTreeMap;
use std::sync::Arc;

use rsrc_protocol::jsonrpc::RequestId;
use rsrc_protocol::lifecycle::{FilteringCapability, ResourcesCapability};
use rsrc_protocol::resources::{ListFilter, ResourceMetadataExtension};
use rsrc_protocol::{
    Era, Implementation, Meta, ProtocolVersion, ResourceTemplate, ServerCapabilities,
};

use super::config::ServerConfig;
use super::router::Mount;
use super::router::Router;
use super::tools_config::{CAPABILITY, METHODS, ToolsConfig};
use crate::budget::ByteBudget;
use crate::changes::{Hub, Listener};
use crate::context::Notifier;
use crate::cursor::CursorSealer;
use crate::error::{RequestError, ResourceError};
use crate::extension::{MethodHandler, PromptCompleter};
use crate::observe::RequestTracing;

/// What a built server holds.
pub(super) struct ServerState {
    pub(super) core: Core,
    pub(super) add_ons: AddOns,
}

/// What every server has: who it is, its providers, its limits, the sealer of its
/// cursors, where changes meet listeners, and the budget of content in flight.
pub(super) struct Core {
    pub(super) info: Implementation,
    /// The name a host stamped on the server, once ([`Server::stamp_info`](crate::Server::stamp_info)).
    pub(super) host_info: std::sync::OnceLock<Implementation>,
    pub(super) instructions: Option<String>,
    pub(super) router: Router,
    pub(super) config: ServerConfig,
    pub(super) sealer: CursorSealer,
    /// Every provider's templates, with the mount that serves them, gathered once.
    pub(super) templates: Vec<(u16, ResourceTemplate)>,
    /// Where providers' changes meet the listeners.
    pub(super) hub: Arc<Hub>,
    /// Content bytes in flight, across every connection.
    pub(super) budget: ByteBudget,
}

/// What an application adds beyond resources.
#[derive(Default)]
pub(super) struct AddOns {
    /// Methods beyond the engine's.
    pub(super) methods: BTreeMap<String, MethodHandler>,
    /// Capabilities beyond the engine's.
    pub(super) capabilities: Meta,
    pub(super) prompt_completer: Option<PromptCompleter>,
    /// The tools bridge, when enabled.
    pub(super) tools: Option<ToolsConfig>,
    /// Extensions declared under `capabilities.extensions`.
    pub(super) extensions: Meta,
    /// Samples requests' traces and makes their spans children of their clients'.
    pub(super) request_tracing: Option<Arc<dyn RequestTracing>>,
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.core.info)
            .field("router", &self.core.router)
            .finish_non_exhaustive()
    }
}

impl ServerState {
    /// The mounts, in mount order (a cursor addresses one by its index).
    pub(super) fn mounts(&self) -> &[Mount] {
        &self.core.router.mounts
    }

    /// The mount serving `uri` (the longest matching prefix), with its index; not found
    /// if none does. `uri` is one the handlers canonicalized (validated once, there).
    pub(super) fn route(&self, uri: &str) -> Result<(u16, &Mount), RequestError> {
        self.core
            .router
            .resolve(uri)
            .ok_or_else(|| ResourceError::not_found(uri).into())
    }

    /// Every provider's templates, with the index of the mount serving each.
    pub(super) fn templates(&self) -> &[(u16, ResourceTemplate)] {
        &self.core.templates
    }

    /// Seals and opens this server's cursors.
    pub(super) fn sealer(&self) -> &CursorSealer {
        &self.core.sealer
    }

    /// A new listener of changes, whose notifications go to `notifier` (tagged with
    /// `subscription`, a `subscriptions/listen` stream's id), held to
    /// [`ServerConfig::max_subscriptions`].
    pub(super) fn listener(
        &self,
        notifier: Notifier,
        subscription: Option<RequestId>,
    ) -> Arc<Listener> {
        self.core
            .hub
            .listener(notifier, subscription, self.config().max_subscriptions)
    }

    /// A new listener that delivers nothing until started: a stream's, held to
    /// [`ServerConfig::max_subscriptions`] (see [`Server::hold_changes`](crate::Server::hold_changes)).
    pub(super) fn parked_listener(&self) -> Arc<Listener> {
        self.core.hub.parked(true, self.config().max_subscriptions)
    }

    /// The server's name and version: the host's, once one stamped it.
    pub(super) fn info(&self) -> &Implementation {
        self.core.host_info.get().unwrap_or(&self.core.info)
    }

    /// The instructions for the model, if any.
    pub(super) fn instructions(&self) -> Option<&str> {
        self.core.instructions.as_deref()
    }

    /// The configuration.
    pub(super) fn config(&self) -> &ServerConfig {
        &self.core.config
    }

    /// The budget of content in flight.
    pub(super) fn budget(&self) -> &ByteBudget {
        &self.core.budget
    }

    /// Whether every provider would publish a change made now.
    pub(super) fn hears_every_change(&self) -> bool {
        self.mounts()
            .iter()
            .all(|m| m.provider.hears_every_change())
    }

    /// Whether some provider offers subscriptions.
    pub(super) fn offers_subscriptions(&self) -> bool {
        self.mounts().iter().any(|m| m.capabilities().subscribe)
    }

    /// Whether some provider publishes list changes.
    pub(super) fn publishes_list_changes(&self) -> bool {
        self.mounts().iter().any(|m| m.capabilities().list_changed)
    }

    /// What the server declares in `initialize` and `server/discover`.
    pub(super) fn declared_capabilities(&self) -> ServerCapabilities {
        let add_ons = &self.add_ons;
        // Every template can be completed (`Provider::complete` answers, with no values
        // by default), so serving one is what declares completion.
        let completions = !self.templates().is_empty() || add_ons.prompt_completer.is_some();
        let mut other = add_ons.capabilities.clone();
        if add_ons.tools.is_some() {
            other.insert(CAPABILITY.into(), serde_json::json!({}));
        }
        let mut declared = ServerCapabilities {
            resources: Some(ResourcesCapability {
                subscribe: self.offers_subscriptions().then_some(true),
                list_changed: self.publishes_list_changes().then_some(true),
                filtering: Some(FilteringCapability {
                    supported: ListFilter::FIELDS.map(str::to_owned).to_vec(),
                }),
            }),
            logging: Some(Default::default()),
            completions: completions.then(Default::default),
            extensions: (!add_ons.extensions.is_empty()).then(|| add_ons.extensions.clone()),
            other,
        };
        // Where the newest revision declares it; `capabilities_for` moves it for 2025.
        if self.serves_resource_metadata() {
            ResourceMetadataExtension::all().declare(&mut declared, Era::Modern);
        }
        declared
    }

    /// What a client speaking `version` is told the server declares: the declaration
    /// above, with rsrc's SEP-2093 extension where `version` declares an extension
    /// (`experimental` before 2026-07-28).
    pub(super) fn capabilities_for(&self, version: ProtocolVersion) -> ServerCapabilities {
        let mut declared = self.declared_capabilities();
        ResourceMetadataExtension::place(&mut declared, version.era());
        declared
    }

    /// Whether SEP-2093 is served, as the declared extension `dev.rsrc/resource-metadata`
    /// ([`ServerConfig::resource_metadata`]); when not, only the standard shapes are.
    pub(super) fn serves_resource_metadata(&self) -> bool {
        self.config().resource_metadata
    }

    /// The application's sampling and parenting of requests' spans.
    pub(super) fn request_tracing(&self) -> Option<&dyn RequestTracing> {
        self.add_ons.request_tracing.as_deref()
    }

    /// The application's completion of prompt arguments, if it gave one.
    pub(super) fn prompt_completer(&self) -> Option<&PromptCompleter> {
        self.add_ons.prompt_completer.as_ref()
    }

    /// The application's handler of `method`, if it serves one.
    pub(super) fn extension_method(&self, method: &str) -> Option<MethodHandler> {
        self.add_ons.methods.get(method).cloned()
    }

    /// The tools bridge's settings, if it is on.
    pub(super) fn tools(&self) -> Option<&ToolsConfig> {
        self.add_ons.tools.as_ref()
    }

    /// The tools bridge's settings; refused as an unknown method when it is off.
    pub(super) fn tools_config(&self) -> Result<&ToolsConfig, RequestError> {
        self.tools()
            .ok_or_else(|| RequestError::MethodNotFound("tools".into()))
    }

    /// Whether `method` is served beyond the engine's own: the tools bridge's, or an
    /// extension method.
    pub(super) fn serves_extension(&self, method: &str) -> bool {
        self.tools().is_some() && METHODS.contains(&method)
            || self.add_ons.methods.contains_key(method)
    }
}
