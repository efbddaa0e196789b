//! The declarative layer: resources declared as the methods of one type, the way the
//! `#[resources]` macro writes them, or by hand with [`Resources`].
//!
//! Everything the macro generates is a call to this module's public API: a
//! [`Resources`] builder holding the type's state in an `Arc`, one typed closure per
//! resource, completion and list function, and the conversion traits [`IntoContent`],
//! [`IntoCompletion`] and [`IntoListing`]. `docs/writing-resources.md` shows an expansion.
//! The types a declaration shares with the core (contents, options, list items,
//! declaration errors) are the core's, re-exported here; the core never imports this
//! module.
//!
//! Invariants:
//! - A declaration is checked when it is built ([`Resources::build`]): every template
//!   parses, no URI or template is declared twice, and completions and list functions
//!   name a declared template (and, for completion, one of its variables). The macro makes
//!   the same checks at compile time.
//! - The order of the declarations does not matter: completions and list functions are
//!   attached to their templates when the declaration is built.
//! - Handlers get `Arc<S>`: state is shared, never cloned.

//!
//! This file only declares and re-exports: the builder is `resources.rs`, the conversions
//! of what list and completion functions return are `listing.rs`.

mod listing;
mod resources;

pub use crate::content::{Child, Content, IntoContent, IntoRepresentation, Json, Typed};
pub use crate::error::DeclareError;
pub use crate::list_item::{ListItem, TemplateItem, Untyped};
pub use crate::options::Options;
pub use crate::path::RelativePath;
pub use listing::{IntoCompletion, IntoItem, IntoListing, starting_with};
pub use resources::Resources;
