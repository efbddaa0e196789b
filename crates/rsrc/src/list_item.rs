//! [`ListItem`]: one concrete resource of a template, as a template's list function gives
//! it: the values of the template's variables, and metadata that overrides the
//! template's for this resource.
//!
//! An item is either typed, `ListItem<I>` for an [`TemplateItem`] type `I` with one field per
//! variable (what `#[resources]` generates for each template, so that an item can only be
//! built with its template's variables), or untyped, `ListItem` (values by name, for
//! hand-written declarations, checked when the listing is made).
//!
//! Invariant: an item names its resource only through the template's variables; the URI
//! is always the template's expansion, never text the function wrote.

use std::fmt;
use std::marker::PhantomData;

use rsrc_protocol::Resource;
use rsrc_uri_template::{UriTemplate, Value};

/// The type of an item whose values are given by name ([`ListItem::new`],
/// [`ListItem::vars`]) rather than by the fields of a template's item type.
#[derive(Debug)]
pub enum Untyped {}

/// A template's item type: one field per template variable, so that an item names every
/// variable and nothing else. `#[resources]` generates one per template resource method
/// (`PageItem { page_id }` for `fn page(&self, page_id: String)` on
/// `notion://pages/{pageId}`); implement it by hand only for a hand-written declaration.
pub trait TemplateItem: Sized {
    /// The template the item expands.
    const TEMPLATE: &'static str;

    /// The variables' values by template variable name; a variable left out is
    /// undefined (an absent `{?query}`).
    fn into_values(self) -> Vec<(&'static str, Value)>;
}

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
pub struct ListItem<I = Untyped> {
    values: Values,
    resource: Resource,
    item: PhantomData<fn() -> I>,
}

#[derive(Clone, Debug, PartialEq)]
enum Values {
    /// The value of the template's only variable.
    Only(String),
    /// Values by variable name.
    Named(Vec<(String, Value)>),
}

impl<I> Clone for ListItem<I> {
    fn clone(&self) -> Self {
        ListItem {
            values: self.values.clone(),
            resource: self.resource.clone(),
            item: PhantomData,
        }
    }
}

impl<I> PartialEq for ListItem<I> {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values && self.resource == other.resource
    }
}

impl<I> fmt::Debug for ListItem<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ListItem").field(&self.values).finish()
    }
}

impl ListItem {
    /// The resource whose template's only variable is `value`.
    pub fn new(value: impl fmt::Display) -> Self {
        ListItem::with_values(Values::Only(value.to_string()))
    }

    /// The resource with these variable values (by template variable name; a value is
    /// anything [`Value`] converts from, a list for `{/segs*}` say).
    pub fn vars<N: Into<String>, V: Into<Value>>(vars: impl IntoIterator<Item = (N, V)>) -> Self {
        ListItem::with_values(Values::Named(
            vars.into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        ))
    }
}

impl<I: TemplateItem> From<I> for ListItem<I> {
    fn from(item: I) -> Self {
        ListItem::with_values(Values::Named(
            item.into_values()
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v))
                .collect(),
        ))
    }
}

impl<I> ListItem<I> {
    fn with_values(values: Values) -> Self {
        ListItem {
            values,
            resource: Resource::default(),
            item: PhantomData,
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

    /// The same item, untyped: what a template's list function hands the engine.
    pub fn erase(self) -> ListItem {
        ListItem {
            values: self.values,
            resource: self.resource,
            item: PhantomData,
        }
    }
}

impl ListItem {
    /// The URI `template` gives this item, or why it gives none.
    pub(crate) fn expand(&self, template: &UriTemplate) -> Result<String, String> {
        let uri = match &self.values {
            Values::Only(v) => {
                let mut names = template.variables();
                let (Some(name), None) = (names.next(), names.next()) else {
                    return Err(format!(
                        "ListItem::new gives one value, and the template has {} variables; \
                         name them with ListItem::vars",
                        template.variables().count()
                    ));
                };
                template.try_expand(&[(name, Value::from(v.as_str()))])
            }
            Values::Named(values) => {
                if let Some((unknown, _)) = values
                    .iter()
                    .find(|(n, _)| !template.variables().any(|v| v == n))
                {
                    return Err(format!(
                        "the template has no variable {unknown:?} (its variables: {})",
                        template.variables().collect::<Vec<_>>().join(", ")
                    ));
                }
                let vars: Vec<(&str, Value)> = values
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.clone()))
                    .collect();
                template.try_expand(vars.as_slice())
            }
        };
        let uri = uri.map_err(|e| e.to_string())?;
        if template.matches(&uri).is_none() {
            return Err(format!(
                "its expansion {uri:?} does not match the template (a value holding a character \
                 the variable cannot carry, or a variable left out)"
            ));
        }
        Ok(uri)
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        table: String,
        key: u64,
    }

    impl TemplateItem for Row {
        const TEMPLATE: &'static str = "db://{table}/{key}";
        fn into_values(self) -> Vec<(&'static str, Value)> {
            vec![
                ("table", Value::from(self.table)),
                ("key", Value::from(self.key.to_string())),
            ]
        }
    }

    #[test]
    fn a_single_value_names_the_only_variable() {
        let t = UriTemplate::parse("notion://pages/{pageId}").unwrap();
        assert_eq!(
            ListItem::new("a b").expand(&t).as_deref(),
            Ok("notion://pages/a%20b")
        );
        let two = UriTemplate::parse("db://{table}/{key}").unwrap();
        assert!(
            ListItem::new("x")
                .expand(&two)
                .unwrap_err()
                .contains("ListItem::vars")
        );
        assert_eq!(
            ListItem::vars([("table", "books"), ("key", "1")])
                .expand(&two)
                .as_deref(),
            Ok("db://books/1")
        );
    }

    #[test]
    fn a_misnamed_variable_is_named_in_the_error() {
        let two = UriTemplate::parse("db://{table}/{key}").unwrap();
        let e = ListItem::vars([("tabel", "books"), ("key", "1")])
            .expand(&two)
            .unwrap_err();
        assert!(e.contains("\"tabel\"") && e.contains("table, key"), "{e}");
    }

    #[test]
    fn a_typed_item_expands_its_fields() {
        let two = UriTemplate::parse(Row::TEMPLATE).unwrap();
        let item = ListItem::from(Row {
            table: "books".into(),
            key: 7,
        })
        .title("Dune");
        let r = item.clone().erase().describe(Resource::new("x", "Row"));
        assert_eq!(r.title.as_deref(), Some("Dune"));
        assert_eq!(item.erase().expand(&two).as_deref(), Ok("db://books/7"));
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
