//! The [`Provider`] trait: the one thing a user implements to expose data as resources.
//!
//! A provider answers four questions about the URIs under its mount point: what is there
//! (`list`, optionally the children of one collection), what is this (`metadata`), what
//! does it contain (`read`), and what could this template variable be (`complete`). The
//! engine does everything protocol-shaped around it: revisions, cursors, error codes,
//! caching hints, cancellation and progress.
//!
//! Invariants the engine relies on:
//! - `list` is keyset-paginated: the provider returns the position after its last item as
//!   opaque bytes ([`Page::next`]) and gets them back in [`ListRequest::after`]. The engine
//!   seals them into the client's cursor, so a provider never sees forged bytes.
//! - `read` of a document returns at least one entry, all with the requested URI (several
//!   entries are format alternatives); `read` of a collection may return children.
//! - Errors are [`ResourceError`]s; the engine maps them to the wire.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rsrc_protocol::{CacheHint, Completion, Resource, ResourceContents, ResourceTemplate};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::changes::ChangeFeed;
use crate::context::RequestContext;
use crate::error::ResourceError;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The most bytes a provider may put in a keyset position (enough for a path of
/// `PATH_MAX` bytes and a few more).
pub const MAX_POSITION_BYTES: usize = 8192;

/// A request for one page of resources.
#[derive(Debug, Clone, Copy)]
pub struct ListRequest<'a> {
    /// `Some(uri)`: list the direct children of this collection. `None`: the provider's
    /// default listing.
    pub parent: Option<&'a str>,
    /// Where the previous page ended, as the provider wrote it in [`Page::next`].
    pub after: Option<&'a [u8]>,
    /// The most resources to return; a provider may return fewer.
    pub limit: usize,
}

/// One resource of a page: a typed [`Resource`], or one already encoded as JSON.
///
/// A provider that lists the same resources again and again (a cached directory, a static
/// set) can encode each one once with [`Listed::encoded`] and hand out clones, which cost
/// a reference count instead of building and serializing the resource on every page.
#[derive(Clone, Debug)]
pub struct Listed(ListedInner);

#[derive(Clone, Debug)]
enum ListedInner {
    Typed(Box<Resource>),
    Encoded(Arc<RawValue>),
}

impl Listed {
    /// Encodes `resource` once, with both spellings of its kind written.
    pub fn encoded(mut resource: Resource) -> Listed {
        resource.normalize_kind();
        match serde_json::value::to_raw_value(&resource) {
            Ok(raw) => Listed(ListedInner::Encoded(Arc::from(raw))),
            Err(_) => Listed(ListedInner::Typed(Box::new(resource))),
        }
    }

    /// The typed resource, if it was not encoded.
    pub fn as_resource(&self) -> Option<&Resource> {
        match &self.0 {
            ListedInner::Typed(r) => Some(r),
            ListedInner::Encoded(_) => None,
        }
    }

    /// Writes both spellings of a typed resource's kind.
    pub(crate) fn normalize_kind(&mut self) {
        if let ListedInner::Typed(r) = &mut self.0 {
            r.normalize_kind();
        }
    }
}

impl From<Resource> for Listed {
    fn from(resource: Resource) -> Self {
        Listed(ListedInner::Typed(Box::new(resource)))
    }
}

impl Serialize for Listed {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            ListedInner::Typed(r) => r.serialize(serializer),
            ListedInner::Encoded(raw) => raw.serialize(serializer),
        }
    }
}

/// One page of resources.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The resources, in the provider's stable order.
    pub resources: Vec<Listed>,
    /// The position after the last resource when more may follow (at most
    /// [`MAX_POSITION_BYTES`]); `None` at the end.
    pub next: Option<Vec<u8>>,
    /// Caching hint for 2026-07-28 clients; the server default applies when absent.
    pub cache: Option<CacheHint>,
}

/// The result of reading a resource.
#[derive(Debug, Clone, Default)]
pub struct ReadOutput {
    /// The entries: format alternatives of a document, or children of a collection.
    pub contents: Vec<ResourceContents>,
    /// Caching hint for 2026-07-28 clients; the server default applies when absent.
    pub cache: Option<CacheHint>,
}

impl From<Vec<ResourceContents>> for ReadOutput {
    fn from(contents: Vec<ResourceContents>) -> Self {
        ReadOutput {
            contents,
            cache: None,
        }
    }
}

