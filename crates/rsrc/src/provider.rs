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
//! - A filtered `list` ([`ListRequest::filter`]) may be applied by the provider in its
//!   walk or not: the engine keeps only the matching entries of whatever comes back.
//! - `read` of a document returns at least one entry, all with the requested URI (several
//!   entries are format alternatives); `read` of a collection may return children.
//! - Errors are [`ResourceError`]s; the engine maps them to the wire.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use rsrc_protocol::{CacheHint, Completion, Resource, ResourceContents, ResourceTemplate};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::changes::ChangeFeed;
use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::filter::Filter;
use crate::future::BoxFuture;
use crate::observe::ProviderOp;

/// What a provider offers beyond listing, reading and completing templates.
///
/// ```
/// # use rsrc::ProviderCapabilities;
/// let caps = ProviderCapabilities::default().with_subscribe(true).with_list_changed(true);
/// assert!(caps.subscribe && caps.list_changed);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderCapabilities {
    /// Clients may subscribe to this provider's resources: it publishes
    /// [`ChangeFeed::updated`] when one changes.
    pub subscribe: bool,
    /// The provider publishes [`ChangeFeed::list_changed`].
    pub list_changed: bool,
}

impl ProviderCapabilities {
    /// Declares (or not) subscriptions.
    #[must_use]
    pub fn with_subscribe(mut self, yes: bool) -> Self {
        self.subscribe = yes;
        self
    }

    /// Declares (or not) list-change notifications.
    #[must_use]
    pub fn with_list_changed(mut self, yes: bool) -> Self {
        self.list_changed = yes;
        self
    }
}

/// Something that becomes a [`Provider`] when mounted: every provider, and the types the
/// `#[resources]` macro declares (which build a [`ResourceSet`](crate::ResourceSet) from
/// their methods). A declaration that turns out invalid fails
/// [`ServerBuilder::build`](crate::ServerBuilder::build).
pub trait IntoProvider {
    /// The provider it becomes.
    type Provider: Provider;

    /// Builds the provider.
    fn into_provider(self) -> Result<Self::Provider, crate::error::DeclareError>;
}

impl<P: Provider> IntoProvider for P {
    type Provider = P;

    fn into_provider(self) -> Result<P, crate::error::DeclareError> {
        Ok(self)
    }
}

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
    /// SEP-2564: the client wants only the resources this filter matches. A provider may
    /// apply it in its walk (see [`crate::filter::page`]): it then examines at most
    /// [`Filter::scan`] candidates and may return a short or empty page whose `next` is
    /// the position after the last candidate examined. A provider may also ignore it:
    /// the engine keeps only the matching entries of any page, and asks again while the
    /// page is not full, within a bound.
    pub filter: Option<&'a Filter>,
}

/// One resource of a page: a typed [`Resource`], or one already encoded as JSON.
///
/// A provider that lists the same resources again and again (a cached directory, a static
/// set) can encode each one once with [`ListEntry::encoded`] and hand out clones, which cost
/// a reference count instead of building and serializing the resource on every page.
#[derive(Clone, Debug)]
pub struct ListEntry(EntryForm);

#[derive(Clone, Debug)]
enum EntryForm {
    Typed(Box<Resource>),
    Encoded(Arc<RawValue>),
}

impl ListEntry {
    /// Encodes `resource` once, with both spellings of its kind written.
    pub fn encoded(mut resource: Resource) -> ListEntry {
        resource.normalize_kind();
        match serde_json::value::to_raw_value(&resource) {
            Ok(raw) => ListEntry(EntryForm::Encoded(Arc::from(raw))),
            Err(_) => ListEntry(EntryForm::Typed(Box::new(resource))),
        }
    }

    /// The typed resource, if it was not encoded.
    pub fn as_resource(&self) -> Option<&Resource> {
        match &self.0 {
            EntryForm::Typed(r) => Some(r),
            EntryForm::Encoded(_) => None,
        }
    }

