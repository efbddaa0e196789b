//! Small deserialization helpers shared by the hand-written `Deserialize` impls.
//!
//! Invariant: map keys are compared exactly (case-sensitive) and a key seen twice is an
//! error, never a silent overwrite.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A map key, borrowed from the input when it has no escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Stores the next map value into `slot`, failing if the key was already seen.
pub(crate) fn set_once<'de, A, T>(
    slot: &mut Option<T>,
    key: &'static str,
    map: &mut A,
) -> Result<(), A::Error>
where
    A: de::MapAccess<'de>,
    T: Deserialize<'de>,
{
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// Stores the next map value under `key` in `extra`, failing if the key was already seen.
pub(crate) fn insert_once<'de, A: de::MapAccess<'de>>(
    extra: &mut serde_json::Map<String, serde_json::Value>,
    key: Cow<'de, str>,
    map: &mut A,
) -> Result<(), A::Error> {
    let value: serde_json::Value = map.next_value()?;
    match extra.entry(key.into_owned()) {
        serde_json::map::Entry::Occupied(e) => Err(de::Error::custom(format_args!(
            "duplicate field `{}`",
            e.key()
        ))),
        serde_json::map::Entry::Vacant(e) => {
            e.insert(value);
            Ok(())
        }
    }
}
