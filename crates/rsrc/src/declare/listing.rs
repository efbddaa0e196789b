//! What list and completion functions return: items naming a template's concrete
//! resources ([`IntoListing`], [`IntoItem`]), and completion values ([`IntoCompletion`]).
//!
//! Invariant: a list function's items are of its template's item type (or, for a
//! one-variable template, that variable's values), so the compiler checks that each item
//! names exactly the template's variables.

use crate::error::ResourceError;
#[cfg(doc)]
use crate::list_item::TemplateItem;
use crate::list_item::{ListItem, Untyped};

/// What one item of a list function may be, for the template whose item type is `I`:
/// an `I`, a [`ListItem<I>`](ListItem) (an `I` with metadata), or, for a one-variable
/// template, that variable's value (`#[resources]` implements it for `I` itself and for
/// the variable's type, next to the [`TemplateItem`] type it generates). For an untyped
/// declaration (`I` = [`Untyped`]), a [`ListItem`] or a string or integer.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an item of the template whose items are `{I}`",
    label = "build this item as `{I} {{ … }}`, one field per template variable",
    note = "`#[resources]` generates `{I}` for the template: build each item with its fields, and add metadata with `.title(…)`, `.description(…)`, …",
    note = "a one-variable template also takes the variable's values directly"
)]
pub trait IntoItem<I> {
    /// The item, untyped.
    fn into_item(self) -> ListItem;
}

impl<I> IntoItem<I> for ListItem<I> {
    fn into_item(self) -> ListItem {
        self.erase()
    }
}

impl IntoItem<Untyped> for String {
    fn into_item(self) -> ListItem {
        ListItem::new(self)
    }
}

impl IntoItem<Untyped> for &str {
    fn into_item(self) -> ListItem {
        ListItem::new(self)
    }
}

macro_rules! untyped_items_from_integers {
    ($($t:ty),+) => {$(
        impl IntoItem<Untyped> for $t {
            fn into_item(self) -> ListItem {
                ListItem::new(self)
            }
        }
    )+};
}

untyped_items_from_integers!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

/// What a list function may return for the template whose item type is `I`: a `Vec` of
/// [`IntoItem<I>`] (items of the template), in `Option` (`None`: nothing) or
/// `Result<_, E: Into<ResourceError>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of a list function whose template's items are `{I}`",
    note = "return `Vec<{I}>` (or `Vec<ListItem<{I}>>` for items with metadata), possibly in `Option` or `Result<_, E: Into<ResourceError>>`"
)]
pub trait IntoListing<I> {
    /// The items, untyped.
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError>;
}

impl<I, T: IntoItem<I>> IntoListing<I> for Vec<T> {
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError> {
        Ok(self.into_iter().map(IntoItem::into_item).collect())
    }
}

impl<I, T: IntoListing<I>> IntoListing<I> for Option<T> {
    fn into_listing(self) -> Result<Vec<ListItem>, ResourceError> {
        self.map_or_else(|| Ok(Vec::new()), IntoListing::into_listing)
    }
}

impl<I, T: IntoListing<I>, E: Into<ResourceError>> IntoListing<I> for Result<T, E> {
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
    fn untyped_listings_take_items_strings_and_integers() {
        let items = IntoListing::<Untyped>::into_listing(vec!["a", "b"]).unwrap();
        assert_eq!(items, [ListItem::new("a"), ListItem::new("b")]);
        let items = IntoListing::<Untyped>::into_listing(Some(vec![1u32])).unwrap();
        assert_eq!(items, [ListItem::new(1)]);
        let failed: Result<Vec<ListItem>, crate::NotFound> = Err(crate::NotFound);
        assert!(IntoListing::<Untyped>::into_listing(failed).is_err());
    }
}
