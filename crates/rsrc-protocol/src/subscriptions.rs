//! 2026-07-28 `subscriptions/listen`: the filter a client asks for, the acknowledgement
//! that comes first on the stream, and the completion result that ends it gracefully.
//!
//! Invariant: the subscription id is the JSON-RPC id of the `subscriptions/listen`
//! request; every message on the stream carries it in `_meta`.

use serde::{Deserialize, Serialize};

use crate::common::ResultType;
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};

/// Which notifications a listener wants. Absent members mean "not wanted".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

/// `subscriptions/listen` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenParams {
    /// What to deliver.
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `notifications/subscriptions/acknowledged` params: the part of the filter the server
/// agreed to honour.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// What will be delivered.
    pub notifications: SubscriptionFilter,
    /// Carries the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The result that ends a subscription gracefully.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Carries the subscription id (required).
    #[serde(rename = "_meta", default)]
    pub meta: ResultMeta,
}
