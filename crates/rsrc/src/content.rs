//! What a read handler produces: one format of a document ([`Representation`]), a whole
//! read ([`Content`]: a document's formats or a collection's children, [`Child`]), and the
//! conversions from handler results, [`IntoContent`] (what a read handler may return) and
//! [`IntoRepresentation`] (one format), with the wrappers that choose a MIME type
//! ([`Json`], [`Typed`]). The core (`ResourceSet`, `TemplateResource`) and the declarative
//! layer (`declare/`) both build on these types; they depend on neither.
//!
//! Invariants: a conversion never panics (a value that cannot be serialized is an internal
//! error); `None` and a missing value are not-found for the requested URI; several
//! representations are format alternatives of one document, in the order given, the
//! first primary.

use std::borrow::Cow;

use rsrc_protocol::{Body, Resource, ResourceContents};
use serde::Serialize;

use crate::error::{NotFound, ResourceError};

/// One representation of a resource: its payload and, when it differs from the
/// resource's primary type, its MIME type.
#[derive(Clone, Debug, PartialEq)]
pub struct Representation {
    /// The MIME type of this representation; the resource's own when `None`.
    pub mime_type: Option<String>,
    /// The payload.
    pub body: Body,
}

impl Representation {
    /// A text representation.
    pub fn text(text: impl Into<rsrc_protocol::Text>) -> Self {
        Representation {
            mime_type: None,
            body: Body::Text(text.into()),
        }
    }

    /// A binary representation.
    pub fn blob(bytes: impl Into<bytes::Bytes>) -> Self {
        Representation {
            mime_type: None,
            body: Body::Blob(bytes.into()),
        }
    }

    /// Sets the MIME type of this representation.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    pub(crate) fn into_contents(self, resource: &Resource) -> ResourceContents {
        let mut meta = resource.clone();
        if let Some(m) = self.mime_type {
            meta.mime_type = Some(m);
        }
        meta.size = Some(self.body.len() as u64);
        ResourceContents {
            resource: meta,
            body: self.body,
        }
    }
}

impl From<String> for Representation {
    fn from(text: String) -> Self {
        Representation::text(text)
    }
}

impl From<&str> for Representation {
    fn from(text: &str) -> Self {
        Representation::text(text)
    }
}

/// What a read produced: the representations of a document, or the children of a
/// collection.
#[derive(Debug, Clone)]
pub struct Content(pub(crate) ContentKind);

#[derive(Debug, Clone)]
pub(crate) enum ContentKind {
    Document(Vec<Representation>),
    Children(Vec<Child>),
}

impl Content {
    /// A document in one or more formats (format alternatives, the first primary).
    pub fn document(representations: Vec<Representation>) -> Self {
        Content(ContentKind::Document(representations))
    }

    /// The children of a collection.
    pub fn children(children: Vec<Child>) -> Self {
        Content(ContentKind::Children(children))
    }
}

/// One child of a collection: its metadata and, when reading the collection should
/// include it, its content.
#[derive(Debug, Clone)]
pub struct Child {
    pub(crate) resource: Resource,
    pub(crate) representations: Vec<Representation>,
    error: Option<ResourceError>,
}

impl Child {
    /// A child known by its metadata only: listed, not included when the collection is
    /// read.
    pub fn new(resource: Resource) -> Self {
        Child {
            resource,
            representations: Vec::new(),
            error: None,
        }
    }

    /// Adds a representation of the child's content (the first is primary). A
    /// representation that cannot be converted fails the read that returns this child.
    #[must_use]
    pub fn with(mut self, representation: impl IntoRepresentation) -> Self {
        match representation.into_representation() {
            Ok(r) => self.representations.push(r),
            Err(e) => self.error = self.error.or(Some(e)),
        }
        self
    }

    /// The child's metadata.
    pub fn resource(&self) -> &Resource {
        &self.resource
    }
}

/// A value served as `application/json` text.
///
/// ```
/// use rsrc::declare::{IntoContent, Json};
/// let content = Json(serde_json::json!({"id": "abc123"})).into_content();
/// assert!(content.is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// A body with a MIME type of its choosing: `Typed::new("text/csv", csv)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed<B> {
    mime_type: Cow<'static, str>,
    body: B,
}

impl<B> Typed<B> {
    /// `body` served as `mime_type`.
    pub fn new(mime_type: impl Into<Cow<'static, str>>, body: B) -> Self {
        Typed {
            mime_type: mime_type.into(),
            body,
        }
    }

    /// `body` served as `text/markdown`.
    pub fn markdown(body: B) -> Self {
        Typed::new("text/markdown", body)
    }
}

/// One format of a document: text (`String`, `&'static str`), binary (`Vec<u8>`,
/// `Bytes`), [`Json`], [`Typed`], or a [`Representation`]. Implement it for a type of your
/// own to return that type from a handler.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a representation of a resource",
    label = "not text, binary, Json<T> or Typed<B>",
    note = "a value that implements `Serialize` is served as JSON when wrapped in `Json`: `Json(value)`",
    note = "text is `String` or `&'static str`, binary `Vec<u8>` or `Bytes`; or implement `IntoRepresentation` for your type"
)]
pub trait IntoRepresentation {
    /// The representation.
    fn into_representation(self) -> Result<Representation, ResourceError>;
}

