//! Runs every case of the shared RFC 6570 test suite (`testdata/uritemplate-test/`).
//!
//! A case's result is a string (the expansion), a list of acceptable expansions, or `false`
//! (the template must fail to parse or to expand).

use std::collections::HashMap;

#[cfg(feature = "fuzzing")]
use rsrc_uri_template::fuzz_check;
use rsrc_uri_template::{UriTemplate, Value};
use serde_json::Value as Json;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/uritemplate-test/"
);

fn scalar(j: &Json) -> Option<String> {
    match j {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn to_value(j: &Json) -> Option<Value> {
    match j {
        Json::Null => None,
        Json::Array(items) => Some(Value::List(items.iter().filter_map(scalar).collect())),
        Json::Object(map) => Some(Value::Assoc(
            map.iter()
                .filter_map(|(k, v)| scalar(v).map(|v| (k.clone(), v)))
                .collect(),
        )),
        other => scalar(other).map(Value::String),
    }
}

/// Runs one file; returns the number of cases run.
fn run_file(name: &str) -> usize {
    let path = format!("{DIR}{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Json = serde_json::from_str(&text).expect("valid JSON");
    let mut count = 0;
    let mut failures = Vec::new();
    for (group, body) in doc.as_object().expect("top-level object") {
        let vars: HashMap<String, Value> = body["variables"]
            .as_object()
            .expect("variables")
            .iter()
            .filter_map(|(k, v)| to_value(v).map(|v| (k.clone(), v)))
            .collect();
        for case in body["testcases"].as_array().expect("testcases") {
            count += 1;
            let template = case[0].as_str().expect("template string");
            let expected = &case[1];
            let outcome = UriTemplate::parse(template)
                .map_err(|e| e.to_string())
                .and_then(|t| t.try_expand(&vars).map_err(|e| e.to_string()));
            let ok = match (expected, &outcome) {
                (Json::Bool(false), Err(_)) => true,
                (Json::String(s), Ok(got)) => s == got,
                (Json::Array(options), Ok(got)) => options.iter().any(|o| o.as_str() == Some(got)),
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{name} / {group}: {template:?} expected {expected}, got {outcome:?}"
                ));
            }
            // The fuzz invariants hold for the expected expansions too.
            #[cfg(feature = "fuzzing")]
            for uri in expected.as_array().into_iter().flatten().chain([expected]) {
                if let Some(uri) = uri.as_str() {
                    fuzz_check(format!("{template}\n{uri}").as_bytes());
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(count > 0, "{name}: no case run");
    count
}

#[test]
fn spec_examples() {
    let n = run_file("spec-examples.json");
    assert!(n >= 60, "{n}");
}

#[test]
fn spec_examples_by_section() {
    let n = run_file("spec-examples-by-section.json");
    assert!(n >= 100, "{n}");
}

#[test]
fn extended_tests() {
    let n = run_file("extended-tests.json");
    assert!(n >= 50, "{n}");
}

#[test]
fn negative_tests() {
    let n = run_file("negative-tests.json");
    assert!(n >= 30, "{n}");
}
