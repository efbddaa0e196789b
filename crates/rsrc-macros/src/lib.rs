//! `#[resources]`: MCP resources declared as the methods of one type, the Rust form of the
//! `#[McpResource(uri: …)]` attributes other frameworks use, re-exported by `rsrc`.
//!
//! ```ignore
//! #[rsrc::resources]
//! impl Notion {
//!     #[resource(uri = "notion://pages/{pageId}", name = "Notion Page", mime_type = "application/json", cache = "300s")]
//!     async fn page(&self, page_id: String) -> Option<Json<Page>> { … }
//!
//!     #[complete(page, pageId)]
//!     async fn page_ids(&self) -> Vec<String> { … }
//!
//!     #[list(page)]
//!     async fn pages(&self) -> Vec<PageItem> { … }   // generated: `PageItem { page_id }`
//! }
//! ```
//!
//! The key decision: **everything is decided at compile time, and the expansion only calls
//! `rsrc`'s public API.** Templates are parsed here with `rsrc-uri-template` itself; each
//! variable is bound to a parameter by name (snake case, or `#[var("…")]`), and a
//! parameter without a variable, a variable without a parameter, an unparsable template,
//! a duplicate URI or template shape, a return type that is not content, and a parameter
//! of a path type (`PathBuf`, `&Path`: a URI's `..` would reach it) is an error spanned on
//! what is wrong. Each template gets an item type with one field per variable, the only
//! thing its list function can return, so a listed item cannot name a variable the
//! template lacks. The generated `impl rsrc::IntoProvider` builds a
//! `rsrc::declare::Resources` with one typed closure per method, which anyone can write
//! by hand (`docs/writing-resources.md` shows the expansion).

mod expand;
mod model;

use proc_macro::TokenStream;

/// Declares the methods of an `impl` block marked `#[resource(…)]`, `#[complete(…)]` and
/// `#[list(…)]` as MCP resources, and implements `rsrc::IntoProvider` for the type so
/// that `ServerBuilder::mount(prefix, value)` serves them. See `docs/writing-resources.md`
/// for every argument.
#[proc_macro_attribute]
pub fn resources(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::resources(args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