    /// The resource, decoded again if it was encoded; `None` only if that fails.
    pub fn to_resource(&self) -> Option<std::borrow::Cow<'_, Resource>> {
        match &self.0 {
            EntryForm::Typed(r) => Some(std::borrow::Cow::Borrowed(r)),
            EntryForm::Encoded(raw) => serde_json::from_str(raw.get())
                .ok()
                .map(std::borrow::Cow::Owned),
        }
    }

    /// The JSON of an encoded entry (`None` for a typed one).
    pub fn encoding(&self) -> Option<&str> {
        match &self.0 {
            EntryForm::Typed(_) => None,
            EntryForm::Encoded(raw) => Some(raw.get()),
        }
    }

    /// Whether both are encoded entries with the same JSON: a comparison of pointers
    /// when both are clones of one [`ListEntry::encoded`], of bytes otherwise.
    pub fn same_encoding(&self, other: &ListEntry) -> bool {
        match (&self.0, &other.0) {
            (EntryForm::Encoded(a), EntryForm::Encoded(b)) => {
                Arc::ptr_eq(a, b) || a.get() == b.get()
            }
            _ => false,
        }
    }

    /// Whether the entry matches `filter` (an entry that cannot be read back does not).
    pub(crate) fn matches(&self, filter: &Filter) -> bool {
        self.name_and_uri(|name, uri| filter.matches(name, uri))
            .unwrap_or(false)
    }

    /// `f(name, uri)` of the resource, read back without decoding the rest of an encoded
    /// one; `None` only if it cannot be read back.
    pub(crate) fn name_and_uri<T>(&self, f: impl FnOnce(&str, &str) -> T) -> Option<T> {
        #[derive(serde::Deserialize)]
        struct NameAndUri<'a> {
            #[serde(borrow)]
            name: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            uri: std::borrow::Cow<'a, str>,
        }
        match &self.0 {
            EntryForm::Typed(r) => Some(f(&r.name, &r.uri)),
            EntryForm::Encoded(raw) => serde_json::from_str::<NameAndUri<'_>>(raw.get())
                .ok()
                .map(|r| f(&r.name, &r.uri)),
        }
    }

    /// Writes both spellings of a typed resource's kind.
    pub(crate) fn normalize_kind(&mut self) {
        if let EntryForm::Typed(r) = &mut self.0 {
            r.normalize_kind();
        }
    }

    /// Removes SEP-2093's members ([`Resource::strip_sep_2093`]). An encoded entry is
    /// decoded and left typed only if its encoding may hold one (an entry whose encoding
    /// cannot be read back is left as it is: it would fail the same way elsewhere).
    pub(crate) fn strip_sep_2093(&mut self) {
        match &mut self.0 {
            EntryForm::Typed(r) => r.strip_sep_2093(),
            EntryForm::Encoded(raw) => {
                let text = raw.get();
                // A member name is written with its quotes; inside a string value they
                // would be escaped, so this never misses one.
                if !text.contains("\"resourceType\"") && !text.contains("\"capabilities\"") {
                    return;
                }
                if let Ok(mut r) = serde_json::from_str::<Resource>(text) {
                    r.strip_sep_2093();
                    self.0 = EntryForm::Typed(Box::new(r));
                }
            }
        }
    }
}

impl From<Resource> for ListEntry {
    fn from(resource: Resource) -> Self {
        ListEntry(EntryForm::Typed(Box::new(resource)))
    }
}

impl Serialize for ListEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            EntryForm::Typed(r) => r.serialize(serializer),
            EntryForm::Encoded(raw) => raw.serialize(serializer),
        }
    }
}

/// One page of resources.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The resources, in the provider's stable order.
    pub resources: Vec<ListEntry>,
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

/// What [`Provider::search`] is asked.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SearchRequest<'a> {
    /// The words, lowercase; a resource matches when its name, title, URI or description
    /// (lowercased) contains each.
    pub words: &'a [String],
    /// Where the previous page of this search ended (a position this provider returned).
    pub after: Option<&'a [u8]>,
    /// Most resources to return.
    pub limit: usize,
}

