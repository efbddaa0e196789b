//! Types shared by several messages: icons, annotations, result fields and caching hints.
//!
//! Invariant: optional members that are absent are not serialized, and unknown members
//! are ignored on input.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A free-form `_meta` object.
pub type Meta = serde_json::Map<String, serde_json::Value>;

/// An icon for display (2025-11-25 and later).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI of the image.
    pub src: String,
    /// The image's MIME type, if the server's is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`: the background the icon is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// Who a piece of content is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints for the client about how to use or display something.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// The intended audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification, e.g. `"2025-01-12T15:00:58Z"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// Whether no member is set.
    pub fn is_empty(&self) -> bool {
        self.audience.is_none() && self.priority.is_none() && self.last_modified.is_none()
    }
}

/// The kind of a 2026-07-28 result. Open: extensions may add kinds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResultType(pub Cow<'static, str>);

impl ResultType {
    /// The request completed; the result holds the final content.
    pub const COMPLETE: ResultType = ResultType(Cow::Borrowed("complete"));
    /// The request needs more input (multi round-trip requests).
    pub const INPUT_REQUIRED: ResultType = ResultType(Cow::Borrowed("input_required"));

    /// The kind as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Ok(match s.as_str() {
            "complete" => ResultType::COMPLETE,
            "input_required" => ResultType::INPUT_REQUIRED,
            _ => ResultType(Cow::Owned(s)),
        })
    }
}

/// Who may cache a result (SEP-2549).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may store and share it.
    Public,
    /// Cache only within the same authorization context.
    Private,
}

/// A caching hint: how long a result stays fresh and who may cache it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheHint {
    /// Freshness in milliseconds; 0 means immediately stale.
    pub ttl_ms: u64,
    /// Who may cache.
    pub scope: CacheScope,
}

impl CacheHint {
    /// Immediately stale, private: the safe default for data that can change at any time.
    pub const NO_STORE: CacheHint = CacheHint {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };

    /// A hint with the given freshness and scope.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_annotation_members_are_not_serialized() {
        let a = Annotations {
            priority: Some(0.5),
            ..Annotations::default()
        };
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"priority":0.5}"#);
    }

    #[test]
    fn unknown_result_types_are_kept() {
        let t: ResultType = serde_json::from_str(r#""x-task""#).unwrap();
        assert_eq!(t.as_str(), "x-task");
        let t: ResultType = serde_json::from_str(r#""complete""#).unwrap();
        assert_eq!(t, ResultType::COMPLETE);
    }
}
