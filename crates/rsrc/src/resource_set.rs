//! [`ResourceSet`]: a provider built from declarations — static text and binary
//! resources, handler-backed resources, and collections — and templated resources
//! ([`TemplateResource`]) with typed variables, completion and list functions. It is
//! what `rsrc::declare::Resources` and the `#[resources]` macro build.
//!
//! Invariants:
//! - Resources are kept sorted by URI; listings (static resources merged with the
//!   templates' list functions) are keyset-paginated on the URI, so they are stable
//!   however the set was built; a filtered listing (SEP-2564) matches each resource as it
//!   is drawn, at most the filter's `scan` of them a page.
//! - A static collection's children are the resources whose URI is the collection's URI
//!   followed by `/` and one more path segment (`sample:///guide` →
//!   `sample:///guide/intro.md`); a handler-backed collection's are those its handler
//!   returns.
//! - Only resources declared with a cache policy are read through the read cache.
//! - Every contents entry carries the resource's full metadata, with `mimeType` and `size`
//!   of that representation.
//! - A listed resource wins over any template; among matching templates the most specific
//!   wins (see [`ResourceSet::with_template`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Bound;
use std::sync::Arc;

use rsrc_protocol::{
    CacheHint, Completion, Resource, ResourceContents, ResourceKind, ResourceTemplate,
};

use crate::cache::{CachePolicy, ReadCache};
use crate::changes::ChangeFeed;
use crate::content::{Content, ContentKind, Representation};
use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::future::BoxFuture;
use crate::keyset;
use crate::options::Options;
use crate::provider::{
    CompleteRequest, ListEntry, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
};
use crate::template::{CompletionInput, TemplateResource, Vars};

type ReadFn =
    dyn Fn(RequestContext) -> BoxFuture<'static, Result<Content, ResourceError>> + Send + Sync;

enum Source {
    Static(Vec<Representation>),
    Dynamic(Arc<ReadFn>),
    Collection,
}

struct Entry {
    resource: Resource,
    /// The resource encoded once, for listings.
    listed: ListEntry,
    source: Source,
    cache: Option<CachePolicy>,
}

/// A provider of declared resources. Build it with the `with_*` methods, then mount it.
///
/// ```
/// use rsrc::{ResourceSet, Representation};
/// use rsrc_protocol::Resource;
///
/// let set = ResourceSet::new()
///     .with_text(
///         Resource::new("config://app/settings", "Application Settings")
///             .with_mime_type("application/json"),
///         r#"{"theme":"dark"}"#,
///     )
///     .with_dynamic(Resource::new("config://app/time", "Server time"), |_ctx| async {
///         Ok(vec![Representation::text(format!("{:?}", std::time::SystemTime::now()))])
///     });
/// ```
pub struct ResourceSet {
    entries: BTreeMap<String, Entry>,
    templates: Vec<TemplateResource>,
    cache: Option<CacheHint>,
    collection_budget: usize,
    subscriptions: bool,
    /// Made when a resource is declared with a cache policy.
    read_cache: Option<ReadCache>,
}

impl Default for ResourceSet {
    fn default() -> Self {
        ResourceSet::new()
    }
}

