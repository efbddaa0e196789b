//! Wire types of the Model Context Protocol's **resources** feature, for revisions
//! 2025-06-18, 2025-11-25 and 2026-07-28, and SEP-2093 (full metadata on reads,
//! `resources/metadata`, `resourceType` / `capabilities`, `resources/list` with `uri`).
//! SEP-2093 was rejected upstream: rsrc serves it only as its declared extension
//! `dev.rsrc/resource-metadata` ([`resources::ResourceMetadataExtension`]).
//!
//! This crate is a boundary: plain data and (de)serialization, no I/O, no async runtime.
//! The key decision is how messages are decoded: in two stages (see [`jsonrpc`]), a lenient
//! raw envelope first and a typed value second, never through an untagged union, so every
//! error names what is wrong and the request id survives whenever it can be read.
//!
//! Conventions shared by every type here:
//! - unknown members are ignored on input, never rejected;
//! - absent optional members are not serialized;
//! - a member given twice is rejected, and keys are case-sensitive;
//! - a method is a type ([`methods::Method`]) naming its params and result.

pub mod common;
pub mod completion;
pub mod content;
mod de_util;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
pub mod lifecycle;
pub mod meta;
pub mod methods;
pub mod peer;
pub mod resources;
pub mod subscriptions;
pub mod version;

pub use common::{Annotations, CacheHint, CacheScope, Icon, Meta, ResultType, Role};
pub use completion::{CompleteParams, CompleteResult, Completion, Reference};
pub use content::{EmbeddedResource, ResourceLink};
pub use jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
pub use meta::{NotificationMeta, RequestMeta, ResultMeta};
pub use peer::{Implementation, LoggingLevel, ServerCapabilities};
pub use resources::{
    Body, DIRECTORY_MIME_TYPE, Resource, ResourceCapabilities, ResourceContents, ResourceKind,
    ResourceTemplate, ResourceType, Text,
};
pub use version::{Era, ProtocolVersion};
