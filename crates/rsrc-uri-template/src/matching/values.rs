//! Turning raw captured text into [`Value`]s: the structural split (on raw, still-encoded
//! separators) followed by exactly one percent-decoding of each piece.
//!
//! Every function returns `None` when the text cannot be a value of that variable: an
//! invalid pct-encoding, decoded bytes that are not UTF-8, or a decoded separator that the
//! expansion of that operator would have encoded (`/` for every non-reserved operator,
//! `.` for `{.x}`, `?` and `#` for reserved variables before a query section), or a
//! decoded `%XX` in a reserved variable (which its expansion would not encode again).

use crate::chars::pct_decode;
use crate::parse::Op;
use crate::value::Value;

/// What the decoder needs to know about one variable occurrence.
#[derive(Clone, Debug)]
pub(crate) struct SpecInfo {
    pub(crate) name: Box<str>,
    pub(crate) op: Op,
    pub(crate) explode: bool,
    pub(crate) prefix: Option<u16>,
    /// A reserved variable before a query section: its value may not contain `?` or `#`.
    pub(crate) path_guard: bool,
    /// A reserved variable followed by another in its expression (`x` in `{+x,y}`): its
    /// value may not contain `,`, which would separate it from the next one.
    pub(crate) comma_guard: bool,
}

fn has_triplet(s: &str) -> bool {
    s.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// Decodes one piece of a value of `spec`, checking the decoded text.
fn decode(spec: &SpecInfo, raw: &str) -> Option<String> {
    let s = pct_decode(raw)?;
    let forbidden = |c: char| {
        if spec.op.allow_reserved() {
            spec.path_guard && (c == '?' || c == '#') || spec.comma_guard && c == ','
        } else {
            // A query value may carry a `/` (a URL, a path): the query's structure was
            // decided on the raw text, and no path segment is built from it.
            c == '/' && !matches!(spec.op, Op::Query | Op::QueryCont)
                || (c == '.' && spec.op == Op::Label)
        }
    };
    if s.contains(forbidden) {
        return None;
    }
    // Reserved expansion copies a `%XX` of the value as is, so a decoded value containing
    // one would expand to a different URI: `%2541` cannot be the text of `{+x}`.
    if spec.op.allow_reserved() && has_triplet(&s) {
        return None;
    }
    Some(s)
}

/// A non-exploded value: a `List` when the raw text has unencoded commas (only in
/// non-reserved expressions, where expansion encodes commas inside values), a `String`
/// otherwise.
fn list_or_string(spec: &SpecInfo, raw: &str) -> Option<Value> {
    if spec.op.allow_reserved() || !raw.contains(',') {
        return decode(spec, raw).map(Value::String);
    }
    raw.split(',')
        .map(|item| decode(spec, item))
        .collect::<Option<Vec<_>>>()
        .map(Value::List)
}

/// Decodes `key=value` items into a list (when every key is the variable's name, as
/// `{;list*}` and `{?list*}` expand) or an associative array.
fn named_items<'a>(spec: &SpecInfo, items: impl Iterator<Item = &'a str> + Clone) -> Option<Value> {
    let split = |item: &'a str| item.split_once('=').unwrap_or((item, ""));
    if items.clone().all(|item| split(item).0 == &*spec.name) {
        items
            .map(|item| decode(spec, split(item).1))
            .collect::<Option<Vec<_>>>()
            .map(Value::List)
    } else {
        items
            .map(|item| {
                let (k, v) = split(item);
                Some((decode(spec, k)?, decode(spec, v)?))
            })
            .collect::<Option<Vec<_>>>()
            .map(Value::Assoc)
    }
}

/// The value of a variable matched in place, from its raw text (after the operator's
/// `first`/`sep` character, and for named operators after `name=`).
pub(crate) fn positional(spec: &SpecInfo, raw: &str) -> Option<Value> {
    let op = spec.op;
    let value = match (op.named(), spec.explode) {
        (true, true) => named_items(spec, raw.split(op.sep()))?,
        (_, false) => list_or_string(spec, raw)?,
        (false, true) => {
            // Reserved expansion writes `,` and `=` unencoded, so a decoded item of
            // `{+x*}` must not contain `,` (nor a key `=`): it would expand to other items.
            let piece = |raw: &str, extra: &[char]| {
                decode(spec, raw).filter(|s| !(op.allow_reserved() && s.contains(extra)))
            };
            let items = raw.split(op.sep());
            let with_eq = items.clone().filter(|i| i.contains('=')).count();
            let total = items.clone().count();
            if op.allow_reserved() && with_eq < total || !op.allow_reserved() && with_eq == 0 {
                items
                    .map(|item| piece(item, &[',']))
                    .collect::<Option<Vec<_>>>()
                    .map(Value::List)?
            } else if with_eq == total {
                items
                    .map(|item| {
                        let (k, v) = item.split_once('=').unwrap_or((item, ""));
                        Some((piece(k, &[',', '='])?, piece(v, &[','])?))
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Assoc)?
            } else {
                // `{/x*}` items are either all `key=value` (associative) or none.
                return None;
            }
        }
    };
    check_prefix(spec, value)
}

/// Whether a raw query key or value has only characters a `{?x}` expansion can write (the
/// characters the in-place automaton accepts for it), commas only where they separate
/// list items.
fn query_chars_ok(raw: &str, comma: bool) -> bool {
    raw.chars().all(|c| {
        !c.is_ascii()
            || c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.' | '_' | '~' | '!' | '*' | '\'' | '(' | ')' | '%'
            )
            || (comma && c == ',')
    })
}

/// The value of a non-exploded query variable from its parameter's raw value.
pub(crate) fn query_value(spec: &SpecInfo, raw: &str) -> Option<Value> {
    if !query_chars_ok(raw, true) {
        return None;
    }
    check_prefix(spec, list_or_string(spec, raw)?)
}

/// The list value of an exploded query variable from the raw values of the parameters
/// named after it.
pub(crate) fn query_list(spec: &SpecInfo, raws: &[&str]) -> Option<Value> {
    raws.iter()
        .map(|raw| query_chars_ok(raw, false).then(|| decode(spec, raw))?)
        .collect::<Option<Vec<_>>>()
        .map(Value::List)
}

/// The associative value of an exploded query variable from leftover parameters.
pub(crate) fn query_assoc(spec: &SpecInfo, params: &[(&str, &str)]) -> Option<Value> {
    params
        .iter()
        .map(|(k, v)| {
            if !(query_chars_ok(k, false) && query_chars_ok(v, false)) {
                return None;
            }
            Some((decode(spec, k)?, decode(spec, v)?))
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Assoc)
}

/// A prefix-modified variable must capture a string of at most N characters.
fn check_prefix(spec: &SpecInfo, value: Value) -> Option<Value> {
    match (spec.prefix, &value) {
        (None, _) => Some(value),
        (Some(n), Value::String(s)) if s.chars().count() <= usize::from(n) => Some(value),
        _ => None,
    }
}