impl std::fmt::Debug for ResourceSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceSet")
            .field("resources", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// The default byte budget for the contents returned when a collection is read.
pub const DEFAULT_COLLECTION_BUDGET: usize = 256 * 1024;

impl ResourceSet {
    /// An empty set.
    pub fn new() -> Self {
        ResourceSet {
            entries: BTreeMap::new(),
            templates: Vec::new(),
            cache: None,
            collection_budget: DEFAULT_COLLECTION_BUDGET,
            subscriptions: false,
            read_cache: None,
        }
    }

    fn insert(self, resource: Resource, source: Source) -> Self {
        let options = if matches!(source, Source::Collection) {
            Options::new().collection()
        } else {
            Options::new()
        };
        self.insert_with(resource, source, options)
    }

    fn insert_with(mut self, mut resource: Resource, source: Source, options: Options) -> Self {
        resource = resource.with_kind(options.kind());
        let cache = options.cache_policy();
        if cache.is_some() {
            self.read_cache.get_or_insert_with(ReadCache::default);
        }
        if let Source::Static(reps) = &source
            && let Some(first) = reps.first()
        {
            if resource.mime_type.is_none() {
                resource.mime_type.clone_from(&first.mime_type);
            }
            resource.size.get_or_insert(first.body.len() as u64);
        }
        self.entries.insert(
            resource.uri.clone(),
            Entry {
                listed: ListEntry::encoded(resource.clone()),
                resource,
                source,
                cache,
            },
        );
        self
    }

    /// Adds a static text document.
    #[must_use]
    pub fn with_text(self, resource: Resource, text: impl Into<rsrc_protocol::Text>) -> Self {
        self.insert(resource, Source::Static(vec![Representation::text(text)]))
    }

    /// Adds a static binary document.
    #[must_use]
    pub fn with_blob(self, resource: Resource, bytes: impl Into<bytes::Bytes>) -> Self {
        self.insert(resource, Source::Static(vec![Representation::blob(bytes)]))
    }

    /// Adds a static document with several format alternatives; the first is primary.
    #[must_use]
    pub fn with_representations(self, resource: Resource, reps: Vec<Representation>) -> Self {
        self.insert(resource, Source::Static(reps))
    }

    /// Adds a document whose content a closure produces on every read.
    #[must_use]
    pub fn with_dynamic<F, Fut>(self, resource: Resource, read: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Representation>, ResourceError>> + Send + 'static,
    {
        let read = Arc::new(read);
        self.with_handler(resource, Options::new(), move |ctx| {
            let read = Arc::clone(&read);
            async move { read(ctx).await.map(Content::document) }
        })
    }

    /// Adds a resource whose content a handler produces on every read (or once per
    /// cache lifetime, with [`Options::cache`]): a document's representations, or, for a
    /// collection ([`Options::collection`]), its children.
    #[must_use]
    pub fn with_handler<F, Fut>(self, resource: Resource, options: Options, read: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Content, ResourceError>> + Send + 'static,
    {
        let read: Arc<ReadFn> = Arc::new(move |ctx| Box::pin(read(ctx)));
        self.insert_with(resource, Source::Dynamic(read), options)
    }

    /// Adds a collection; its children are the resources under `uri + "/"`.
    #[must_use]
    pub fn with_collection(self, resource: Resource) -> Self {
        self.insert(resource, Source::Collection)
    }

    /// Adds a templated resource: URIs that match its template (and no listed resource)
    /// are read through its handler. When several templates match, the most specific wins:
    /// more literal characters, then fewer variables, then fewer multi-segment variables,
    /// then the template that sorts first.
    #[must_use]
    pub fn with_template(mut self, template: TemplateResource) -> Self {
        if template.options.cache_policy().is_some() {
            self.read_cache.get_or_insert_with(ReadCache::default);
        }
        self.templates.push(template);
        self
    }

    /// Sets the caching hint of every listing and read of this set.
    #[must_use]
    pub fn with_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// Sets how many bytes of child content a read of a collection returns at most.
    #[must_use]
    pub fn with_collection_budget(mut self, bytes: usize) -> Self {
        self.collection_budget = bytes;
        self
    }

    /// Lets clients subscribe to this set's resources. Tell subscribers of a change with
    /// [`Server::changes`](crate::Server::changes)`().updated(uri)`.
    #[must_use]
    pub fn with_subscriptions(mut self) -> Self {
        self.subscriptions = true;
        self
    }

    /// The most specific template matching `uri`.
    fn route(&self, uri: &str) -> Option<(&TemplateResource, Vars)> {
        self.templates
            .iter()
            .filter_map(|t| t.matches(uri).map(|vars| (t, vars)))
            .max_by(|(a, _), (b, _)| a.specificity.cmp(&b.specificity))
    }

    /// Entries after `after` (exclusive), in URI order.
    fn entries_after<'a>(&'a self, after: Option<&'a str>) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries
            .range::<str, _>(keyset::range(after))
            .map(|(_, e)| e)
    }

    /// Direct children of `parent` after `after` (exclusive), in URI order.
    fn children<'a>(
        &'a self,
        parent: &str,
        after: Option<&str>,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        let prefix = format!("{parent}/");
        let lower = match after {
            Some(a) if a > prefix.as_str() => Bound::Excluded(a.to_owned()),
            _ => Bound::Included(prefix.clone()),
        };
        let prefix_len = prefix.len();
        self.entries
            .range::<String, _>((lower, Bound::Unbounded))
            .map(|(_, e)| e)
            .take_while(move |e| e.resource.uri.starts_with(&prefix))
            .filter(move |e| {
                let rest = &e.resource.uri[prefix_len..];
                !rest.is_empty() && !rest.contains('/')
            })
    }

    /// The contents of a static entry or a handler's content, for `meta`.
    fn contents(&self, meta: &Resource, content: Content) -> Vec<ResourceContents> {
        match content.0 {
            ContentKind::Document(reps) => {
                reps.into_iter().map(|r| r.into_contents(meta)).collect()
            }
            ContentKind::Children(children) => {
                // Whole children only, until the budget would be exceeded.
                let mut out = Vec::new();
                let mut used = 0usize;
                for child in children {
                    let size: usize = child.representations.iter().map(|r| r.body.len()).sum();
                    if used + size > self.collection_budget {
                        break;
                    }
                    used += size;
                    let resource = child_resource(child.resource);
                    out.extend(
                        child
                            .representations
                            .into_iter()
                            .map(|r| r.into_contents(&resource)),
                    );
                }
                out
            }
        }
    }

    /// Reads through the cache when `policy` asks for it.
    async fn cached<Fut>(
        &self,
        uri: &str,
        policy: Option<CachePolicy>,
        read: impl FnOnce() -> Fut,
    ) -> Result<ReadOutput, ResourceError>
    where
        Fut: Future<Output = Result<ReadOutput, ResourceError>>,
    {
        match (policy, &self.read_cache) {
            (Some(policy), Some(cache)) => cache.read(uri, policy, read).await,
            _ => read().await,
        }
    }

    async fn read_entry(
        &self,
        ctx: &RequestContext,
        entry: &Entry,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let content = match &entry.source {
            Source::Static(reps) => Content::document(reps.clone()),
            Source::Dynamic(read) => read(ctx.clone()).await?,
            Source::Collection => {
                // Children's contents, whole entries only, until the budget would be
                // exceeded.
                let mut out = Vec::new();
                let mut used = 0usize;
                for child in self.children(&entry.resource.uri, None) {
                    if matches!(child.source, Source::Collection) {
                        continue;
                    }
                    let child_contents = Box::pin(self.read_entry(ctx, child)).await?;
                    let size: usize = child_contents.iter().map(|c| c.body.len()).sum();
                    if used + size > self.collection_budget {
                        break;
                    }
                    used += size;
                    out.extend(child_contents);
                }
                return Ok(out);
            }
        };
        Ok(self.contents(&entry.resource, content))
    }

    /// The children a collection's handler gives (an entry's or a template's), or `None`
    /// when `uri` is no such collection.
    async fn handler_children(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> Result<Option<Vec<Resource>>, ResourceError> {
        let content = match self.entries.get(uri) {
            Some(Entry {
                source: Source::Dynamic(read),
                resource,
                ..
            }) if resource.is_collection() => read(ctx.clone()).await?,
            Some(_) => return Ok(None),
            None => match self.route(uri) {
                Some((t, vars)) if t.options.is_collection() => t.read(ctx.clone(), vars).await?,
                _ => return Ok(None),
            },
        };
        Ok(Some(match content.0 {
            ContentKind::Children(children) => children
                .into_iter()
                .map(|c| child_resource(c.resource))
                .collect(),
            ContentKind::Document(_) => Vec::new(),
        }))
    }

    /// The resources of the templates' list functions after `after`, in URI order.
    async fn template_listings(
        &self,
        ctx: &RequestContext,
        after: Option<&str>,
    ) -> Result<Vec<Resource>, ResourceError> {
        let mut out = Vec::new();
        for t in &self.templates {
            out.extend(
                t.listed(ctx)
                    .await?
                    .into_iter()
                    .filter(|r| after.is_none_or(|a| r.uri.as_str() > a))
                    .filter(|r| !self.entries.contains_key(&r.uri)),
            );
        }
        out.sort_by(|a, b| a.uri.cmp(&b.uri));
        out.dedup_by(|a, b| a.uri == b.uri);
        Ok(out)
    }
}

/// A child's metadata as listed: a document unless it says otherwise.
fn child_resource(resource: Resource) -> Resource {
    if resource.kind().is_some() {
        resource
    } else {
        resource.with_kind(ResourceKind::Document)
    }
}

fn position(bytes: Option<&[u8]>) -> Result<Option<&str>, ResourceError> {
    bytes
        .map(std::str::from_utf8)
        .transpose()
        .map_err(|_| ResourceError::internal("cursor position is not UTF-8"))
}

/// A resource of a listing: a declared one, or one a function listed.
enum Item<'a> {
    Entry(&'a Entry),
    Listed(Box<Resource>),
}

impl Item<'_> {
    fn listed(resource: Resource) -> Self {
        Item::Listed(Box::new(resource))
    }

    fn resource(&self) -> &Resource {
        match self {
            Item::Entry(e) => &e.resource,
            Item::Listed(r) => r,
        }
    }

    fn into_listed(self) -> ListEntry {
        match self {
            Item::Entry(e) => e.listed.clone(),
            Item::Listed(r) => ListEntry::from(*r),
        }
    }
}

/// Declared entries and listed resources (each in URI order, no URI in both) merged in
/// URI order, drawn lazily.
fn merged<'a>(
    entries: impl Iterator<Item = &'a Entry>,
    listed: Vec<Resource>,
) -> impl Iterator<Item = Item<'a>> {
    let (mut entries, mut listed) = (entries.peekable(), listed.into_iter().peekable());
    std::iter::from_fn(move || match (entries.peek(), listed.peek()) {
        (Some(e), Some(r)) if r.uri < e.resource.uri => listed.next().map(Item::listed),
        (Some(_), _) => entries.next().map(Item::Entry),
        (None, _) => listed.next().map(Item::listed),
    })
}

