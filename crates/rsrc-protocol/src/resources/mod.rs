//! Resources: the `Resource` record (`resource.rs`); its contents (`contents.rs`, `text.rs`),
//! templates (`template.rs`), the params and results of `resources/list` and
//! `resources/templates/list` (`listing.rs`), and of `resources/read`,
//! `resources/metadata`, subscribe / unsubscribe and the notifications (`messages.rs`),
//! and SEP-2093 as rsrc's declared extension (`extension.rs`).
//!
//! SEP-2093 is modelled as written: `TextResourceContents` / `BlobResourceContents` extend
//! `Resource` ([`ResourceContents`] holds a whole [`Resource`] plus a [`Body`]), `Resource`
//! carries `resourceType` and the later draft's `capabilities {list, subscribe}`. The SEP
//! was rejected upstream: a server sends these members only while it declares the
//! extension, and `strip_sep_2093` on each type leaves the standard shape.
//!
//! Invariants:
//! - `resourceType` and `capabilities.list` are two spellings of one notion; [`Resource::kind`]
//!   reads whichever is present and [`Resource::normalize_kind`] writes both.
//! - Contents (`contents.rs`) carry exactly one payload; a blob is held as raw bytes and
//!   base64-encoded straight into the output.

mod contents;
mod extension;
mod listing;
mod messages;
mod resource;
mod template;
mod text;

pub use contents::{Body, Deferred, ResourceContents, push_json_escaped};
pub use extension::{Feature, RESOURCE_METADATA_EXTENSION, ResourceMetadataExtension};
pub use listing::{
    ListFilter, ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult,
};
pub use messages::{
    EmptyNotificationParams, ReadResourceParams, ReadResourceResult, ResourceMetadataResult,
    ResourceParams, ResourceUpdatedParams,
};
pub use resource::{
    DIRECTORY_MIME_TYPE, Resource, ResourceCapabilities, ResourceKind, ResourceType,
};
pub use template::ResourceTemplate;
pub use text::Text;
