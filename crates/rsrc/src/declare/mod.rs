//! The declarative layer: resources declared as the methods of one type, the way the
//! `#[resources]` macro writes them, or by hand with [`Resources`].
//!
//! Everything the macro generates is a call to this module's public API: a
//! [`Resources`] builder holding the type's state in an `Arc`, one typed closure per
//! resource, completion and list function, and the conversion traits [`IntoContent`],
//! [`IntoCompletion`] and [`IntoListing`]. `docs/writing-resources.md` shows an expansion.
//!
//! Invariants:
//! - A declaration is checked when it is built ([`Resources::build`]): every template
//!   parses, no URI or template is declared twice, and completions and list functions
//!   name a declared template (and, for completion, one of its variables). The macro makes
//!   the same checks at compile time.
//! - Handlers get `Arc<S>`: state is shared, never cloned.

mod content;
mod listing;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rsrc_protocol::{CacheScope, Resource, ResourceKind, ResourceTemplate};

pub(crate) use content::ContentKind;
pub use content::{Child, Content, IntoContent, IntoRepresentation, Json, Typed};
pub use listing::{IntoCompletion, IntoListing, ListItem, starting_with};

use crate::cache::CachePolicy;
use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::provider::IntoProvider;
use crate::resource_set::ResourceSet;
use crate::template::{CompletionInput, TemplateError, TemplateResource, Vars};

/// How a declared resource is served: as a document or a collection, and cached or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    collection: bool,
    cache: Option<CachePolicy>,
}

impl Options {
    /// A document, not cached.
    pub fn new() -> Self {
        Options::default()
    }

    /// The resource is a collection: reading it returns its children's contents, and
    /// `resources/list` with its URI lists them (its handler returns `Vec<Child>`).
    #[must_use]
    pub fn collection(mut self) -> Self {
        self.collection = true;
        self
    }

    /// Reads are cached for `ttl` per URI (see [`ReadCache`](crate::ReadCache)), privately
    /// unless [`Options::cache_scope`] says otherwise.
    #[must_use]
    pub fn cache(mut self, ttl: Duration) -> Self {
        let scope = self.cache.map_or(CacheScope::Private, |c| c.scope);
        self.cache = Some(CachePolicy::new(ttl).with_scope(scope));
        self
    }

    /// The `cacheScope` clients are told for cached reads.
    #[must_use]
    pub fn cache_scope(mut self, scope: CacheScope) -> Self {
        if let Some(c) = &mut self.cache {
            c.scope = scope;
        }
        self
    }

    pub(crate) fn is_collection(self) -> bool {
        self.collection
    }

    pub(crate) fn kind(self) -> ResourceKind {
        if self.collection {
            ResourceKind::Collection
        } else {
            ResourceKind::Document
        }
    }

    pub(crate) fn cache_policy(self) -> Option<CachePolicy> {
        self.cache
    }
}

/// Why a declaration is invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclareError {
    /// A template is invalid, or a completion names a variable it does not have.
    Template {
        /// The template, as declared.
        template: String,
        /// What is wrong.
        error: TemplateError,
    },
    /// Two resources have the same URI, or two templates the same text.
    Duplicate(String),
    /// A completion or list function names a template that was not declared.
    UnknownTemplate(String),
}

impl fmt::Display for DeclareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclareError::Template { template, error } => write!(f, "{template}: {error}"),
            DeclareError::Duplicate(uri) => write!(f, "{uri} is declared twice"),
            DeclareError::UnknownTemplate(t) => {
                write!(f, "no resource is declared with the template {t}")
            }
        }
    }
}

impl std::error::Error for DeclareError {}

/// Builds a [`ResourceSet`] from typed handlers that share one state, `S`: what the
/// `#[resources]` macro expands to, and the way to write the same by hand.
///
/// ```
/// use rsrc::declare::{IntoContent, Json, Options, Resources};
/// use rsrc::protocol::{Resource, ResourceTemplate};
/// use rsrc::NotFound;
///
/// struct Pages { titles: Vec<(String, String)> }
///
/// let set = Resources::new(Pages { titles: vec![("abc123".into(), "Roadmap".into())] })
///     .resource(Resource::new("notion://workspace/info", "Workspace"), Options::new(), |_pages, _ctx| async {
///         Json(serde_json::json!({"workspace": "Acme"})).into_content()
///     })
///     .template(
///         ResourceTemplate::new("notion://pages/{pageId}", "Page"),
///         Options::new(),
///         |pages, _ctx, vars| async move {
///             let id: String = vars.get("pageId")?;
///             let title = pages.titles.iter().find(|(i, _)| *i == id).map(|(_, t)| t.clone());
///             title.ok_or(NotFound)?.into_content()
///         },
///     )
///     .complete("notion://pages/{pageId}", "pageId", |pages, input| async move {
///         Ok(pages.titles.iter().map(|(id, _)| id.clone()).filter(|id| id.starts_with(&input.value)).collect())
///     })
///     .build()
///     .unwrap();
/// # drop(set);
/// ```
pub struct Resources<S> {
    state: Arc<S>,
    set: ResourceSet,
    /// Templates in declaration order, attached to the set at [`Resources::build`] so
    /// that completions and list functions can still be added to them.
    templates: Vec<TemplateResource>,
    statics: Vec<String>,
    errors: Vec<DeclareError>,
}

