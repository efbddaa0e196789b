//! The contents of a read: [`ResourceContents`], a whole [`Resource`] plus its [`Body`]
//! (SEP-2093's `TextResourceContents` / `BlobResourceContents`), and their hand-written
//! JSON forms.
//!
//! Invariants: an entry has exactly one payload (`text` or `blob`); a blob is held as raw
//! bytes and base64-encoded while serializing, straight into the output; the fast writer
//! ([`ResourceContents::write_json`]) writes byte for byte what `serde` writes.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::display::Base64Display;
use base64::engine::general_purpose::STANDARD;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use super::resource::Resource;
use super::resource::ResourceFields;
use super::text::Text;
use crate::de_util::{Key, set_once};

/// The payload of one contents entry.
#[derive(Clone, PartialEq, Eq)]
pub enum Body {
    /// UTF-8 text (`text`).
    Text(Text),
    /// Raw bytes, sent base64-encoded (`blob`).
    Blob(bytes::Bytes),
}

impl Body {
    /// The raw size in bytes of this representation.
    pub fn len(&self) -> usize {
        match self {
            Body::Text(t) => t.len(),
            Body::Blob(b) => b.len(),
        }
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text, if this is a text body.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Body::Text(t) => Some(t.as_str()),
            Body::Blob(_) => None,
        }
    }

    /// The bytes of either kind of body.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Body::Text(t) => t.as_bytes(),
            Body::Blob(b) => b,
        }
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Text(t) if t.len() <= 64 => f.debug_tuple("Text").field(t).finish(),
            Body::Text(t) => write!(f, "Text({} bytes)", t.len()),
            Body::Blob(b) => write!(f, "Blob({} bytes)", b.len()),
        }
    }
}

/// Serializes bytes as a base64 string, encoding into the serializer's output directly.
struct Base64<'a>(&'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&Base64Display::new(self.0, &STANDARD))
    }
}

fn decode_base64<E: de::Error>(s: &str) -> Result<bytes::Bytes, E> {
    STANDARD
        .decode(s)
        .map(bytes::Bytes::from)
        .map_err(|e| E::custom(format_args!("invalid base64 in \"blob\": {e}")))
}

/// One entry of a read result: a whole [`Resource`] plus its payload (SEP-2093's
/// `TextResourceContents` / `BlobResourceContents`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceContents {
    /// The metadata. For a document every entry has the requested URI.
    pub resource: Resource,
    /// The payload.
    pub body: Body,
}

impl ResourceContents {
    /// A text entry.
    pub fn text(resource: Resource, text: impl Into<Text>) -> Self {
        ResourceContents {
            resource,
            body: Body::Text(text.into()),
        }
    }

    /// A binary entry.
    pub fn blob(resource: Resource, bytes: impl Into<bytes::Bytes>) -> Self {
        ResourceContents {
            resource,
            body: Body::Blob(bytes.into()),
        }
    }

    /// The entry's URI.
    pub fn uri(&self) -> &str {
        &self.resource.uri
    }

    /// Removes what SEP-2093 adds to contents (every member of `Resource` but `uri`,
    /// `mimeType` and `_meta`), leaving the standard revisions' `TextResourceContents` /
    /// `BlobResourceContents`.
    pub fn strip_sep_2093(&mut self) {
        let r = &mut self.resource;
        *r = Resource {
            uri: std::mem::take(&mut r.uri),
            mime_type: r.mime_type.take(),
            meta: r.meta.take(),
            ..Resource::default()
        };
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        self.resource.serialize_fields(&mut map, true)?;
        match &self.body {
            Body::Text(t) => map.serialize_entry("text", t)?,
            Body::Blob(b) => map.serialize_entry("blob", &Base64(b))?,
        }
        map.end()
    }
}

/// The metadata of a contents entry: everything but the payload.
struct ContentsHead<'a>(&'a Resource);

impl Serialize for ContentsHead<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        self.0.serialize_fields(&mut map, true)?;
        map.end()
    }
}

/// A text left out of an encoding ([`ResourceContents::write_json_deferring`]): its
/// escaped bytes ([`push_json_escaped`]) belong at byte `at` of the output, between the
/// quotes already written.
#[derive(Clone, Debug)]
pub struct Deferred {
    /// Where the escaped text goes in the output.
    pub at: usize,
    /// The text.
    pub text: Text,
}

