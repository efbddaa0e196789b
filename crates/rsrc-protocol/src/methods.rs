//! Methods as types: each request method names its params and result types, each
//! notification its params, so that the router decodes params once, into the right type.
//!
//! Invariant: [`Method::NAME`] is the exact wire name; no two markers share a name.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::completion::{CompleteParams, CompleteResult};
use crate::lifecycle::{
    CancelledParams, DiscoverResult, EmptyParams, EmptyResult, InitializeParams, InitializeResult,
    LoggingMessageParams, ProgressParams, SetLevelParams,
};
use crate::resources::{
    EmptyNotificationParams, ListResourceTemplatesParams, ListResourceTemplatesResult,
    ListResourcesParams, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    ResourceMetadataResult, ResourceParams, ResourceUpdatedParams,
};
use crate::subscriptions::{
    SubscriptionsAcknowledgedParams, SubscriptionsListenParams, SubscriptionsListenResult,
};

/// A request method.
pub trait Method {
    /// The wire name.
    const NAME: &'static str;
    /// Its params.
    type Params: Serialize + DeserializeOwned;
    /// Its result.
    type Result: Serialize + DeserializeOwned;
}

/// A notification method.
pub trait NotificationMethod {
    /// The wire name.
    const NAME: &'static str;
    /// Its params.
    type Params: Serialize + DeserializeOwned;
}

macro_rules! methods {
    ($($(#[$doc:meta])* $ty:ident = $name:literal: $params:ty => $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $ty {}
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

macro_rules! notifications {
    ($($(#[$doc:meta])* $ty:ident = $name:literal: $params:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $ty {}
        impl NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    )*};
}

methods! {
    /// `initialize` (2025 revisions).
    Initialize = "initialize": InitializeParams => InitializeResult;
    /// `ping` (2025 revisions).
    Ping = "ping": EmptyParams => EmptyResult;
    /// `logging/setLevel` (2025 revisions).
    SetLevel = "logging/setLevel": SetLevelParams => EmptyResult;
    /// `server/discover` (2026-07-28).
    Discover = "server/discover": EmptyParams => DiscoverResult;
    /// `resources/list`, optionally scoped to a collection (SEP-2093, rsrc's extension).
    ListResources = "resources/list": ListResourcesParams => ListResourcesResult;
    /// `resources/read`.
    ReadResource = "resources/read": ReadResourceParams => ReadResourceResult;
    /// `resources/metadata` (SEP-2093, rsrc's extension `dev.rsrc/resource-metadata`).
    ResourceMetadata = "resources/metadata": ResourceParams => ResourceMetadataResult;
    /// `resources/templates/list`.
    ListResourceTemplates = "resources/templates/list": ListResourceTemplatesParams => ListResourceTemplatesResult;
    /// `resources/directory/read` (skills extension, SEP-2640): the children of a directory.
    DirectoryRead = "resources/directory/read": ListResourcesParams => ListResourcesResult;
    /// `resources/subscribe` (2025 revisions).
    Subscribe = "resources/subscribe": ResourceParams => EmptyResult;
    /// `resources/unsubscribe` (2025 revisions).
    Unsubscribe = "resources/unsubscribe": ResourceParams => EmptyResult;
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen = "subscriptions/listen": SubscriptionsListenParams => SubscriptionsListenResult;
    /// `completion/complete`.
    Complete = "completion/complete": CompleteParams => CompleteResult;
}

notifications! {
    /// `notifications/initialized` (2025 revisions).
    Initialized = "notifications/initialized": EmptyNotificationParams;
    /// `notifications/cancelled`.
    Cancelled = "notifications/cancelled": CancelledParams;
    /// `notifications/progress`.
    Progress = "notifications/progress": ProgressParams;
    /// `notifications/message`.
    LoggingMessage = "notifications/message": LoggingMessageParams;
    /// `notifications/resources/updated`.
    ResourceUpdated = "notifications/resources/updated": ResourceUpdatedParams;
    /// `notifications/resources/list_changed`.
    ResourceListChanged = "notifications/resources/list_changed": EmptyNotificationParams;
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged": SubscriptionsAcknowledgedParams;
}
