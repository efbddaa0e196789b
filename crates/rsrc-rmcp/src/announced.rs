//! [`Announced`]: a provider whose resources code outside it changes (an rmcp tool), which
//! tells the server so through [`Resources::changes`](crate::Resources::changes).
//!
//! Invariant: it serves exactly what the provider it wraps serves; it only declares, in
//! addition, that clients may subscribe to its resources and hear list changes, which
//! the code announcing them publishes.

use rsrc::protocol::{Completion, Resource, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, IntoProvider, ListRequest, Page, Provider, ProviderCapabilities,
    ReadOutput, RequestContext, ResourceError, SearchRequest,
};

/// Mount a provider (a `#[resources]` type, a `ResourceSet`, any provider) wrapped in
/// this when your own code (an rmcp tool) changes what it serves: the server then
/// declares `resources.subscribe` and `resources.listChanged`, and the changes your code
/// announces with [`Resources::changes`](crate::Resources::changes)`().updated(uri)` or
/// `.list_changed()` reach the read cache and the clients.
///
/// ```
/// # use rsrc::ResourceSet;
/// let server = rsrc::Server::builder("notes", "1.0")
///     .mount("notes:", rsrc_rmcp::Announced::new(ResourceSet::new()))
///     .build()
///     .unwrap();
/// let resources = rsrc_rmcp::Resources::new(server);
/// resources.changes().list_changed(); // say, after a tool added a note
/// ```
#[derive(Debug, Clone)]
pub struct Announced<P>(P);

impl<P> Announced<P> {
    /// Wraps `provider`.
    pub fn new(provider: P) -> Self {
        Announced(provider)
    }
}

impl<P: IntoProvider> IntoProvider for Announced<P> {
    type Provider = AnnouncedProvider<P::Provider>;

    fn into_provider(self) -> Result<Self::Provider, rsrc::declare::DeclareError> {
        Ok(AnnouncedProvider(self.0.into_provider()?))
    }
}

/// The provider an [`Announced`] becomes when mounted.
#[derive(Debug)]
pub struct AnnouncedProvider<P>(P);

impl<P: Provider> Provider for AnnouncedProvider<P> {
    fn templates(&self) -> Vec<ResourceTemplate> {
        self.0.templates()
    }

    fn list(
        &self,
        ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> impl Future<Output = Result<Page, ResourceError>> + Send {
        self.0.list(ctx, req)
    }

    fn metadata(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<Resource, ResourceError>> + Send {
        self.0.metadata(ctx, uri)
    }

    fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<ReadOutput, ResourceError>> + Send {
        self.0.read(ctx, uri)
    }

    fn complete(
        &self,
        ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> impl Future<Output = Result<Completion, ResourceError>> + Send {
        self.0.complete(ctx, req)
    }

    fn search(
        &self,
        ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> impl Future<Output = Result<Option<Page>, ResourceError>> + Send {
        self.0.search(ctx, req)
    }

    fn capabilities(&self) -> ProviderCapabilities {
        self.0
            .capabilities()
            .with_subscribe(true)
            .with_list_changed(true)
    }

    fn attach(&self, feed: ChangeFeed) {
        self.0.attach(feed);
    }

    fn hears_every_change(&self) -> bool {
        self.0.hears_every_change()
    }

    fn armed(&self) -> bool {
        self.0.armed()
    }

    fn subscribe(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<(), ResourceError>> + Send {
        self.0.subscribe(ctx, uri)
    }
}
