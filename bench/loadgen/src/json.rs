//! Reading a server's answers without building a tree: typed views that borrow from the
//! message received, decoded in one pass, with what is not checked skipped unread.
//!
//! Invariant: each wrapper here is `None` exactly where the `serde_json::Value` accessor it
//! stands for gives `None` or `Null` (`Object`: indexing a non-object; `Array`:
//! `as_array`; `Str`: `as_str`; `U64`: `as_u64`; `Raw`: `get`, a `null` included): a value
//! of another type is skipped, never an error, so every check sees what it saw on a
//! `Value`. A string is only unescaped (and only then copied) when it has escapes.
//! `Present` is the one exception: a `null` is there.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The visits a wrapper does not take: the value is skipped (drained, for a container),
/// and the wrapper is its default, `None`.
macro_rules! none_for {
    ($($kind:ident)*) => { $(none_for!(@ $kind);)* };
    (@ bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ i64) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ u64) => {
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ f64) => {
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ unit) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
    (@ seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Self::Value::default())
        }
    };
    (@ map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Self::Value::default())
        }
    };
}

/// An object decoded as `T` (its fields by name, the others skipped); `None` for any
/// other value. (A derived struct alone would also take an array, by position.)
pub(crate) struct Object<T>(pub(crate) Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
            }
            none_for!(bool i64 u64 f64 str unit seq);
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

/// An array's elements, each decoded as `T`; `None` for any other value.
pub(crate) struct Array<T>(pub(crate) Option<Vec<T>>);

impl<T> Default for Array<T> {
    fn default() -> Self {
        Array(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Array<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Array<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Array(Some(items)))
            }
            none_for!(bool i64 u64 f64 str unit map);
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

/// A string, borrowed from the message unless it has escapes; `None` for any other value.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct Str<'a>(pub(crate) Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Borrowed(s))))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(s.to_owned()))))
            }
            none_for!(bool i64 u64 f64 unit seq map);
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

/// A non-negative integer that fits in a `u64` (not `12.0`, not `"12"`); `None` for any
/// other value.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct U64(pub(crate) Option<u64>);

impl<'de> Deserialize<'de> for U64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = U64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Ok(U64(Some(n)))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Ok(U64(u64::try_from(n).ok()))
            }
            none_for!(bool f64 str unit seq map);
        }
        deserializer.deserialize_any(V)
    }
}

/// A string's bytes as they decode, borrowed from the message unless it has escapes;
/// `None` for an array, an error for any other value (where a `Value` would give `None`:
/// either fails a check). Not checked for UTF-8 nor for unescaped control characters, so
/// it is only for a string compared with known UTF-8 text, in a message without control
/// characters (`Answer::is_compact`): there, equal bytes are the whole check (they are
/// UTF-8, and a lone surrogate decodes to bytes that UTF-8 text never has).
#[derive(Default)]
pub(crate) struct Decoded<'a>(pub(crate) Option<Cow<'a, [u8]>>);

impl<'de: 'a, 'a> Deserialize<'de> for Decoded<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Decoded<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, b: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Decoded(Some(Cow::Borrowed(b))))
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Self::Value, E> {
                Ok(Decoded(Some(Cow::Owned(b.to_vec()))))
            }
            none_for!(seq);
        }
        deserializer.deserialize_bytes(V(PhantomData))
    }
}

/// A value as the server wrote it, undecoded (only scanned for its end); `None` only when
/// absent: a `null` is there (an `Option` would take it for absent), as `Value::get` has it.
#[derive(Default, Clone, Copy)]
pub(crate) struct Raw<'a>(pub(crate) Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Raw(Some(raw)))
    }
}

/// A value decoded as `T`, `None` only when absent: a `null` is there, as `Value::get` has
/// it (`Present<Object<T>>` of a `null` is `Some(Object(None))`).
pub(crate) struct Present<T>(pub(crate) Option<T>);

impl<T> Default for Present<T> {
    fn default() -> Self {
        Present(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|t| Present(Some(t)))
    }
}

/// `json`, an answer's part, decoded as `T` where it is an object, else `T`'s default
/// (every field absent, as indexing a non-object `Value` gives).
#[cfg(test)]
pub(crate) fn object<'a, T: Deserialize<'a> + Default>(
    json: &'a str,
) -> Result<T, serde_json::Error> {
    serde_json::from_str::<Object<T>>(json).map(|o| o.0.unwrap_or_default())
}

