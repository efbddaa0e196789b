//! The Streamable HTTP headers: their names, which member of a request's params
//! `Mcp-Name` mirrors, and the `=?base64?…?=` sentinel that carries a value a header
//! cannot hold as it is (SEP-2243).
//!
//! Invariants:
//! - Names are lowercase, as HTTP libraries compare them (`HeaderName::from_static`
//!   accepts them as they are).
//! - [`decode_value`] inverts [`encode_value`]: every string comes back exactly, whatever
//!   characters it holds; what [`encode_value`] produces is visible ASCII (and inner
//!   spaces), never starts or ends with a space, and is left as it is only when reading it
//!   back gives the same string.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// `Mcp-Session-Id`: the session of the 2025 revisions.
pub const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the revision a request speaks.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: a 2026-07-28 request's method, mirrored from its body.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`: a 2026-07-28 request's name or URI, mirrored from its body
/// ([`mirrored_member`]).
pub const NAME: &str = "mcp-name";
/// `Last-Event-ID`: where a resumed event stream continues from.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// What opens a sentinel-encoded value.
pub const SENTINEL_OPEN: &str = "=?base64?";
/// What closes a sentinel-encoded value.
pub const SENTINEL_CLOSE: &str = "?=";

/// The member of `params` that `Mcp-Name` mirrors for `method`, if it mirrors one:
/// `uri` for `resources/read`, `name` for `tools/call` and `prompts/get`.
pub fn mirrored_member(method: &str) -> Option<&'static str> {
    match method {
        "resources/read" => Some("uri"),
        "tools/call" | "prompts/get" => Some("name"),
        _ => None,
    }
}

/// `value` as a header value: as it is when it is plain visible ASCII (inner spaces
/// allowed) and would not read back as a sentinel, else `=?base64?{standard base64 of
/// its UTF-8}?=`.
pub fn encode_value(value: &str) -> Cow<'_, str> {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    if plain && !padded && sentinel_body(value).is_none() {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_OPEN}{}{SENTINEL_CLOSE}",
            STANDARD.encode(value)
        ))
    }
}

/// A header value as the text it carries: a sentinel decoded, anything else as it is.
pub fn decode_value(value: &str) -> Result<Cow<'_, str>, SentinelError> {
    let Some(encoded) = sentinel_body(value) else {
        return Ok(Cow::Borrowed(value));
    };
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|e| SentinelError::Base64(e.to_string()))?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| SentinelError::NotUtf8)
}

/// The base64 inside `=?base64?…?=`, if `value` has that form.
fn sentinel_body(value: &str) -> Option<&str> {
    value
        .strip_prefix(SENTINEL_OPEN)
        .and_then(|v| v.strip_suffix(SENTINEL_CLOSE))
}

/// Why a sentinel-encoded header value does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SentinelError {
    /// Not valid standard base64 (the decoder's message).
    Base64(String),
    /// Valid base64 whose bytes are not UTF-8.
    NotUtf8,
}

impl fmt::Display for SentinelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SentinelError::Base64(e) => write!(f, "is not valid base64: {e}"),
            SentinelError::NotUtf8 => f.write_str("does not decode to UTF-8"),
        }
    }
}

impl std::error::Error for SentinelError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_pass_as_they_are_and_others_use_the_sentinel() {
        assert_eq!(encode_value("file:///a b.txt"), "file:///a b.txt");
        assert_eq!(encode_value("file:///é"), "=?base64?ZmlsZTovLy/DqQ==?=");
        assert!(encode_value(" padded").starts_with(SENTINEL_OPEN));
        assert!(encode_value("tab\there").starts_with(SENTINEL_OPEN));
        // A value that would read back as a sentinel is itself encoded.
        assert!(encode_value("=?base64?eA==?=").starts_with("=?base64?PT9"));
    }

    #[test]
    fn every_value_round_trips_through_the_sentinel() {
        for value in [
            "",
            "file:///a b",
            "file:///é",
            " lead",
            "trail ",
            "line\nbreak",
            "=?base64?eA==?=",
            "=?base64?",
            "?=",
            "nul\0and\u{7f}del",
            "日本語 🦀",
        ] {
            let encoded = encode_value(value);
            assert!(
                encoded.bytes().all(|b| (0x20..0x7f).contains(&b)),
                "{encoded:?}"
            );
            assert_eq!(decode_value(&encoded).as_deref(), Ok(value), "{encoded:?}");
        }
    }

    #[test]
    fn a_broken_sentinel_is_refused() {
        assert!(matches!(
            decode_value("=?base64?!!!?="),
            Err(SentinelError::Base64(_))
        ));
        assert_eq!(decode_value("=?base64?/w==?="), Err(SentinelError::NotUtf8));
        assert_eq!(decode_value("=?base64?x"), Ok(Cow::Borrowed("=?base64?x")));
    }

    #[test]
    fn the_mirrored_members() {
        assert_eq!(mirrored_member("resources/read"), Some("uri"));
        assert_eq!(mirrored_member("tools/call"), Some("name"));
        assert_eq!(mirrored_member("resources/list"), None);
    }
}