impl<'a> SearchRequest<'a> {
    /// A search for `words` (lowercase), from `after`, for at most `limit` resources.
    pub fn new(words: &'a [String], after: Option<&'a [u8]>, limit: usize) -> Self {
        SearchRequest {
            words,
            after,
            limit,
        }
    }

    /// Whether `text` (any case) contains every word.
    pub fn matches(&self, text: &str) -> bool {
        let text = text.to_lowercase();
        self.words.iter().all(|w| text.contains(w.as_str()))
    }

    /// Whether `resource` matches: every word is in its name, title, URI or description.
    pub fn matches_resource(&self, resource: &Resource) -> bool {
        let fields = [
            Some(resource.name.as_str()),
            resource.title.as_deref(),
            Some(resource.uri.as_str()),
            resource.description.as_deref(),
        ];
        self.matches(&fields.into_iter().flatten().collect::<Vec<_>>().join("\n"))
    }
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

    /// The URIs this provider declares one by one, if it does (a [`ResourceSet`]'s
    /// resources); asked once, when it is mounted, to check that each lies under the
    /// mount prefix. A provider that finds its resources at run time declares none.
    ///
    /// [`ResourceSet`]: crate::ResourceSet
    fn fixed_uris(&self) -> Vec<String> {
        Vec::new()
    }

    /// One page of resources: the default listing, or the children of `req.parent`
    /// ([`ResourceError::not_a_collection`] if it is a document, `NotFound` if it does not
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