/// A request to complete one variable of a resource template.
#[derive(Debug, Clone, Copy)]
pub struct CompleteRequest<'a> {
    /// The template string, exactly as the provider declared it.
    pub template: &'a str,
    /// The variable being completed.
    pub argument: &'a str,
    /// What the user typed so far.
    pub value: &'a str,
    /// Variables already chosen.
    pub context: &'a BTreeMap<String, String>,
}

/// A source of resources.
///
/// Implement it with `async fn`s; the engine boxes the futures once per call. Every method
/// receives the [`RequestContext`] of the request being served.
pub trait Provider: Send + Sync + 'static {
    /// The templates this provider serves; asked once, when it is mounted.
    fn templates(&self) -> Vec<ResourceTemplate> {
        Vec::new()
    }

    /// One page of resources: the default listing, or the children of `req.parent`
    /// ([`ResourceError::NotACollection`] if it is a document, `NotFound` if it does not
    /// exist).
    fn list(
        &self,
        ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> impl Future<Output = Result<Page, ResourceError>> + Send;

    /// The metadata of one resource, without content.
    fn metadata(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<Resource, ResourceError>> + Send;

    /// The contents of one resource.
    fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<ReadOutput, ResourceError>> + Send;

    /// Whether [`Provider::complete`] offers values for some template variable; the server
    /// declares the `completions` capability only if a provider does.
    fn offers_completion(&self) -> bool {
        false
    }

    /// Completion values for a template variable. The default offers none.
    fn complete(
        &self,
        ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> impl Future<Output = Result<Completion, ResourceError>> + Send {
        let _ = (ctx, req);
        async { Ok(Completion::empty()) }
    }

    /// Whether clients may subscribe to this provider's resources: it then publishes
    /// [`ChangeFeed::updated`] when one changes. The server declares
    /// `resources.subscribe` only if a provider does.
    fn offers_subscriptions(&self) -> bool {
        false
    }

    /// Whether this provider publishes [`ChangeFeed::list_changed`]; the server declares
    /// `resources.listChanged` only if a provider does.
    fn publishes_list_changes(&self) -> bool {
        false
    }

    /// Receives the server's change feed, once, when the server is built.
    fn attach(&self, feed: ChangeFeed) {
        let _ = feed;
    }

    /// Accepts a subscription to `uri`, or refuses it with the error a read would give
    /// (the default: whatever [`Provider::metadata`] says).
    fn subscribe(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> impl Future<Output = Result<(), ResourceError>> + Send {
        let found = self.metadata(ctx, uri);
        async move { found.await.map(drop) }
    }
}

/// The object-safe face of [`Provider`], used by the router.
pub(crate) trait DynProvider: Send + Sync {
    fn templates(&self) -> Vec<ResourceTemplate>;
    fn offers_completion(&self) -> bool;
    fn offers_subscriptions(&self) -> bool;
    fn publishes_list_changes(&self) -> bool;
    fn attach(&self, feed: ChangeFeed);
    fn subscribe<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), ResourceError>>;
    fn list<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: ListRequest<'a>,
    ) -> BoxFuture<'a, Result<Page, ResourceError>>;
    fn metadata<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Resource, ResourceError>>;
    fn read<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<ReadOutput, ResourceError>>;
    fn complete<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: CompleteRequest<'a>,
    ) -> BoxFuture<'a, Result<Completion, ResourceError>>;
}

impl<P: Provider> DynProvider for P {
    fn templates(&self) -> Vec<ResourceTemplate> {
        Provider::templates(self)
    }

    fn offers_completion(&self) -> bool {
        Provider::offers_completion(self)
    }

    fn offers_subscriptions(&self) -> bool {
        Provider::offers_subscriptions(self)
    }

    fn publishes_list_changes(&self) -> bool {
        Provider::publishes_list_changes(self)
    }

    fn attach(&self, feed: ChangeFeed) {
        Provider::attach(self, feed);
    }

    fn subscribe<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), ResourceError>> {
        Box::pin(Provider::subscribe(self, ctx, uri))
    }

    fn list<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: ListRequest<'a>,
    ) -> BoxFuture<'a, Result<Page, ResourceError>> {
        Box::pin(Provider::list(self, ctx, req))
    }

    fn metadata<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Resource, ResourceError>> {
        Box::pin(Provider::metadata(self, ctx, uri))
    }

    fn read<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<ReadOutput, ResourceError>> {
        Box::pin(Provider::read(self, ctx, uri))
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: CompleteRequest<'a>,
    ) -> BoxFuture<'a, Result<Completion, ResourceError>> {
        Box::pin(Provider::complete(self, ctx, req))
    }
}