impl IntoRepresentation for Representation {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(self)
    }
}

impl IntoRepresentation for String {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::text(self))
    }
}

impl IntoRepresentation for &'static str {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::text(self))
    }
}

impl IntoRepresentation for Cow<'static, str> {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::text(self.into_owned()))
    }
}

impl IntoRepresentation for Vec<u8> {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::blob(self))
    }
}

impl IntoRepresentation for bytes::Bytes {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::blob(self))
    }
}

impl IntoRepresentation for &'static [u8] {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(Representation::blob(bytes::Bytes::from_static(self)))
    }
}

impl<T: Serialize> IntoRepresentation for Json<T> {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| ResourceError::internal(format_args!("JSON serialization failed: {e}")))?;
        Ok(Representation::text(text).with_mime_type("application/json"))
    }
}

impl<B: IntoRepresentation> IntoRepresentation for Typed<B> {
    fn into_representation(self) -> Result<Representation, ResourceError> {
        Ok(self
            .body
            .into_representation()?
            .with_mime_type(self.mime_type.into_owned()))
    }
}

/// What a read handler may return: anything [`IntoRepresentation`]; several of them as
/// format alternatives (`Vec<Representation>`, or a tuple such as `(Json<T>, Typed<String>)`);
/// a collection's children (`Vec<Child>`); `Option<T>` (`None` is not-found for the
/// requested URI); `Result<T, E>` with `E: Into<ResourceError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not resource content",
    label = "a resource handler cannot return this",
    note = "a value that implements `Serialize` is served as JSON when wrapped in `Json`: return `Json<T>` and write `Json(value)`",
    note = "otherwise return text (`String`, `&'static str`), binary (`Vec<u8>`, `Bytes`), `Typed<B>`, a tuple of those (format alternatives), `Vec<Child>` (a collection), wrapped in `Option` or `Result<_, E: Into<ResourceError>>` if it can fail; or implement `IntoRepresentation` for your type"
)]
pub trait IntoContent {
    /// The content.
    fn into_content(self) -> Result<Content, ResourceError>;
}

impl<T: IntoRepresentation> IntoContent for T {
    fn into_content(self) -> Result<Content, ResourceError> {
        Ok(Content::document(vec![self.into_representation()?]))
    }
}

impl IntoContent for Content {
    fn into_content(self) -> Result<Content, ResourceError> {
        Ok(self)
    }
}

impl IntoContent for Vec<Representation> {
    fn into_content(self) -> Result<Content, ResourceError> {
        Ok(Content::document(self))
    }
}

impl IntoContent for Vec<Child> {
    fn into_content(mut self) -> Result<Content, ResourceError> {
        if let Some(e) = self.iter_mut().find_map(|c| c.error.take()) {
            return Err(e);
        }
        Ok(Content::children(self))
    }
}

impl<T: IntoContent> IntoContent for Option<T> {
    fn into_content(self) -> Result<Content, ResourceError> {
        self.ok_or(NotFound)?.into_content()
    }
}

impl<T: IntoContent, E: Into<ResourceError>> IntoContent for Result<T, E> {
    fn into_content(self) -> Result<Content, ResourceError> {
        self.map_err(Into::into)?.into_content()
    }
}

macro_rules! alternatives {
    ($($name:ident),+) => {
        impl<$($name: IntoRepresentation),+> IntoContent for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_content(self) -> Result<Content, ResourceError> {
                let ($($name,)+) = self;
                Ok(Content::document(vec![$($name.into_representation()?),+]))
            }
        }
    };
}

alternatives!(A, B);
alternatives!(A, B, C);
alternatives!(A, B, C, D);

#[cfg(test)]
mod tests {
    use super::*;
    use rsrc_protocol::Body;

    fn document(c: impl IntoContent) -> Vec<Representation> {
        match c.into_content().unwrap().0 {
            ContentKind::Document(r) => r,
            ContentKind::Children(_) => panic!("a document was expected"),
        }
    }

    #[test]
    fn strings_are_text_and_bytes_are_blobs() {
        assert_eq!(document("hi")[0].body, Body::Text("hi".into()));
        assert_eq!(
            document(vec![1u8, 2])[0].body,
            Body::Blob(vec![1, 2].into())
        );
    }

    #[test]
    fn json_is_application_json_text() {
        let r = &document(Json(serde_json::json!({"a": 1})))[0];
        assert_eq!(r.mime_type.as_deref(), Some("application/json"));
        assert_eq!(r.body, Body::Text(r#"{"a":1}"#.into()));
    }

    #[test]
    fn tuples_are_format_alternatives_in_order() {
        let reps = document((Json(1), Typed::new("text/csv", "a\n1\n")));
        assert_eq!(reps.len(), 2);
        assert_eq!(reps[1].mime_type.as_deref(), Some("text/csv"));
    }

    #[test]
    fn none_is_not_found_without_a_uri_yet() {
        let e = None::<String>.into_content().unwrap_err();
        assert_eq!(e, ResourceError::NotFound { uri: String::new() });
    }

    #[test]
    fn errors_convert_through_into() {
        let r: Result<String, NotFound> = Err(NotFound);
        assert!(matches!(
            r.into_content(),
            Err(ResourceError::NotFound { .. })
        ));
    }
}
