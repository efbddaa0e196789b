//! Templated resources: an RFC 6570 template, a handler that reads the resource a URI names
//! given the matched variables, and optional completion handlers per variable.
//!
//! Invariants:
//! - A template is parsed and compiled once, when the [`TemplateResource`] is built;
//!   matching a URI is linear in its length (see `rsrc-uri-template`).
//! - Handlers only ever see variables that matched, percent-decoded exactly once; a simple
//!   `{var}` never holds a `/`.
//! - A variable that does not parse into the type a handler asks for means the resource
//!   does not exist: `db://users/{id}` with `id = "abc"` is not found, not an error.

use std::collections::BTreeMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;

use rsrc_protocol::{Resource, ResourceKind, ResourceTemplate};
use rsrc_uri_template::{Captures, ParseError, Specificity, UriTemplate, Value};

use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::provider::BoxFuture;
use crate::resource_set::Representation;

/// The variables a URI matched in a template, with typed access.
#[derive(Debug, Clone)]
pub struct Vars {
    uri: String,
    captures: Captures,
}

impl Vars {
    /// The URI that matched.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A string variable, if defined.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.captures.get_str(name)
    }

    /// A list variable (e.g. from `{/segments*}`), if defined. A one-item list is also
    /// available through [`Vars::str`].
    pub fn list(&self, name: &str) -> Option<&[String]> {
        match self.captures.get(name)? {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// A variable parsed as `T`. Absent or unparsable means the resource does not exist,
    /// so the error is not-found for this URI.
    pub fn get<T: FromStr>(&self, name: &str) -> Result<T, ResourceError> {
        self.str(name)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ResourceError::not_found(&self.uri))
    }

    /// Every matched variable.
    pub fn captures(&self) -> &Captures {
        &self.captures
    }
}

/// What a completion handler is asked.
#[derive(Debug, Clone)]
pub struct CompletionInput {
    /// What the user typed so far.
    pub value: String,
    /// Variables already chosen.
    pub context: BTreeMap<String, String>,
}

type ReadFn = dyn Fn(RequestContext, Vars) -> BoxFuture<'static, Result<Vec<Representation>, ResourceError>>
    + Send
    + Sync;
type CompleteFn =
    dyn Fn(CompletionInput) -> BoxFuture<'static, Result<Vec<String>, ResourceError>> + Send + Sync;

/// Why a templated resource could not be declared.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template is not valid RFC 6570.
    Parse(ParseError),
    /// A completion handler names a variable the template does not have.
    UnknownVariable(String),
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::Parse(e) => write!(f, "invalid URI template: {e}"),
            TemplateError::UnknownVariable(v) => write!(f, "the template has no variable {v:?}"),
        }
    }
}

impl std::error::Error for TemplateError {}

/// A resource template with its handlers; declare it on a
/// [`ResourceSet`](crate::ResourceSet) with `with_template`.
///
/// ```
/// use rsrc::{Representation, ResourceSet, TemplateResource};
/// use rsrc::protocol::ResourceTemplate;
///
/// let users = TemplateResource::new(
///     ResourceTemplate::new("db://users/{id}", "User").with_mime_type("application/json"),
///     |_ctx, vars| async move {
///         let id: u64 = vars.get("id")?;
///         Ok(vec![Representation::text(format!(r#"{{"id":{id}}}"#))])
///     },
/// )
/// .unwrap()
/// .with_completion("id", |input| async move {
///     Ok((1..=3).map(|i| i.to_string()).filter(|v| v.starts_with(&input.value)).collect())
/// })
/// .unwrap();
/// let set = ResourceSet::new().with_template(users);
/// ```
#[derive(Clone)]
pub struct TemplateResource {
    pub(crate) template: ResourceTemplate,
    pub(crate) compiled: UriTemplate,
    pub(crate) specificity: Specificity,
    read: Arc<ReadFn>,
    completers: BTreeMap<String, Arc<CompleteFn>>,
}

impl std::fmt::Debug for TemplateResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateResource")
            .field("template", &self.template.uri_template)
            .field("completes", &self.completers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl TemplateResource {
    /// Compiles `template.uri_template` and attaches the read handler.
    pub fn new<F, Fut>(template: ResourceTemplate, read: F) -> Result<Self, TemplateError>
    where
        F: Fn(RequestContext, Vars) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Representation>, ResourceError>> + Send + 'static,
    {
        let compiled = UriTemplate::parse(&template.uri_template).map_err(TemplateError::Parse)?;
        Ok(TemplateResource {
            specificity: compiled.specificity(),
            template,
            compiled,
            read: Arc::new(move |ctx, vars| Box::pin(read(ctx, vars))),
            completers: BTreeMap::new(),
        })
    }

    /// Attaches a completion handler for `variable`.
    pub fn with_completion<F, Fut>(
        mut self,
        variable: &str,
        complete: F,
    ) -> Result<Self, TemplateError>
    where
        F: Fn(CompletionInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, ResourceError>> + Send + 'static,
    {
        if !self.compiled.variables().any(|v| v == variable) {
            return Err(TemplateError::UnknownVariable(variable.to_owned()));
        }
        self.completers.insert(
            variable.to_owned(),
            Arc::new(move |input| Box::pin(complete(input))),
        );
        Ok(self)
    }

    /// Whether any variable has a completion handler.
    pub(crate) fn completes(&self) -> bool {
        !self.completers.is_empty()
    }

    /// The variables of `uri`, if it matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vars> {
        self.compiled.matches(uri).map(|captures| Vars {
            uri: uri.to_owned(),
            captures,
        })
    }

    /// The metadata of the resource a URI names: the template's, for that URI.
    pub(crate) fn describe(&self, vars: &Vars) -> Resource {
        let t = &self.template;
        Resource {
            uri: vars.uri.clone(),
            name: t.name.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            mime_type: t.mime_type.clone(),
            icons: t.icons.clone(),
            annotations: t.annotations.clone(),
            ..Resource::default()
        }
        .with_kind(ResourceKind::Document)
    }

    pub(crate) async fn read(
        &self,
        ctx: RequestContext,
        vars: Vars,
    ) -> Result<Vec<Representation>, ResourceError> {
        (self.read)(ctx, vars).await
    }

    /// Completion values for `variable`; `None` when the template has no such variable.
    pub(crate) async fn complete(
        &self,
        variable: &str,
        input: CompletionInput,
    ) -> Option<Result<Vec<String>, ResourceError>> {
        match self.completers.get(variable) {
            Some(c) => Some(c(input).await),
            None if self.compiled.variables().any(|v| v == variable) => Some(Ok(Vec::new())),
            None => None,
        }
    }
}