/// The page of `req` (its limit, its filter) among `rest`, keyset-paginated on the URI.
fn page<'a>(
    req: ListRequest<'_>,
    rest: impl Iterator<Item = Item<'a>>,
) -> keyset::Paged<Item<'a>, Vec<u8>> {
    crate::filter::page(
        req.filter,
        rest,
        req.limit,
        |f, item| f.matches_resource(item.resource()),
        |item| item.resource().uri.clone().into_bytes(),
    )
}

impl Provider for ResourceSet {
    fn templates(&self) -> Vec<ResourceTemplate> {
        self.templates.iter().map(|t| t.template.clone()).collect()
    }

    fn fixed_uris(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities::default().with_subscribe(self.subscriptions)
    }

    fn attach(&self, feed: ChangeFeed) {
        if let Some(cache) = &self.read_cache {
            cache.follow(&feed);
        }
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let after = position(req.after)?;
        let page = match req.parent {
            None => {
                let listed = self.template_listings(ctx, after).await?;
                page(req, merged(self.entries_after(after), listed))
            }
            Some(parent) => match self.handler_children(ctx, parent).await? {
                Some(mut children) => {
                    children.sort_by(|a, b| a.uri.cmp(&b.uri));
                    let behind =
                        children.len() - keyset::after(&children, after, |r| r.uri.as_str()).len();
                    page(req, children.into_iter().skip(behind).map(Item::listed))
                }
                None => {
                    let entry = match self.entries.get(parent) {
                        Some(e) => e,
                        None if self.route(parent).is_some() => {
                            return Err(ResourceError::not_a_collection(parent));
                        }
                        None => return Err(ResourceError::not_found(parent)),
                    };
                    if !matches!(entry.source, Source::Collection) {
                        return Err(ResourceError::not_a_collection(parent));
                    }
                    page(req, self.children(parent, after).map(Item::Entry))
                }
            },
        };
        Ok(Page {
            resources: page.items.into_iter().map(Item::into_listed).collect(),
            next: page.next,
            cache: self.cache,
        })
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        if let Some(entry) = self.entries.get(uri) {
            return Ok(entry.resource.clone());
        }
        match self.route(uri) {
            Some((t, vars)) => Ok(t.describe(&vars)),
            None => Err(ResourceError::not_found(uri)),
        }
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        // Only URIs whose resource has a cache policy are ever stored, and routes never
        // change, so a hit needs no routing.
        if let Some(hit) = self.read_cache.as_ref().and_then(|c| c.hit(uri)) {
            return Ok(hit);
        }
        // A listed resource wins over any template.
        if let Some(entry) = self.entries.get(uri) {
            let read = || async move {
                Ok(ReadOutput {
                    contents: self.read_entry(ctx, entry).await?,
                    cache: self.cache,
                })
            };
            return self.cached(uri, entry.cache, read).await;
        }
        let Some((t, vars)) = self.route(uri) else {
            return Err(ResourceError::not_found(uri));
        };
        let read = || async move {
            let meta = t.describe(&vars);
            let content = t.read(ctx.clone(), vars).await?;
            Ok(ReadOutput {
                contents: self.contents(&meta, content),
                cache: self.cache,
            })
        };
        self.cached(uri, t.options.cache_policy(), read).await
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let Some(t) = self
            .templates
            .iter()
            .find(|t| t.template.uri_template == req.template)
        else {
            return Ok(Completion::empty());
        };
        let input = CompletionInput {
            value: req.value.to_owned(),
            context: req.context.clone(),
        };
        match t.complete(req.argument, input).await {
            Some(values) => Ok(Completion::from_matches(values?)),
            None => Err(ResourceError::invalid(
                "",
                format!(
                    "the template {} has no variable {:?}",
                    req.template, req.argument
                ),
            )),
        }
    }
}