impl ResourceContents {
    /// Appends this entry to `out` as compact JSON — the bytes `serde_json` would write —
    /// with a blob's base64 encoded straight into the buffer, skipping the escaping pass a
    /// JSON string normally gets (base64 never needs escaping).
    pub fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        self.write_json_deferring(out, usize::MAX, &mut Vec::new())
    }

    /// [`ResourceContents::write_json`], except that a text of at least `min` bytes is
    /// left out: its quotes are written, and where its escaped bytes go is pushed to
    /// `deferred`, for a writer that escapes it a piece at a time as its output drains.
    pub fn write_json_deferring(
        &self,
        out: &mut Vec<u8>,
        min: usize,
        deferred: &mut Vec<Deferred>,
    ) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, &ContentsHead(&self.resource))?;
        // The head always holds "uri": replace its closing brace by the payload member.
        out.pop();
        out.push(b',');
        match &self.body {
            Body::Text(t) if t.len() >= min => {
                out.extend_from_slice(b"\"text\":\"");
                deferred.push(Deferred {
                    at: out.len(),
                    text: t.clone(),
                });
                out.push(b'"');
            }
            Body::Text(t) => {
                out.extend_from_slice(b"\"text\":");
                write_json_str(out, t.as_bytes());
            }
            Body::Blob(b) => {
                out.extend_from_slice(b"\"blob\":\"");
                let start = out.len();
                out.resize(start + base64::encoded_len(b.len(), true).unwrap_or(0), 0);
                let written = STANDARD
                    .encode_slice(b, &mut out[start..])
                    .map_err(serde::ser::Error::custom)?;
                out.truncate(start + written);
                out.push(b'"');
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// Appends the UTF-8 `bytes` as a JSON string literal ([`push_json_escaped`] between
/// quotes).
fn write_json_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    push_json_escaped(out, bytes);
    out.push(b'"');
}

/// Appends `bytes`, part of a UTF-8 text, escaped for the inside of a JSON string exactly
/// as `serde_json` escapes a `str`, testing eight bytes at a time and jumping straight to
/// the first byte that needs an escape: runs with nothing to escape (nearly all of a text
/// file) are copied whole. Only ASCII bytes are ever escaped, so a text may be cut
/// anywhere, even inside a character, and its pieces escaped one after the other.
pub fn push_json_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    /// The high bit of each byte of `w` below `n` (`n` ≤ 0x80). Only the lowest set bit
    /// is exact (a borrow can mark bytes above it), which is the one used.
    const fn below(w: u64, n: u8) -> u64 {
        w.wrapping_sub(ONES * n as u64) & !w & HIGH
    }
    /// The bytes of `w` (little-endian) that need an escape; the lowest is exact.
    const fn special(w: u64) -> u64 {
        below(w, 0x20) | below(w ^ (ONES * b'"' as u64), 1) | below(w ^ (ONES * b'\\' as u64), 1)
    }
    out.reserve(bytes.len());
    // `bytes[clean..i]` needs no escape and is not copied yet.
    let mut clean = 0;
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let m = special(w);
        if m == 0 {
            i += 8;
            continue;
        }
        i += (m.trailing_zeros() / 8) as usize;
        out.extend_from_slice(&bytes[clean..i]);
        escape(out, bytes[i]);
        i += 1;
        clean = i;
    }
    for (j, &b) in bytes.iter().enumerate().skip(i) {
        if ESCAPES[usize::from(b)] != 0 {
            out.extend_from_slice(&bytes[clean..j]);
            escape(out, b);
            clean = j + 1;
        }
    }
    out.extend_from_slice(&bytes[clean..]);
}

/// For each byte that needs an escape, the character after the backslash (`u` for the
/// `\u00XX` form); 0 for the bytes written as they are.
static ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[0x08] = b'b';
    t[0x0c] = b'f';
    t
};

/// Appends the escape of `b`, a byte below 0x20, `"` or `\`, as `serde_json` writes it.
/// A table rather than a `match`: which escape comes next is unpredictable, a table
/// lookup costs no mispredicted branch.
#[inline]
fn escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match ESCAPES[usize::from(b)] {
        b'u' => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
        c => out.extend_from_slice(&[b'\\', c]),
    }
}

/// A borrowed-or-owned string value.
struct StrValue<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for StrValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Key::deserialize(deserializer).map(|Key(k)| StrValue(k))
    }
}

