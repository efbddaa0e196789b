//! The property check shared by the fuzz target (`fuzz/fuzz_targets/uri_template.rs`) and
//! the corpus replay test (`tests/fuzz_corpus.rs`).

use std::collections::HashMap;

use crate::template::UriTemplate;
use crate::value::Value;

/// Values given to variables when expanding, chosen by a hash of the name (one choice is
/// "undefined").
fn sample_value(name: &str) -> Option<Value> {
    let h = name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    Some(match h % 12 {
        0 => Value::from("value"),
        1 => Value::from("Hello World!"),
        2 => Value::from(""),
        3 => Value::from("/foo/bar"),
        4 => Value::from("a,b=c;d&e?f#g"),
        5 => Value::from("é%41%zz"),
        6 => Value::from(vec!["red", "green", "blue"]),
        7 => Value::from(vec![""]),
        8 => Value::from(vec![("semi", ";"), ("dot", "."), ("comma", ",")]),
        9 => Value::from(vec![("k", "")]),
        10 => Value::from(".."),
        _ => return None,
    })
}

/// Splits `data` at its first newline into a template and a URI, then checks:
///
/// - parsing, expanding and matching do not panic;
/// - a parse error points inside the template;
/// - [`UriTemplate::variables`] lists each name once;
/// - `try_expand`, when it succeeds, agrees with `expand`;
/// - whenever a URI matches (the given one, or the template's own expansion), expanding
///   the captures again gives a URI that also matches.
///
/// Panics when a check fails (that is what the fuzzer looks for).
pub fn fuzz_check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    let t = match UriTemplate::parse(template) {
        Ok(t) => t,
        Err(e) => {
            assert!(e.position() <= template.len(), "error past the end: {e}");
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert_eq!(t.as_str(), template);
    let names: Vec<&str> = t.variables().collect();
    for (i, n) in names.iter().enumerate() {
        assert!(!names[..i].contains(n), "duplicate variable {n:?}");
    }
    let vars: HashMap<&str, Value> = names
        .iter()
        .filter_map(|n| sample_value(n).map(|v| (*n, v)))
        .collect();
    let expanded = t.expand(&vars);
    if let Ok(strict) = t.try_expand(&vars) {
        assert_eq!(strict, expanded);
    }
    check_rematch(&t, &expanded);
    check_rematch(&t, uri);
    let s = t.specificity();
    assert_eq!(s, t.specificity());
}

fn check_rematch(t: &UriTemplate, uri: &str) {
    let Some(captures) = t.matches(uri) else {
        return;
    };
    for (name, _) in captures.iter() {
        assert!(t.variables().any(|n| n == name), "unknown capture {name:?}");
    }
    let again = match t.try_expand(&captures) {
        Ok(s) => s,
        Err(e) => panic!(
            "template {:?}, URI {uri:?}: captures {captures:?} do not expand: {e}",
            t.as_str()
        ),
    };
    assert!(
        t.matches(&again).is_some(),
        "template {:?}, URI {uri:?}: captures {captures:?} expand to {again:?}, which does not match",
        t.as_str()
    );
}
