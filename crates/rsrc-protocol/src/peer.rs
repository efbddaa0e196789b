//! Who the two ends of a connection are and what they support: [`Implementation`], the
//! client's and the server's capabilities, and the [`LoggingLevel`] a client asks for.
//! `initialize` and `server/discover` (lifecycle) carry them, and so does each 2026-07-28
//! request's `_meta`.
//!
//! Invariant: capabilities are open: members this crate does not model are kept verbatim,
//! never dropped.

use serde::{Deserialize, Serialize};

use crate::common::{Icon, Meta};

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
}