/// The string a raw value holds, as `as_str` gives it: `None` unless it is a string.
pub(crate) fn as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Str<'_>>(raw.get()).ok()?.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Shape<'a> {
        #[serde(borrow)]
        s: Str<'a>,
        n: U64,
        #[serde(borrow)]
        r: Raw<'a>,
        #[serde(borrow)]
        list: Array<Object<Inner<'a>>>,
    }

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow)]
        name: Str<'a>,
    }

    /// What `Value`'s accessors give for each field of `json`.
    fn by_value(json: &str) -> (Option<String>, Option<u64>, Option<Value>, Option<usize>) {
        let v: Value = serde_json::from_str(json).unwrap();
        (
            v["s"].as_str().map(str::to_owned),
            v["n"].as_u64(),
            v.get("r").cloned(),
            v["list"].as_array().map(Vec::len),
        )
    }

    fn by_view(json: &str) -> (Option<String>, Option<u64>, Option<Value>, Option<usize>) {
        let shape: Shape<'_> = object(json).unwrap();
        (
            shape.s.0.map(Cow::into_owned),
            shape.n.0,
            shape.r.0.map(|r| serde_json::from_str(r.get()).unwrap()),
            shape.list.0.map(|l| l.len()),
        )
    }

    #[test]
    fn the_views_see_what_values_accessors_see() {
        for json in [
            r#"{"s":"plain","n":12,"r":null,"list":[]}"#,
            r#"{"s":"tab\there \u00e9 \ud83d\ude00","n":-1,"r":{"a":[1,2]},"list":[1,"x",{"name":"y"}]}"#,
            r#"{"s":5,"n":12.0,"list":{"a":1},"other":[{"deep":[1,2,{"x":null}]}]}"#,
            r#"{"s":["a"],"n":"12","r":"x","list":"no"}"#,
            r#"{"s":{"a":"b"},"n":18446744073709551615,"r":true,"list":null}"#,
            r#"{"n":18446744073709551616,"s":null}"#,
            r#"{"n":-0,"s":true,"r":1e3}"#,
            r#"{}"#,
            r#"[1,2,3]"#,
            r#""a string""#,
            r#"null"#,
        ] {
            assert_eq!(by_view(json), by_value(json), "{json}");
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let shape: Shape<'_> = object(r#"{"s":"plain"}"#).unwrap();
        assert!(matches!(shape.s.0, Some(Cow::Borrowed("plain"))));
        let shape: Shape<'_> = object(r#"{"s":"a\"b"}"#).unwrap();
        assert!(matches!(shape.s.0, Some(Cow::Owned(ref s)) if s == "a\"b"));
    }

    #[test]
    fn elements_not_objects_are_empty() {
        let shape: Shape<'_> = object(r#"{"list":[1,{"name":"y"},[["name"]]]}"#).unwrap();
        let list = shape.list.0.unwrap();
        assert_eq!(list.len(), 3);
        assert!(list[0].0.is_none() && list[2].0.is_none());
        assert_eq!(list[1].0.as_ref().unwrap().name, Str(Some("y".into())));
    }

    #[test]
    fn as_str_is_value_as_str() {
        let raw = |s: &str| serde_json::from_str::<Box<RawValue>>(s).unwrap();
        assert_eq!(as_str(&raw(r#""a\/b""#)).as_deref(), Some("a/b"));
        assert_eq!(as_str(&raw(r#""ab""#)).as_deref(), Some("ab"));
        assert_eq!(as_str(&raw("12")), None);
        assert_eq!(as_str(&raw("null")), None);
    }

    #[test]
    fn decoded_bytes_are_the_strings_bytes() {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct T<'a> {
            #[serde(borrow)]
            t: Decoded<'a>,
        }
        let t = |json: &str| -> Option<Vec<u8>> {
            let v: T<'_> = serde_json::from_slice(json.as_bytes()).unwrap();
            v.t.0.map(Cow::into_owned)
        };
        assert_eq!(t(r#"{"t":"plain"}"#).unwrap(), b"plain");
        assert_eq!(
            t(r#"{"t":"h\u00e9 \"\n\/"}"#).unwrap(),
            "hé \"\n/".as_bytes()
        );
        assert_eq!(t(r#"{"t":"\ud83d\ude00"}"#).unwrap(), "😀".as_bytes());
        assert!(std::str::from_utf8(&t(r#"{"t":"\ud83d"}"#).unwrap()).is_err());
        assert_eq!(t(r#"{"t":[1,2]}"#), None);
        assert_eq!(t(r#"{}"#), None);
        let borrowed: T<'_> = serde_json::from_slice(br#"{"t":"plain"}"#).unwrap();
        assert!(matches!(borrowed.t.0, Some(Cow::Borrowed(b"plain"))));
        for other in [r#"{"t":null}"#, r#"{"t":5}"#, r#"{"t":{}}"#] {
            assert!(
                serde_json::from_slice::<T<'_>>(other.as_bytes()).is_err(),
                "{other}"
            );
        }
    }
}
