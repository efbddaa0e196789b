//! Request ids: a string or an `i64`, echoed exactly as received, and what a raw message's
//! `id` member held ([`IdField`]), also when the message was cut short
//! ([`id_from_prefix`]).
//!
//! Invariant: `"7"` and `7` are different ids; fractional numbers, `null` and integers
//! outside `i64` are never usable ids (they would be rounded or ambiguous on the way back).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A request id: a string or an integer, echoed exactly as received.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id within `i64`.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    /// Prints numbers bare and strings quoted, so `7` and `"7"` stay distinguishable.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(IdVisitor)? {
            IdField::Valid(id) => Ok(id),
            IdField::Absent | IdField::Null => Err(de::Error::custom("id must not be null")),
            IdField::Invalid(why) => Err(de::Error::custom(why)),
        }
    }
}

/// What the `id` member of a raw message held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum IdField {
    /// The member was absent.
    #[default]
    Absent,
    /// The member was `null`.
    Null,
    /// A usable id.
    Valid(RequestId),
    /// Present but unusable; the text says why.
    Invalid(&'static str),
}

impl IdField {
    /// The id, when it is usable.
    pub fn valid(&self) -> Option<&RequestId> {
        match self {
            IdField::Valid(id) => Some(id),
            _ => None,
        }
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = IdField;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or integer id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdField, E> {
        Ok(IdField::Valid(RequestId::Number(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdField, E> {
        Ok(match i64::try_from(v) {
            Ok(n) => IdField::Valid(RequestId::Number(n)),
            Err(_) => IdField::Invalid("integer id is outside the signed 64-bit range"),
        })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<IdField, E> {
        Ok(IdField::Invalid(
            "id must be a string or an integer, not a fractional or out-of-range number",
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<IdField, E> {
        Ok(IdField::Valid(RequestId::String(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<IdField, E> {
        Ok(IdField::Valid(RequestId::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<IdField, E> {
        Ok(IdField::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<IdField, E> {
        Ok(IdField::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<IdField, E> {
        Ok(IdField::Invalid(
            "id must be a string or an integer, not a boolean",
        ))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<IdField, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(IdField::Invalid(
            "id must be a string or an integer, not an array",
        ))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<IdField, A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(IdField::Invalid(
            "id must be a string or an integer, not an object",
        ))
    }
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

/// Reads the top-level `id` from the beginning of a message that may be cut anywhere.
/// Used to answer a message that was too long to read whole with the right id.
pub fn id_from_prefix(prefix: &[u8]) -> Option<RequestId> {
    struct Seed<'s>(&'s mut Option<RequestId>);

    impl<'de> de::DeserializeSeed<'de> for Seed<'_> {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a message object")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == "id" {
                    if let IdField::Valid(id) = map.next_value::<IdField>()? {
                        *self.0 = Some(id);
                    }
                    // Stop here: the rest of the message is not needed (or not there).
                    return Err(de::Error::custom("id found"));
                }
                map.next_value::<de::IgnoredAny>()?;
            }
            Ok(())
        }
    }

    let mut slot = None;
    let mut de = serde_json::Deserializer::from_slice(prefix);
    let _ = de::DeserializeSeed::deserialize(Seed(&mut slot), &mut de);
    slot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_recovered_from_a_truncated_message() {
        assert_eq!(
            id_from_prefix(
                br#"{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"aaaa"#
            ),
            Some(RequestId::Number(42))
        );
        assert_eq!(
            id_from_prefix(br#"{"method":"x","params":{"id":1,"s":"a\"b"},"id":"k"#),
            None,
            "a string cut before its closing quote is not an id"
        );
        assert_eq!(
            id_from_prefix(br#"{"method":"x","params":{"id":1,"s":"a\"b"},"id":"k","#),
            Some(RequestId::from("k"))
        );
        assert_eq!(
            id_from_prefix(br#"{"jsonrpc":"2.0","params":{"uri":"aaaa"#),
            None
        );
        assert_eq!(id_from_prefix(br#"[1,2"#), None);
        assert_eq!(id_from_prefix(br#"{"id":1.5,"x""#), None);
    }
}
