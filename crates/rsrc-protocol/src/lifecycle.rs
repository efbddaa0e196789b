//! Lifecycle and utility messages: `initialize` / `notifications/initialized` / `ping` /
//! `logging/setLevel` (2025 revisions), `server/discover` (2026-07-28), cancellation,
//! progress and log messages.
//!
//! Invariant: these are plain data; which revision may send which message is decided by
//! the server engine, not here.

use serde::{Deserialize, Serialize};

use crate::common::{CacheScope, Icon, Meta, ResultType};
use crate::jsonrpc::RequestId;
use crate::meta::{NotificationMeta, ProgressToken, RequestMeta, ResultMeta};

/// The name and version of a client or server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The project's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and version only.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Implementation::default()
        }
    }
}

/// What a client supports. Kept as an open object: this project never needs a client
/// capability to serve resources, and must not lose ones it does not know.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientCapabilities(pub Meta);

/// The `resources` server capability.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Resource-specific update notifications are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// `notifications/resources/list_changed` is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// SEP-2564: the `filter` fields that `resources/list` and `resources/templates/list`
    /// apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filtering: Option<FilteringCapability>,
}

/// SEP-2564: which fields of a list request's `filter` the server applies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilteringCapability {
    /// Field names, e.g. `namePatterns`, `uriPatterns`.
    #[serde(default)]
    pub supported: Vec<String>,
}

impl FilteringCapability {
    /// Whether the server applies the field `name`.
    pub fn supports(&self, name: &str) -> bool {
        self.supported.iter().any(|s| s == name)
    }
}

/// What a server supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Present when the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present when the server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Meta>,
    /// Present when the server sends `notifications/message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Meta>,
    /// Extensions, keyed by identifier (e.g. `io.modelcontextprotocol/skills`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Meta>,
    /// Every other capability (tools, prompts, …), verbatim.
    #[serde(flatten)]
    pub other: Meta,
}

/// Severity of a log message, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug detail.
    Debug,
    /// Information.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Action needed now.
    Alert,
    /// Unusable.
    Emergency,
}

/// `initialize` params (2025 revisions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest version the client supports.
    pub protocol_version: String,
    /// The client's capabilities.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `initialize` result (2025 revisions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the session will use.
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    pub server_info: Implementation,
    /// Guidance for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// Params of requests that carry nothing but `_meta` (`ping`, `server/discover`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// A result with no payload (`ping`, `logging/setLevel`, `resources/subscribe`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// 2026-07-28: always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `server/discover` result (2026-07-28).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every protocol version the server supports.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Freshness hint in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata, with the server's identity.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `logging/setLevel` params (2025 revisions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// The minimum level to send.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `notifications/cancelled` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// `notifications/progress` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// `notifications/message` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value.
    pub data: serde_json::Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_server_capabilities_are_kept() {
        let c: ServerCapabilities = serde_json::from_str(
            r#"{"resources":{"subscribe":true},"tools":{"listChanged":true}}"#,
        )
        .unwrap();
        assert_eq!(c.resources.as_ref().unwrap().subscribe, Some(true));
        assert!(c.other.contains_key("tools"));
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!({"resources":{"subscribe":true},"tools":{"listChanged":true}})
        );
    }

    #[test]
    fn sep_2564_filtering_capability_round_trips() {
        let c: ServerCapabilities = serde_json::from_str(
            r#"{"resources":{"filtering":{"supported":["namePatterns","uriPatterns"]}}}"#,
        )
        .unwrap();
        let filtering = c.resources.as_ref().unwrap().filtering.as_ref().unwrap();
        assert!(filtering.supports("uriPatterns"));
        assert!(!filtering.supports("tags"));
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!({"resources":{"filtering":{"supported":["namePatterns","uriPatterns"]}}})
        );
    }

    #[test]
    fn logging_levels_order_by_severity() {
        assert!(LoggingLevel::Debug < LoggingLevel::Emergency);
        let l: LoggingLevel = serde_json::from_str(r#""warning""#).unwrap();
        assert_eq!(l, LoggingLevel::Warning);
        assert!(serde_json::from_str::<LoggingLevel>(r#""Warning""#).is_err());
    }

    #[test]
    fn initialize_params_accept_a_minimal_client() {
        let p: InitializeParams =
            serde_json::from_str(r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#).unwrap();
        assert_eq!(p.protocol_version, "2025-06-18");
        assert!(serde_json::from_str::<InitializeParams>(r#"{"capabilities":{}}"#).is_err());
    }
}
