//! `rsrc`: a server framework for the resources feature of the Model
//! Context Protocol, speaking revisions 2025-06-18, 2025-11-25 and 2026-07-28 on one
//! endpoint.
//!
//! The key decision: the engine is a pure function of *one message* ([`Server::handle`])
//! returning a reply or a future, and each transport drives those futures on the task
//! that reads the connection. Decoding, routing, the provider call and encoding therefore
//! happen on one task with no thread hop and no copy of the payload beyond the output
//! buffer.
//!
//! - Declare resources as the methods of a type with [`resources`] (the macro), with
//!   [`declare::Resources`] by hand, or as data with [`ResourceSet`]; or implement
//!   [`Provider`]. Mount it on a [`Server`] by URI prefix.
//! - Serve it with [`transport::serve_stdio`], [`transport::serve_stream`] or
//!   [`transport::serve_in_memory`].
//! - Talk to any MCP server with the `rsrc-client` crate's `Client`.
//!
//! Invariants kept across the crate: every input is bounded (line length, URI length,
//! cursor size, page size, requests in flight, queued notifications); no input panics the
//! server, and a panicking provider fails only its own request.

mod budget;
pub mod bus;
mod cache;
mod changes;
mod content;
mod context;
mod cursor;
pub mod declare;
mod error;
mod extension;
pub mod filter;
mod future;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod keyring;
pub mod keyset;
mod list_item;
pub mod observe;
mod options;
mod path;
mod provider;
mod resource_set;
pub mod server;
pub mod sessions;
mod template;
pub mod transport;
mod uri;

pub use budget::{ByteBudget, Reservation};
pub use cache::{CacheLimits, CachePolicy, Cached, ReadCache};
pub use changes::{ChangeEvent, ChangeFeed};
pub use content::Representation;
pub use context::{Notification, NotificationSink, Notifier, RequestContext};
pub use error::{DeclareError, NotFound, ResourceError, TemplateError};
pub use extension::PromptCompletion;
pub use filter::Filter;
pub use future::BoxFuture;
pub use path::{InvalidPath, RelativePath};
pub use provider::{
    CompleteRequest, IntoProvider, ListEntry, ListRequest, MAX_POSITION_BYTES, Page, Provider,
    ProviderCapabilities, ReadOutput, SearchRequest,
};
pub use resource_set::{DEFAULT_COLLECTION_BUDGET, ResourceSet};
/// Declares resources as the methods of one type; see [`declare`] and
/// `docs/writing-resources.md`.
#[cfg(feature = "macros")]
pub use rsrc_macros::resources;
pub use rsrc_protocol as protocol;
pub use rsrc_uri_template as uri_template;
pub use server::{BuildError, Router, Server, ServerBuilder, ServerConfig, ToolsConfig};
pub use template::{CompletionInput, TemplateResource, Vars};
