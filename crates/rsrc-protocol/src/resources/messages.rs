//! The params and results of `resources/read`, `resources/metadata`,
//! `resources/subscribe` and `resources/unsubscribe`, and the resources notifications.
//!
//! Invariant: a read result's contents are written by hand around the payloads
//! ([`ReadResourceResult::write_json`]), so a blob's base64 goes straight into the output
//! and a large text can be left out to be streamed.

use serde::{Deserialize, Serialize};

use super::contents::{Deferred, ResourceContents};
use super::resource::Resource;
use crate::common::{CacheScope, ResultType};
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};

/// Params naming one resource: `resources/metadata`, `resources/subscribe`,
/// `resources/unsubscribe`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceParams {
    /// The resource.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `resources/read` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceParams {
    /// The resource.
    pub uri: String,
    /// 2026-07-28 multi round-trip requests: answers to the server's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<serde_json::Value>,
    /// 2026-07-28 multi round-trip requests: state echoed from the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `resources/read` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// One entry per format of a document, or children of a collection.
    pub contents: Vec<ResourceContents>,
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

/// The members of a read result other than `contents`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReadTail<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: &'a Option<ResultType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: &'a Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: &'a Option<CacheScope>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: &'a Option<ResultMeta>,
}

impl ReadResourceResult {
    /// Appends this result to `out` as compact JSON, writing each entry with
    /// [`ResourceContents::write_json`].
    pub fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        self.write_json_deferring(out, usize::MAX, &mut Vec::new())
    }

    /// [`ReadResourceResult::write_json`] leaving out the texts of at least `min` bytes
    /// ([`ResourceContents::write_json_deferring`]).
    pub fn write_json_deferring(
        &self,
        out: &mut Vec<u8>,
        min: usize,
        deferred: &mut Vec<Deferred>,
    ) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"contents\":[");
        for (i, c) in self.contents.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            c.write_json_deferring(out, min, deferred)?;
        }
        out.push(b']');
        let tail = ReadTail {
            result_type: &self.result_type,
            ttl_ms: &self.ttl_ms,
            cache_scope: &self.cache_scope,
            meta: &self.meta,
        };
        let start = out.len();
        serde_json::to_writer(&mut *out, &tail)?;
        if out.len() - start == 2 {
            // `{}`: nothing more; close the result.
            out.truncate(start);
            out.push(b'}');
        } else {
            // `{"resultType":…}`: its members continue the result, its brace closes it.
            out[start] = b',';
        }
        Ok(())
    }
}

/// `resources/metadata` result (SEP-2093).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetadataResult {
    /// The resource's metadata, without content.
    pub resource: Resource,
    /// 2026-07-28: always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `notifications/resources/updated` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// The resource that changed.
    pub uri: String,
    /// Its display title (the 2025-06-18 example carries it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Notification metadata (2026-07-28: the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Params of notifications that carry nothing but `_meta`
/// (`notifications/resources/list_changed`, `notifications/initialized`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_writer_writes_what_serde_writes() {
        let c = vec![
            ResourceContents::blob(
                Resource::new("x:b", "b").with_size(3),
                vec![0u8, 255, 16, 1, 2],
            ),
            ResourceContents::text(Resource::new("x:t", ""), "a \"quoted\" \\ line\n"),
        ];
        for r in [
            ReadResourceResult {
                contents: c.clone(),
                ..ReadResourceResult::default()
            },
            ReadResourceResult {
                contents: c,
                result_type: Some(ResultType::COMPLETE),
                ttl_ms: Some(0),
                cache_scope: Some(CacheScope::Private),
                meta: Some(ResultMeta::default()),
            },
            ReadResourceResult::default(),
        ] {
            let mut fast = Vec::new();
            r.write_json(&mut fast).unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                serde_json::to_string(&r).unwrap()
            );
        }
    }
}
