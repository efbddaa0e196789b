//! [`Text`]: the UTF-8 text of a contents entry, held as shared bytes.
//!
//! Invariant: the bytes are valid UTF-8. They are checked once, with SIMD instructions
//! (`simdutf8`, some ten times faster than the standard library on text that is not all
//! ASCII), when a `Text` is made from bytes; a file read as bytes becomes text without a
//! second pass and without being copied into a `String`, and the writer escapes it over
//! its bytes. Only [`Text::as_str`] looks at the bytes as a `str` again, checking them
//! again (it cannot assume them without `unsafe`, which this project forbids).

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// UTF-8 text as shared bytes (see the module docs). Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Text(Bytes);

impl Text {
    /// The text of `bytes` if they are UTF-8, else the bytes back. Takes the buffer over
    /// without copying it.
    pub fn from_utf8(bytes: Vec<u8>) -> Result<Text, Vec<u8>> {
        if simdutf8::basic::from_utf8(&bytes).is_ok() {
            Ok(Text(Bytes::from(bytes)))
        } else {
            Err(bytes)
        }
    }

    /// The text of shared `bytes` if they are UTF-8, else the bytes back.
    pub fn from_utf8_bytes(bytes: Bytes) -> Result<Text, Bytes> {
        if simdutf8::basic::from_utf8(&bytes).is_ok() {
            Ok(Text(bytes))
        } else {
            Err(bytes)
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its bytes (UTF-8).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text as a `str`. This checks the bytes again, at SIMD speed (about a
    /// millisecond for 10 MiB): where bytes will do, use [`Text::as_bytes`].
    pub fn as_str(&self) -> &str {
        // The invariant makes the fallback unreachable.
        simdutf8::basic::from_utf8(&self.0).unwrap_or_default()
    }

    /// Its bytes, shared.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Bytes::from(s.into_bytes()))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text::from(s.as_str())
    }
}

impl From<Cow<'_, str>> for Text {
    fn from(s: Cow<'_, str>) -> Self {
        match s {
            Cow::Borrowed(s) => Text::from(s),
            Cow::Owned(s) => Text::from(s),
        }
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Self {
        Text::from(String::from(s))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Text::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_utf8_becomes_text_and_the_buffer_is_not_copied() {
        let bytes = "caf\u{e9} \u{4e16}\u{754c}".as_bytes().to_vec();
        let at = bytes.as_ptr();
        let text = Text::from_utf8(bytes).unwrap();
        assert_eq!(text.as_bytes().as_ptr(), at, "taken over, not copied");
        assert_eq!(text, "café 世界");
        for bad in [vec![0xff], vec![b'a', 0xc3], vec![0xed, 0xa0, 0x80]] {
            assert_eq!(Text::from_utf8(bad.clone()), Err(bad));
        }
    }

    #[test]
    fn text_serializes_as_a_json_string() {
        let text = Text::from("a \"b\"\n");
        let json = serde_json::to_string(&text).unwrap();
        assert_eq!(json, r#""a \"b\"\n""#);
        assert_eq!(serde_json::from_str::<Text>(&json).unwrap(), text);
    }
}
