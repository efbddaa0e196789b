//! [`Router`]: the providers of a server, mounted by URI prefix.
//!
//! Invariants: a URI is served by the provider with the longest prefix it starts with;
//! every URI and template a provider declares can be reached through its prefix (checked
//! at mount, reported by [`ServerBuilder::build`](super::ServerBuilder::build)).

use std::sync::Arc;

use crate::error::DeclareError;
use crate::provider::{DynProvider, IntoProvider, Mounted, Provider, ProviderCapabilities};

/// Providers mounted by URI prefix.
///
/// A URI is served by the provider with the longest prefix it starts with; the default
/// listing walks the providers in mount order.
#[derive(Default)]
pub struct Router {
    pub(super) mounts: Vec<Mount>,
    /// Declarations that failed to become providers, reported by
    /// [`ServerBuilder::build`](super::ServerBuilder::build).
    pub(super) invalid: Vec<(String, DeclareError)>,
}

pub(crate) struct Mount {
    pub(crate) prefix: String,
    pub(crate) provider: Arc<dyn DynProvider>,
    /// Code outside the provider announces its changes ([`Router::mount_announced`]).
    pub(crate) announced: bool,
}

impl Mount {
    /// What the mount offers: its provider's capabilities, and subscriptions and list
    /// changes when it is announced.
    pub(crate) fn capabilities(&self) -> ProviderCapabilities {
        let offered = self.provider.capabilities();
        if self.announced {
            offered.with_subscribe(true).with_list_changed(true)
        } else {
            offered
        }
    }
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
    /// `db://{name}/…` under `db://shop`), or [`ServerBuilder::build`](super::ServerBuilder::build) fails naming both.
    #[must_use]
    pub fn mount<P: IntoProvider>(self, prefix: impl Into<String>, provider: P) -> Self {
        self.add(prefix.into(), provider, false)
    }

    /// Mounts `provider` as [`Router::mount`] does, for resources that code outside it
    /// changes (a tool of the application): the server then declares
    /// `resources.subscribe` and `resources.listChanged` for it, and the changes that
    /// code announces through [`Server::changes`](crate::Server::changes)
    /// (`updated(uri)`, `list_changed()`) reach the read cache and the clients. A
    /// provider that watches its source itself (a directory, a database) needs no
    /// announcing: it publishes its own changes.
    #[must_use]
    pub fn mount_announced<P: IntoProvider>(self, prefix: impl Into<String>, provider: P) -> Self {
        self.add(prefix.into(), provider, true)
    }

    fn add<P: IntoProvider>(mut self, prefix: String, provider: P, announced: bool) -> Self {
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
                provider: Arc::new(Mounted::new(provider, &prefix)),
                prefix,
                announced,
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
