//! Variable values: what [`expand`](crate::UriTemplate::expand) reads ([`VarSource`],
//! [`Value`]) and what [`matches`](crate::UriTemplate::matches) returns ([`Captures`]).

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// The value of a template variable (RFC 6570 section 2.3).
///
/// A variable that is absent from a [`VarSource`] is *undefined*. As the RFC says, an empty
/// `List` or an empty `Assoc` is undefined too, while an empty `String` is defined (it
/// expands to, for example, `?x=` or `;x`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A string value.
    String(String),
    /// A list of string values.
    List(Vec<String>),
    /// An associative array: (name, value) pairs, in order.
    Assoc(Vec<(String, String)>),
}

impl Value {
    /// Whether the RFC treats this value as undefined (an empty list or associative array).
    pub fn is_undefined(&self) -> bool {
        match self {
            Value::String(_) => false,
            Value::List(items) => items.is_empty(),
            Value::Assoc(pairs) => pairs.is_empty(),
        }
    }

    /// The string, when this is a [`Value::String`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<Vec<String>> for Value {
    fn from(items: Vec<String>) -> Self {
        Value::List(items)
    }
}

impl From<Vec<&str>> for Value {
    fn from(items: Vec<&str>) -> Self {
        Value::List(items.into_iter().map(str::to_owned).collect())
    }
}

impl From<Vec<(String, String)>> for Value {
    fn from(pairs: Vec<(String, String)>) -> Self {
        Value::Assoc(pairs)
    }
}

impl From<Vec<(&str, &str)>> for Value {
    fn from(pairs: Vec<(&str, &str)>) -> Self {
        Value::Assoc(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        )
    }
}

/// Where expansion looks up variable values by name.
///
/// Implemented for `HashMap`/`BTreeMap` keyed by `String` or `&str`, for slices of
/// `(&str, Value)` pairs, and for [`Captures`] (so a match can be expanded again).
pub trait VarSource {
    /// The value of `name`, or `None` when it is undefined.
    fn get(&self, name: &str) -> Option<&Value>;
}

impl<T: VarSource + ?Sized> VarSource for &T {
    fn get(&self, name: &str) -> Option<&Value> {
        (**self).get(name)
    }
}

impl<S: BuildHasher> VarSource for HashMap<String, Value, S> {
    fn get(&self, name: &str) -> Option<&Value> {
        HashMap::get(self, name)
    }
}

impl<S: BuildHasher> VarSource for HashMap<&str, Value, S> {
    fn get(&self, name: &str) -> Option<&Value> {
        HashMap::get(self, name)
    }
}

impl VarSource for BTreeMap<String, Value> {
    fn get(&self, name: &str) -> Option<&Value> {
        BTreeMap::get(self, name)
    }
}

impl VarSource for BTreeMap<&str, Value> {
    fn get(&self, name: &str) -> Option<&Value> {
        BTreeMap::get(self, name)
    }
}

impl VarSource for [(&str, Value)] {
    fn get(&self, name: &str) -> Option<&Value> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

impl<const N: usize> VarSource for [(&str, Value); N] {
    fn get(&self, name: &str) -> Option<&Value> {
        VarSource::get(self.as_slice(), name)
    }
}

/// The variables captured by a successful [`matches`](crate::UriTemplate::matches).
///
/// Holds only the variables that were defined in the URI, in template order, each once;
/// values are percent-decoded exactly once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captures {
    vars: Vec<(Box<str>, Value)>,
}

impl Captures {
    pub(crate) fn from_vec(vars: Vec<(Box<str>, Value)>) -> Self {
        Captures { vars }
    }

    /// The value captured for `name`, or `None` when it is undefined in the URI.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    /// The value captured for `name` when it is a [`Value::String`].
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The captured variables, in template order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.vars.iter().map(|(n, v)| (&**n, v))
    }

    /// How many variables were captured.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether no variable was captured.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

impl VarSource for Captures {
    fn get(&self, name: &str) -> Option<&Value> {
        Captures::get(self, name)
    }
}

impl<'a> IntoIterator for &'a Captures {
    type Item = (&'a str, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Box<str>, Value)>,
        fn(&'a (Box<str>, Value)) -> (&'a str, &'a Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        fn pair(p: &(Box<str>, Value)) -> (&str, &Value) {
            (&p.0, &p.1)
        }
        self.vars.iter().map(pair)
    }
}