/// Reads the members of a contents object.
fn read_contents<'de, A: MapAccess<'de>>(
    mut map: A,
    mut other: impl FnMut(&str, &mut A) -> Result<bool, A::Error>,
) -> Result<ResourceContents, A::Error> {
    let mut fields = ResourceFields::default();
    let mut text: Option<String> = None;
    let mut blob: Option<bytes::Bytes> = None;
    while let Some(Key(key)) = map.next_key()? {
        match &*key {
            "text" => set_once(&mut text, "text", &mut map)?,
            "blob" => {
                if blob.is_some() {
                    return Err(de::Error::duplicate_field("blob"));
                }
                let StrValue(s) = map.next_value()?;
                blob = Some(decode_base64(&s)?);
            }
            k => {
                if !fields.read(k, &mut map)? && !other(k, &mut map)? {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
    }
    let body = match (text, blob) {
        (Some(t), None) => Body::Text(Text::from(t)),
        (None, Some(b)) => Body::Blob(b),
        (Some(_), Some(_)) => {
            return Err(de::Error::custom(
                "contents carry both \"text\" and \"blob\"",
            ));
        }
        (None, None) => return Err(de::Error::custom("contents need \"text\" or \"blob\"")),
    };
    Ok(ResourceContents {
        resource: fields.finish(false)?,
        body,
    })
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentsVisitor;
        impl<'de> Visitor<'de> for ContentsVisitor {
            type Value = ResourceContents;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a resource contents object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ResourceContents, A::Error> {
                read_contents(map, |_, _| Ok(false))
            }
        }
        deserializer.deserialize_map(ContentsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contents_extend_resource_with_full_metadata() {
        let c = ResourceContents::text(
            Resource::new("file:///a.txt", "a.txt")
                .with_mime_type("text/plain")
                .with_size(2)
                .with_last_modified("2025-01-12T15:00:58Z")
                .document(),
            "hi",
        );
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"uri":"file:///a.txt","name":"a.txt","mimeType":"text/plain","size":2,
                   "annotations":{"lastModified":"2025-01-12T15:00:58Z"},
                   "resourceType":"document","text":"hi"})
        );
        let back: ResourceContents =
            serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn stripped_contents_are_the_standard_shape() {
        let mut meta = crate::common::Meta::new();
        meta.insert("dev.rsrc/git".into(), json!({"commit": "abc"}));
        let mut c = ResourceContents::text(
            Resource::new("file:///a.txt", "a.txt")
                .with_title("A")
                .with_mime_type("text/plain")
                .with_size(2)
                .with_last_modified("2025-01-12T15:00:58Z")
                .with_meta(meta)
                .subscribable(true)
                .document(),
            "hi",
        );
        c.strip_sep_2093();
        let standard = json!({"uri":"file:///a.txt","mimeType":"text/plain",
            "_meta":{"dev.rsrc/git":{"commit":"abc"}},"text":"hi"});
        assert_eq!(serde_json::to_value(&c).unwrap(), standard);
        let mut fast = Vec::new();
        c.write_json(&mut fast).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&fast).unwrap(),
            standard
        );
    }

    #[test]
    fn blobs_are_base64_on_the_wire_and_bytes_in_memory() {
        let c = ResourceContents::blob(Resource::new("x:b", "b"), vec![0u8, 255, 16, 1]);
        let s = serde_json::to_string(&c).unwrap();
        assert_eq!(s, r#"{"uri":"x:b","name":"b","blob":"AP8QAQ=="}"#);
        let back: ResourceContents = serde_json::from_str(&s).unwrap();
        assert_eq!(back.body.as_bytes(), &[0u8, 255, 16, 1]);
        let bad = serde_json::from_str::<ResourceContents>(r#"{"uri":"x:b","blob":"!!"}"#);
        assert!(bad.unwrap_err().to_string().contains("base64"));
    }

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_escapes_them() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain ascii text, long enough to cover several words".into(),
            "\"\\\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f} é 世界 😀".into(),
            "1234567\"".into(),
            "\u{1}2345678".into(),
        ];
        // Every single byte value below 0x80 at every position of a 17-byte string.
        for b in 0u8..0x80 {
            for pos in 0..17 {
                let mut v = vec![b'a'; 17];
                v[pos] = b;
                cases.push(String::from_utf8(v).unwrap());
            }
        }
        // Two bytes that need (or nearly need) an escape at every pair of positions, around
        // multi-byte characters: a borrow in the word test must not hide or invent one.
        let near = [
            '"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '!', '#', '[', ']', 'é', '\u{7f}',
        ];
        for a in near {
            for b in near {
                for gap in 0..9 {
                    cases.push(format!("xé{a}{}{b}yz世", "q".repeat(gap)));
                }
            }
        }
        for case in cases {
            let mut out = Vec::new();
            write_json_str(&mut out, case.as_bytes());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&case).unwrap(),
                "{case:?}"
            );
        }
    }

    #[test]
    fn contents_from_servers_before_sep_2093_need_no_name() {
        let c: ResourceContents =
            serde_json::from_str(r#"{"uri":"file:///a","mimeType":"text/plain","text":"x"}"#)
                .unwrap();
        assert_eq!(c.resource.name, "");
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"uri":"file:///a","mimeType":"text/plain","text":"x"}"#
        );
    }

    #[test]
    fn contents_need_exactly_one_payload() {
        assert!(serde_json::from_str::<ResourceContents>(r#"{"uri":"a:b"}"#).is_err());
        assert!(
            serde_json::from_str::<ResourceContents>(r#"{"uri":"a:b","text":"","blob":""}"#)
                .is_err()
        );
        assert!(
            serde_json::from_str::<ResourceContents>(r#"{"uri":"a:b","text":"x","text":"y"}"#)
                .is_err()
        );
    }
}
