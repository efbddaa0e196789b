//! [`Resources`]: the builder of a declaration, holding the type's state in an `Arc` and
//! one typed closure per resource, template, completion and list function.
//!
//! Invariant: nothing is served before [`Resources::build`] checked the whole declaration
//! (every template parses, nothing is declared twice, completions and list functions name
//! a declared template); the order of the calls does not matter.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use rsrc_protocol::{Resource, ResourceTemplate};

use crate::content::Content;
use crate::context::RequestContext;
use crate::error::{DeclareError, ResourceError, TemplateError};
use crate::list_item::ListItem;
use crate::options::Options;
use crate::provider::IntoProvider;
use crate::resource_set::ResourceSet;
use crate::template::{CompletionInput, TemplateResource, Vars};

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
    /// Templates in declaration order, attached to the set at [`Resources::build`].
    templates: Vec<TemplateResource>,
    /// Completions and list functions, attached to their templates at
    /// [`Resources::build`], whatever the order they were declared in.
    attachments: Vec<Attachment>,
    statics: Vec<String>,
    errors: Vec<DeclareError>,
}

/// A completion or list function waiting for [`Resources::build`] to attach it to the
/// template it names.
struct Attachment {
    template: String,
    attach: Box<dyn FnOnce(TemplateResource) -> Result<TemplateResource, TemplateError> + Send>,
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
            attachments: Vec::new(),
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
        let variable = variable.to_owned();
        self.attach(template, move |t| {
            t.with_completion(&variable, move |input| complete(Arc::clone(&state), input))
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
        self.attach(template, move |t| {
            t.with_list(move |ctx| list(Arc::clone(&state), ctx))
        })
    }

    fn attach(
        mut self,
        template: &str,
        attach: impl FnOnce(TemplateResource) -> Result<TemplateResource, TemplateError>
        + Send
        + 'static,
    ) -> Self {
        self.attachments.push(Attachment {
            template: template.to_owned(),
            attach: Box::new(attach),
        });
        self
    }

    /// The provider, or the first thing wrong with the declaration.
    pub fn build(mut self) -> Result<ResourceSet, DeclareError> {
        for Attachment { template, attach } in std::mem::take(&mut self.attachments) {
            let Some(t) = self
                .templates
                .iter_mut()
                .find(|t| t.template.uri_template == template)
            else {
                self.errors.push(DeclareError::UnknownTemplate(template));
                continue;
            };
            match attach(t.clone()) {
                Ok(attached) => *t = attached,
                Err(error) => self.errors.push(DeclareError::Template { template, error }),
            }
        }
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