    /// Completion values for a template variable. The default offers none.
    fn complete(
        &self,
        ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> impl Future<Output = Result<Completion, ResourceError>> + Send {
        let _ = (ctx, req);
        async { Ok(Completion::empty()) }
    }

    /// The resources whose name, title, URI or description contains every one of
    /// `req.words` (lowercase), in this provider's stable order, from `req.after`: at most
    /// `req.limit` of them, and `next` where to go on (also when a page holds fewer
    /// because the provider bounded its work). `Ok(None)` (the default) means the
    /// provider does not search: the engine then scans its listing, under a bound. Used by
    /// the tools bridge's `search_resources`.
    fn search(
        &self,
        ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> impl Future<Output = Result<Option<Page>, ResourceError>> + Send {
        let _ = (ctx, req);
        async { Ok(None) }
    }

    /// What this provider offers beyond listing and reading, in one description: the
    /// server declares `resources.subscribe` and `resources.listChanged` from it.
    /// Completion needs no declaration: every template can be completed (with no values,
    /// unless [`Provider::complete`] offers some), so the server declares `completions`
    /// whenever a provider serves a template.
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities::default()
    }

    /// Receives the server's change feed, once, when the server is built.
    fn attach(&self, feed: ChangeFeed) {
        let _ = feed;
    }

    /// Whether a change made now to any of its resources, subscribed yet or not, would be
    /// published (the default: yes). A provider whose watcher is still starting says no
    /// until it is in place (its [`Provider::subscribe`] waits for that); one that learns
    /// of changes only for subscribed resources (by comparing digests taken when each is
    /// subscribed) says no while it watches. A host that acknowledges a subscription
    /// before the engine subscribes it (rsrc-rmcp's `listen`) asks this first, and tells
    /// the subscriber to look again if the answer was no.
    fn hears_every_change(&self) -> bool {
        true
    }

    /// Whether its change watcher is in place (the default: yes, there is none to wait
    /// for). A provider whose watcher is still placing its watches, or taking its first
    /// look at its source, says no until it is done: a server is not ready before (the
    /// readiness `rsrc serve --admin` reports).
    fn armed(&self) -> bool {
        true
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

/// The object-safe face of [`Provider`], used by the router. It is also the one place
/// where a not-found raised without a URI gets the URI of the request
/// ([`ResourceError::at`]).
pub(crate) trait DynProvider: Send + Sync {
    fn templates(&self) -> Vec<ResourceTemplate>;
    fn capabilities(&self) -> ProviderCapabilities;
    fn attach(&self, feed: ChangeFeed);
    fn hears_every_change(&self) -> bool;
    fn armed(&self) -> bool;
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
    fn search<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: SearchRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Page>, ResourceError>>;
}

/// A provider as mounted: its calls timed, counted and traced under its mount's prefix
/// (`rsrc_provider_duration_seconds`, `rsrc_provider_errors_total`, a `provider` span).
pub(crate) struct Mounted<P> {
    pub(crate) provider: P,
    /// The mount's prefix, for spans.
    pub(crate) mount: Arc<str>,
    pub(crate) metrics: crate::observe::MountMetrics,
}

impl<P> Mounted<P> {
    pub(crate) fn new(provider: P, prefix: &str) -> Self {
        Mounted {
            provider,
            mount: prefix.into(),
            metrics: crate::observe::MountMetrics::new(prefix),
        }
    }

    /// Runs one provider call in its span, and records its time and whether it failed for
    /// a reason of the source's (time limit, unavailable, internal; not a client's
    /// mistake).
    async fn measured<T>(
        &self,
        op: ProviderOp,
        work: impl Future<Output = Result<T, ResourceError>>,
    ) -> Result<T, ResourceError> {
        use tracing::Instrument as _;
        let started = std::time::Instant::now();
        let span = crate::observe::child_span(|| {
            tracing::info_span!(
                target: "rsrc::provider",
                "provider",
                otel.name = op.as_str(),
                rsrc.mount = &*self.mount,
                rsrc.operation = op.as_str(),
            )
        });
        let out = work.instrument(span).await;
        let failed = matches!(
            &out,
            Err(ResourceError::Timeout { .. }
                | ResourceError::Unavailable { .. }
                | ResourceError::Internal { .. })
        );
        self.metrics.call(op, started.elapsed(), failed);
        out
    }
}

impl<P: Provider> DynProvider for Mounted<P> {
    fn templates(&self) -> Vec<ResourceTemplate> {
        Provider::templates(&self.provider)
    }

    fn capabilities(&self) -> ProviderCapabilities {
        Provider::capabilities(&self.provider)
    }

    fn attach(&self, feed: ChangeFeed) {
        Provider::attach(&self.provider, feed);
    }

    fn hears_every_change(&self) -> bool {
        Provider::hears_every_change(&self.provider)
    }

    fn armed(&self) -> bool {
        Provider::armed(&self.provider)
    }

    fn subscribe<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), ResourceError>> {
        Box::pin(async move {
            Provider::subscribe(&self.provider, ctx, uri)
                .await
                .map_err(|e| e.at(uri))
        })
    }

    fn list<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: ListRequest<'a>,
    ) -> BoxFuture<'a, Result<Page, ResourceError>> {
        Box::pin(async move {
            let parent = req.parent.unwrap_or_default();
            self.measured(ProviderOp::List, Provider::list(&self.provider, ctx, req))
                .await
                .map_err(|e| e.at(parent))
        })
    }

    fn metadata<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Resource, ResourceError>> {
        Box::pin(async move {
            self.measured(
                ProviderOp::Metadata,
                Provider::metadata(&self.provider, ctx, uri),
            )
            .await
            .map_err(|e| e.at(uri))
        })
    }

    fn search<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: SearchRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Page>, ResourceError>> {
        Box::pin(self.measured(
            ProviderOp::Search,
            Provider::search(&self.provider, ctx, req),
        ))
    }

    fn read<'a>(
        &'a self,
        ctx: &'a RequestContext,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<ReadOutput, ResourceError>> {
        Box::pin(async move {
            let out = self
                .measured(ProviderOp::Read, Provider::read(&self.provider, ctx, uri))
                .await
                .map_err(|e| e.at(uri))?;
            let bytes: usize = out.contents.iter().map(|c| c.body.len()).sum();
            self.metrics.read(bytes as u64);
            Ok(out)
        })
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a RequestContext,
        req: CompleteRequest<'a>,
    ) -> BoxFuture<'a, Result<Completion, ResourceError>> {
        Box::pin(self.measured(
            ProviderOp::Complete,
            Provider::complete(&self.provider, ctx, req),
        ))
    }
}