impl<S> fmt::Debug for Resources<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resources")
            .field("resources", &self.statics)
            .field("templates", &self.templates.len())
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> Resources<S> {
    /// A declaration whose handlers share `state`.
    pub fn new(state: S) -> Self {
        Resources::shared(Arc::new(state))
    }

    /// A declaration whose handlers share `state`, which the caller keeps too.
    pub fn shared(state: Arc<S>) -> Self {
        Resources {
            state,
            set: ResourceSet::new(),
            templates: Vec::new(),
            statics: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Declares a resource with a fixed URI, read by `read`.
    #[must_use]
    pub fn resource<F, Fut>(mut self, resource: Resource, options: Options, read: F) -> Self
    where
        F: Fn(Arc<S>, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Content, ResourceError>> + Send + 'static,
    {
        if self.statics.contains(&resource.uri) {
            self.errors.push(DeclareError::Duplicate(resource.uri));
            return self;
        }
        self.statics.push(resource.uri.clone());
        let state = Arc::clone(&self.state);
        self.set = self
            .set
            .with_handler(resource, options, move |ctx| read(Arc::clone(&state), ctx));
        self
    }

    /// Declares a templated resource, read by `read` with the variables the URI matched.
    #[must_use]
    pub fn template<F, Fut>(mut self, template: ResourceTemplate, options: Options, read: F) -> Self
    where
        F: Fn(Arc<S>, RequestContext, Vars) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Content, ResourceError>> + Send + 'static,
    {
        let text = template.uri_template.clone();
        if self
            .templates
            .iter()
            .any(|t| t.template.uri_template == text)
        {
            self.errors.push(DeclareError::Duplicate(text));
            return self;
        }
        let state = Arc::clone(&self.state);
        match TemplateResource::with_handler(template, move |ctx, vars| {
            read(Arc::clone(&state), ctx, vars)
        }) {
            Ok(t) => self.templates.push(t.with_options(options)),
            Err(error) => self.errors.push(DeclareError::Template {
                template: text,
                error,
            }),
        }
        self
    }

    /// Completes `variable` of the template declared as `template`; the function gets
    /// what the user typed and the variables already chosen.
    #[must_use]
    pub fn complete<F, Fut>(self, template: &str, variable: &str, complete: F) -> Self
    where
        F: Fn(Arc<S>, CompletionInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, ResourceError>> + Send + 'static,
    {
        let state = Arc::clone(&self.state);
        self.modify(template, |t| {
            t.with_completion(variable, move |input| complete(Arc::clone(&state), input))
        })
    }

    /// Enumerates the concrete resources of the template declared as `template`, so that
    /// they appear in `resources/list`.
    #[must_use]
    pub fn list<F, Fut>(self, template: &str, list: F) -> Self
    where
        F: Fn(Arc<S>, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ListItem>, ResourceError>> + Send + 'static,
    {
        let state = Arc::clone(&self.state);
        self.modify(template, |t| {
            t.with_list(move |ctx| list(Arc::clone(&state), ctx))
        })
    }

    fn modify(
        mut self,
        template: &str,
        f: impl FnOnce(TemplateResource) -> Result<TemplateResource, TemplateError>,
    ) -> Self {
        let Some(t) = self
            .templates
            .iter_mut()
            .find(|t| t.template.uri_template == template)
        else {
            self.errors
                .push(DeclareError::UnknownTemplate(template.to_owned()));
            return self;
        };
        match f(t.clone()) {
            Ok(modified) => *t = modified,
            Err(error) => self.errors.push(DeclareError::Template {
                template: template.to_owned(),
                error,
            }),
        }
        self
    }

    /// The provider, or the first thing wrong with the declaration.
    pub fn build(self) -> Result<ResourceSet, DeclareError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        Ok(self
            .templates
            .into_iter()
            .fold(self.set, ResourceSet::with_template))
    }
}

/// A declaration mounts as the provider it builds; an invalid one fails
/// [`ServerBuilder::build`](crate::ServerBuilder::build).
impl<S: Send + Sync + 'static> IntoProvider for Resources<S> {
    type Provider = ResourceSet;

    fn into_provider(self) -> Result<ResourceSet, DeclareError> {
        self.build()
    }
}
