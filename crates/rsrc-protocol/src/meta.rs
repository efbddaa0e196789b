//! `_meta` objects of requests, results and notifications.
//!
//! 2026-07-28 moves the protocol version, client identity and client capabilities into
//! every request's `_meta` under the `io.modelcontextprotocol/` prefix. [`RequestMeta`]
//! reads those keys into typed members and keeps every other key verbatim; a key given
//! twice is an error rather than a silent overwrite, because an ambiguous protocol version
//! must never be resolved by whichever copy a parser happens to keep.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::common::Meta;
use crate::de_util::{Key, insert_once, set_once};
use crate::jsonrpc::RequestId;
use crate::peer::{ClientCapabilities, Implementation, LoggingLevel};

/// `_meta` key: the protocol version of a 2026-07-28 request.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's name and version.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the client's capabilities for this request.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the minimum log level for this request.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the server's name and version, on results.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the `subscriptions/listen` request a notification belongs to.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: the progress token of a request.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";

/// A progress token: a string or an integer, like a request id.
pub type ProgressToken = RequestId;

/// The `_meta` of a request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestMeta {
    /// Opts the request into progress notifications.
    pub progress_token: Option<ProgressToken>,
    /// 2026-07-28: the protocol version of this request (required there).
    pub protocol_version: Option<String>,
    /// 2026-07-28: who is asking.
    pub client_info: Option<Implementation>,
    /// 2026-07-28: the client's capabilities for this request (required there).
    pub client_capabilities: Option<ClientCapabilities>,
    /// 2026-07-28: the minimum level of `notifications/message` for this request.
    pub log_level: Option<LoggingLevel>,
    /// Every other key, verbatim (e.g. `traceparent`).
    pub other: Meta,
}

impl RequestMeta {
    /// The `_meta` a 2026-07-28 client sends on every request.
    pub fn modern(version: &str, client_info: Implementation) -> Self {
        RequestMeta {
            protocol_version: Some(version.to_owned()),
            client_info: Some(client_info),
            client_capabilities: Some(ClientCapabilities::default()),
            ..RequestMeta::default()
        }
    }
}

impl Serialize for RequestMeta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(v) = &self.progress_token {
            map.serialize_entry(PROGRESS_TOKEN_KEY, v)?;
        }
        if let Some(v) = &self.protocol_version {
            map.serialize_entry(PROTOCOL_VERSION_KEY, v)?;
        }
        if let Some(v) = &self.client_info {
            map.serialize_entry(CLIENT_INFO_KEY, v)?;
        }
        if let Some(v) = &self.client_capabilities {
            map.serialize_entry(CLIENT_CAPABILITIES_KEY, v)?;
        }
        if let Some(v) = &self.log_level {
            map.serialize_entry(LOG_LEVEL_KEY, v)?;
        }
        for (k, v) in &self.other {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = RequestMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
                let mut m = RequestMeta::default();
                while let Some(Key(key)) = map.next_key()? {
                    match &*key {
                        PROGRESS_TOKEN_KEY => {
                            set_once(&mut m.progress_token, PROGRESS_TOKEN_KEY, &mut map)?;
                        }
                        PROTOCOL_VERSION_KEY => {
                            set_once(&mut m.protocol_version, PROTOCOL_VERSION_KEY, &mut map)?;
                        }
                        CLIENT_INFO_KEY => {
                            set_once(&mut m.client_info, CLIENT_INFO_KEY, &mut map)?;
                        }
                        CLIENT_CAPABILITIES_KEY => set_once(
                            &mut m.client_capabilities,
                            CLIENT_CAPABILITIES_KEY,
                            &mut map,
                        )?,
                        LOG_LEVEL_KEY => set_once(&mut m.log_level, LOG_LEVEL_KEY, &mut map)?,
                        _ => insert_once(&mut m.other, key, &mut map)?,
                    }
                }
                Ok(m)
            }
        }
        deserializer.deserialize_map(MetaVisitor)
    }
}

/// The `_meta` of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMeta {
    /// 2026-07-28: the server's name and version.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// 2026-07-28: on a `subscriptions/listen` result, the subscription it closes.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key, verbatim.
    #[serde(flatten)]
    pub other: Meta,
}

/// The `_meta` of a notification.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// 2026-07-28: the `subscriptions/listen` request this notification belongs to.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key, verbatim.
    #[serde(flatten)]
    pub other: Meta,
}

impl NotificationMeta {
    /// The `_meta` of a notification delivered on a `subscriptions/listen` stream.
    pub fn for_subscription(id: RequestId) -> Self {
        NotificationMeta {
            subscription_id: Some(id),
            other: Meta::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_keys_are_typed_and_others_kept() {
        let m: RequestMeta = serde_json::from_str(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":{"roots":{}},
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
                "progressToken":5,"traceparent":"00-abc"}"#,
        )
        .unwrap();
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(m.progress_token, Some(RequestId::Number(5)));
        assert_eq!(m.client_info.unwrap().name, "c");
        assert!(m.client_capabilities.unwrap().0.contains_key("roots"));
        assert_eq!(m.other["traceparent"], "00-abc");
    }

    #[test]
    fn a_duplicated_protocol_version_is_rejected() {
        let r: Result<RequestMeta, _> = serde_json::from_str(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/protocolVersion":"2025-11-25"}"#,
        );
        assert!(r.unwrap_err().to_string().contains("duplicate"));
        let r: Result<RequestMeta, _> = serde_json::from_str(r#"{"a":1,"a":2}"#);
        assert!(r.is_err());
    }

    #[test]
    fn case_folded_meta_keys_are_not_the_protocol_version() {
        let m: RequestMeta =
            serde_json::from_str(r#"{"IO.modelcontextprotocol/protocolVersion":"2026-07-28"}"#)
                .unwrap();
        assert_eq!(m.protocol_version, None);
    }

    #[test]
    fn request_meta_round_trips() {
        let mut m = RequestMeta::modern("2026-07-28", Implementation::new("c", "1"));
        m.progress_token = Some(RequestId::from("p"));
        let s = serde_json::to_string(&m).unwrap();
        let back: RequestMeta = serde_json::from_str(&s).unwrap();
        assert_eq!(back, m);
    }
}
