//! Templated resources: an RFC 6570 template, a handler that reads the resource a URI names
//! given the matched variables, and optional completion handlers per variable.
//!
//! Invariants:
//! - A template is parsed and compiled once, when the [`TemplateResource`] is built;
//!   matching a URI is linear in its length (see `rsrc-uri-template`).
//! - Handlers only ever see variables that matched, percent-decoded exactly once; a simple
//!   `{var}` never holds a `/`, and no value a handler gets holds NUL unless its
//!   declaration allows it ([`Options::allow_nul`]).
//! - A variable that does not parse into the type a handler asks for means the resource
//!   does not exist: `db://users/{id}` with `id = "abc"` is not found, not an error.
//! - Every resource a list function gives is named by the template: its URI is the
//!   template's expansion, and it matches the template.

use std::collections::BTreeMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;

use rsrc_protocol::{Resource, ResourceTemplate};
use rsrc_uri_template::{Captures, Specificity, UriTemplate, Value};

use crate::content::{Content, Representation};
use crate::context::RequestContext;
use crate::error::{ResourceError, TemplateError};
use crate::future::BoxFuture;
use crate::list_item::ListItem;
use crate::options::Options;
use crate::path::RelativePath;

/// The variables a URI matched in a template, with typed access.
#[derive(Debug, Clone)]
pub struct Vars {
    uri: String,
    captures: Captures,
    /// Whether values holding NUL reach the handler ([`Options::allow_nul`]).
    allow_nul: bool,
}

impl Vars {
    /// The URI that matched.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether a value may reach the handler: no NUL unless the declaration allows it.
    fn admits(&self, value: &str) -> bool {
        self.allow_nul || !value.contains('\0')
    }

    /// The variable's value, `None` when it is undefined or holds a NUL that the
    /// declaration does not allow.
    fn value(&self, name: &str) -> Option<&Value> {
        let v = self.captures.get(name)?;
        let admitted = match v {
            Value::String(s) => self.admits(s),
            Value::List(items) => items.iter().all(|s| self.admits(s)),
            Value::Assoc(pairs) => pairs.iter().all(|(k, v)| self.admits(k) && self.admits(v)),
        };
        admitted.then_some(v)
    }

    /// A string variable, if defined (a one-item list too). A value holding NUL is
    /// undefined unless the declaration allows NUL.
    pub fn str(&self, name: &str) -> Option<&str> {
        match self.value(name)? {
            Value::String(s) => Some(s),
            Value::List(items) if items.len() == 1 => Some(&items[0]),
            _ => None,
        }
    }

    /// A list variable (e.g. from `{/segments*}`), if defined. A one-item list is also
    /// available through [`Vars::str`].
    pub fn list(&self, name: &str) -> Option<&[String]> {
        match self.value(name)? {
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

    /// An optional variable (a query variable such as `{?q}`) parsed as `T`: `None` when
    /// the URI leaves it out; present but unparsable means the resource does not exist.
    pub fn get_optional<T: FromStr>(&self, name: &str) -> Result<Option<T>, ResourceError> {
        if self.captures.get(name).is_none() {
            return Ok(None);
        }
        self.str(name)
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| ResourceError::not_found(&self.uri))
    }

    /// A multi-segment variable as a list of `T`: the items of `{/segs*}`, or the
    /// `/`-separated segments of `{+path}`; empty when the URI leaves it out. An empty,
    /// `.` or `..` segment, one holding `/` (an item of `{/segs*}` written with `%2F`) or
    /// NUL, or one that does not parse, means the resource does not exist, so the segments
    /// are always safe to join into a relative path.
    pub fn get_segments<T: FromStr>(&self, name: &str) -> Result<Vec<T>, ResourceError> {
        let not_found = || ResourceError::not_found(&self.uri);
        let segments = self.path_segments(name).ok_or_else(not_found)?;
        segments
            .into_iter()
            .map(|s| s.parse().map_err(|_| not_found()))
            .collect()
    }

    /// A multi-segment variable as a [`RelativePath`] (the empty path when the URI leaves
    /// it out); the same segments as [`Vars::get_segments`] refuses are not found.
    pub fn path(&self, name: &str) -> Result<RelativePath, ResourceError> {
        self.path_segments(name)
            .and_then(|segments| RelativePath::from_segments(segments).ok())
            .ok_or_else(|| ResourceError::not_found(&self.uri))
    }

    /// The checked segments of a multi-segment variable; `None` when one is refused.
    fn path_segments(&self, name: &str) -> Option<Vec<&str>> {
        if self.captures.get(name).is_none() {
            return Some(Vec::new());
        }
        let segments: Vec<&str> = match self.value(name)? {
            Value::String(s) => s.split('/').collect(),
            Value::List(items) => items.iter().map(String::as_str).collect(),
            Value::Assoc(_) => return None,
        };
        RelativePath::from_segments(&segments).ok()?;
        Some(segments)
    }

    /// Every matched variable, unchecked: values holding NUL included.
    pub fn captures(&self) -> &Captures {
        &self.captures
    }
}

/// What a completion handler is asked.
#[derive(Debug, Clone)]
pub struct CompletionInput {
    /// What the user typed so far.
    pub value: String,
    /// Variables already chosen (the request's `context.arguments`).
    pub context: BTreeMap<String, String>,
}

impl CompletionInput {
    /// An already chosen variable parsed as `T`; `None` when it was not given or does not
    /// parse.
    pub fn arg<T: FromStr>(&self, name: &str) -> Option<T> {
        self.context.get(name).and_then(|v| v.parse().ok())
    }
}

type ReadFn = dyn Fn(RequestContext, Vars) -> BoxFuture<'static, Result<Content, ResourceError>>
    + Send
    + Sync;
type CompleteFn =
    dyn Fn(CompletionInput) -> BoxFuture<'static, Result<Vec<String>, ResourceError>> + Send + Sync;
type ListFn = dyn Fn(RequestContext) -> BoxFuture<'static, Result<Vec<ListItem>, ResourceError>>
    + Send
    + Sync;

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
    list: Option<Arc<ListFn>>,
    pub(crate) options: Options,
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
    /// Compiles `template.uri_template` and attaches the read handler, whose
    /// representations are format alternatives of one document.
    pub fn new<F, Fut>(template: ResourceTemplate, read: F) -> Result<Self, TemplateError>
    where
        F: Fn(RequestContext, Vars) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Representation>, ResourceError>> + Send + 'static,
    {
        let read = Arc::new(read);
        Self::with_handler(template, move |ctx, vars| {
            let read = Arc::clone(&read);
            async move { read(ctx, vars).await.map(Content::document) }
        })
    }

