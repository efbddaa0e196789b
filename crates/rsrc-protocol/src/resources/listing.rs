//! The params and results of `resources/list` (SEP-2093's `uri`, SEP-2564's `filter`) and
//! `resources/templates/list`.
//!
//! Invariant: a listing result is generic over its item type, so a server may list items
//! it serialized once (`ListEntry`) where a client reads [`Resource`]s.

use serde::{Deserialize, Serialize};

use super::resource::Resource;
use super::template::ResourceTemplate;
use crate::common::{CacheScope, ResultType};
use crate::meta::{RequestMeta, ResultMeta};

/// `resources/list` params; `uri` (SEP-2093) scopes the listing to a collection's children.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListResourcesParams {
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// List only the direct children of this collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// SEP-2564: list only the items that match (servers declaring
    /// `resources.filtering`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<ListFilter>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// SEP-2564's `filter` on `resources/list` and `resources/templates/list`: glob patterns
/// over names and URIs (a template's `uriTemplate`). The fields present are ANDed, the
/// patterns within one field ORed; an absent or empty field does not filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListFilter {
    /// Globs matched against each item's `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_patterns: Option<Vec<String>>,
    /// Globs matched against each item's `uri` (a template's `uriTemplate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri_patterns: Option<Vec<String>>,
}

impl ListFilter {
    /// The `filtering.supported` value of a server that applies both fields.
    pub const FIELDS: [&'static str; 2] = ["namePatterns", "uriPatterns"];

    /// Whether no field filters anything (absent, or present and empty).
    pub fn is_empty(&self) -> bool {
        self.name_patterns.as_ref().is_none_or(Vec::is_empty)
            && self.uri_patterns.as_ref().is_none_or(Vec::is_empty)
    }
}

/// `resources/list` (and `resources/directory/read`) result. `R` is the item type: a
/// [`Resource`], or for a server any type that serializes as one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult<R = Resource> {
    /// This page.
    pub resources: Vec<R>,
    /// Present when more pages follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28: always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// 2026-07-28: freshness hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// 2026-07-28: who may cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `resources/templates/list` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListResourceTemplatesParams {
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// SEP-2564: list only the templates that match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<ListFilter>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `resources/templates/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// This page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Present when more pages follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// 2026-07-28: always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// 2026-07-28: freshness hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// 2026-07-28: who may cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sep_2564_filter_params_decode_and_an_empty_filter_filters_nothing() {
        let p: ListResourcesParams = serde_json::from_str(
            r#"{"filter":{"namePatterns":["*.md"],"uriPatterns":["file:///docs/**"]}}"#,
        )
        .unwrap();
        let f = p.filter.unwrap();
        assert_eq!(f.name_patterns.as_deref(), Some(&["*.md".to_owned()][..]));
        assert!(!f.is_empty());
        let p: ListResourceTemplatesParams =
            serde_json::from_str(r#"{"filter":{"namePatterns":[]}}"#).unwrap();
        assert!(p.filter.unwrap().is_empty());
        assert_eq!(
            serde_json::to_value(ListResourcesParams::default()).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn absent_optional_members_are_not_serialized() {
        let r = ListResourcesResult {
            resources: vec![Resource::new("a:b", "b")],
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"resources":[{"uri":"a:b","name":"b"}]}"#
        );
    }
}
