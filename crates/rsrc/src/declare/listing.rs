//! What list and completion functions return: [`ListItem`]s naming a template's concrete
//! resources ([`IntoListing`]), and completion values ([`IntoCompletion`]).
//!
//! Invariant: an item names its resource only through the template's variables; the URI
//! is always the template's expansion, never text the function wrote.

use std::fmt;

use rsrc_protocol::Resource;
use rsrc_uri_template::{UriTemplate, Value};

use crate::error::ResourceError;

/// One concrete resource of a template: the values of its variables, and optionally
/// metadata that overrides the template's for this resource.
///
/// ```
/// use rsrc::declare::ListItem;
/// // For `notion://pages/{pageId}`:
/// let item = ListItem::new("abc123").title("Project Roadmap");
/// // For `db://{table}/{key}`:
/// let row = ListItem::vars([("table", "books"), ("key", "42")]);
/// # drop((item, row));
/// ```
#[derive(Clone, PartialEq)]
pub struct ListItem {
    values: Values,
    resource: Resource,
}

#[derive(Clone, Debug, PartialEq)]
enum Values {
    /// The value of the template's only variable.
    Only(String),
    /// Values by variable name.
    Named(Vec<(String, Value)>),
}

impl fmt::Debug for ListItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ListItem").field(&self.values).finish()
    }
}

impl ListItem {
    /// The resource whose template's only variable is `value`.
    pub fn new(value: impl fmt::Display) -> Self {
        ListItem {
            values: Values::Only(value.to_string()),
            resource: Resource::default(),
        }
    }

    /// The resource with these variable values (by template variable name; a value is
    /// anything [`Value`] converts from, a list for `{/segs*}` say).
    pub fn vars<N: Into<String>, V: Into<Value>>(vars: impl IntoIterator<Item = (N, V)>) -> Self {
        ListItem {
            values: Values::Named(
                vars.into_iter()
                    .map(|(n, v)| (n.into(), v.into()))
                    .collect(),
            ),
            resource: Resource::default(),
        }
    }

    /// Overrides the template's name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.resource.name = name.into();
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }

    /// Overrides the template's description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// Overrides the template's MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.resource.size = Some(size);
        self
    }

    /// Sets `annotations.lastModified` (ISO 8601).
    #[must_use]
    pub fn last_modified(mut self, at: impl Into<String>) -> Self {
        self.resource = std::mem::take(&mut self.resource).with_last_modified(at);
        self
    }

    /// The URI `template` gives this item, if its values fit the template.
    pub(crate) fn expand(&self, template: &UriTemplate) -> Option<String> {
        match &self.values {
            Values::Only(v) => {
                let mut names = template.variables();
                let (name, None) = (names.next()?, names.next()) else {
                    return None;
                };
                template.try_expand(&[(name, Value::from(v.as_str()))]).ok()
            }
            Values::Named(values) => {
                let vars: Vec<(&str, Value)> = values
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.clone()))
                    .collect();
                template.try_expand(vars.as_slice()).ok()
            }
        }
    }

    /// `base` (the template's description of the URI) with this item's overrides.
    pub(crate) fn describe(self, mut base: Resource) -> Resource {
        let r = self.resource;
        if !r.name.is_empty() {
            base.name = r.name;
        }
        base.title = r.title.or(base.title);
        base.description = r.description.or(base.description);
        base.mime_type = r.mime_type.or(base.mime_type);
        base.size = r.size.or(base.size);
        if let Some(at) = r.annotations.and_then(|a| a.last_modified) {
            base = base.with_last_modified(at);
        }
        base
    }
}

impl From<String> for ListItem {
    fn from(value: String) -> Self {
        ListItem::new(value)
    }
}

impl From<&str> for ListItem {
    fn from(value: &str) -> Self {
        ListItem::new(value)
    }
}

macro_rules! list_item_from_integers {
    ($($t:ty),+) => {$(
        impl From<$t> for ListItem {
            fn from(value: $t) -> Self {
                ListItem::new(value)
            }
        }
    )+};
}

list_item_from_integers!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

/// What a list function may return: `Vec<T>` of anything that converts into a
/// [`ListItem`] (a `String` or an integer is the value of a one-variable template), in
/// `Option` (`None`: nothing) or `Result<_, E: Into<ResourceError>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of a list function",
    note = "return `Vec<ListItem>` (or a `Vec` of strings or integers for a one-variable template), possibly in `Result<_, E: Into<ResourceError>>`"
)]
pub trait IntoListing {
    /// The items.
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError>;
}

impl<T: Into<ListItem>> IntoListing for Vec<T> {
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError> {
        Ok(self.into_iter().map(Into::into).collect())
    }
}

impl<T: IntoListing> IntoListing for Option<T> {
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError> {
        self.map_or_else(|| Ok(Vec::new()), IntoListing::into_listing)
    }
}

impl<T: IntoListing, E: Into<ResourceError>> IntoListing for Result<T, E> {
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError> {
        self.map_err(Into::into)?.into_listing()
    }
}

/// What a completion function may return: `Vec<String>` or `Vec<&str>` (at most 100 are
/// sent, with `hasMore`), in `Option` or `Result<_, E: Into<ResourceError>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of a completion function",
    note = "return `Vec<String>` or `Vec<&str>`, possibly in `Result<_, E: Into<ResourceError>>`"
)]
pub trait IntoCompletion {
    /// The values.
    fn into_completion(self) -> Result<Vec<String>, ResourceError>;
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Vec<String>, ResourceError> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<&str> {
    fn into_completion(self) -> Result<Vec<String>, ResourceError> {
        Ok(self.into_iter().map(str::to_owned).collect())
    }
}

impl<T: IntoCompletion> IntoCompletion for Option<T> {
    fn into_completion(self) -> Result<Vec<String>, ResourceError> {
        self.map_or_else(|| Ok(Vec::new()), IntoCompletion::into_completion)
    }
}

impl<T: IntoCompletion, E: Into<ResourceError>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Vec<String>, ResourceError> {
        self.map_err(Into::into)?.into_completion()
    }
}

/// The values that start with `prefix` (a completion function that ignores what the user
/// typed returns every candidate; this keeps the ones that fit).
pub fn starting_with(mut values: Vec<String>, prefix: &str) -> Vec<String> {
    values.retain(|v| v.starts_with(prefix));
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_value_names_the_only_variable() {
        let t = UriTemplate::parse("notion://pages/{pageId}").unwrap();
        assert_eq!(
            ListItem::new("a b").expand(&t).as_deref(),
            Some("notion://pages/a%20b")
        );
        let two = UriTemplate::parse("db://{t}/{k}").unwrap();
        assert_eq!(ListItem::new("x").expand(&two), None);
        assert_eq!(
            ListItem::vars([("t", "books"), ("k", "1")])
                .expand(&two)
                .as_deref(),
            Some("db://books/1")
        );
    }

    #[test]
    fn overrides_replace_the_template_metadata() {
        let base = Resource::new("x://1", "Page").with_description("any page");
        let r = ListItem::new(1).title("One").describe(base);
        assert_eq!(r.name, "Page");
        assert_eq!(r.title.as_deref(), Some("One"));
        assert_eq!(r.description.as_deref(), Some("any page"));
    }
}