    /// Compiles `template.uri_template` and attaches a read handler returning any
    /// [`Content`]: a document's representations, or a collection's children.
    pub fn with_handler<F, Fut>(template: ResourceTemplate, read: F) -> Result<Self, TemplateError>
    where
        F: Fn(RequestContext, Vars) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Content, ResourceError>> + Send + 'static,
    {
        let compiled = UriTemplate::parse(&template.uri_template).map_err(TemplateError::Parse)?;
        Ok(TemplateResource {
            specificity: compiled.specificity(),
            template,
            compiled,
            read: Arc::new(move |ctx, vars| Box::pin(read(ctx, vars))),
            completers: BTreeMap::new(),
            list: None,
            options: Options::new(),
        })
    }

    /// Sets the kind (document or collection) and the cache policy of the resources the
    /// template names.
    #[must_use]
    pub fn with_options(mut self, options: Options) -> Self {
        if options.is_collection() {
            let caps = self
                .template
                .capabilities
                .get_or_insert_with(Default::default);
            caps.list = Some(true);
        }
        self.options = options;
        self
    }

    /// Attaches a list function: the template's concrete resources, which then also appear
    /// in the provider's `resources/list` (each [`ListItem`] gives the template's
    /// variables, and may override the name, title and more).
    pub fn with_list<F, Fut>(mut self, list: F) -> Result<Self, TemplateError>
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ListItem>, ResourceError>> + Send + 'static,
    {
        if self.list.is_some() {
            return Err(TemplateError::SecondList);
        }
        self.list = Some(Arc::new(move |ctx| Box::pin(list(ctx))));
        Ok(self)
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

    /// The variables of `uri`, if it matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vars> {
        self.compiled.matches(uri).map(|captures| Vars {
            uri: uri.to_owned(),
            captures,
            allow_nul: self.options.allows_nul(),
        })
    }

    /// The metadata of the resource a URI names: the template's, for that URI.
    pub(crate) fn describe(&self, vars: &Vars) -> Resource {
        self.describe_uri(vars.uri.clone())
    }

    fn describe_uri(&self, uri: String) -> Resource {
        let t = &self.template;
        Resource {
            uri,
            name: t.name.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            mime_type: t.mime_type.clone(),
            icons: t.icons.clone(),
            annotations: t.annotations.clone(),
            ..Resource::default()
        }
        .with_kind(self.options.kind())
    }

    pub(crate) async fn read(
        &self,
        ctx: RequestContext,
        vars: Vars,
    ) -> Result<Content, ResourceError> {
        (self.read)(ctx, vars).await
    }

    /// The concrete resources of the list function (none without one), each checked to
    /// be named by the template.
    pub(crate) async fn listed(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<Resource>, ResourceError> {
        let Some(list) = &self.list else {
            return Ok(Vec::new());
        };
        let items = list(ctx.clone()).await?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.expand(&self.compiled) {
                Ok(uri) => out.push(item.describe(self.describe_uri(uri))),
                // A programming error in the list function: the listing goes on without
                // the item, and the server's log says which and why.
                Err(why) => tracing::error!(
                    template = %self.template.uri_template,
                    ?item,
                    "the list function gave an item the template cannot name, left out of the listing: {why}"
                ),
            }
        }
        Ok(out)
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
