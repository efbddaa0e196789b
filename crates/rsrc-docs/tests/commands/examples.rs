//! No two examples of the workspace share a name: they would overwrite each other in
//! `target/*/examples/`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::found::root;
use super::running::cargo;

/// `cargo metadata` of the workspace's own packages.
fn metadata() -> Value {
    let out = std::process::Command::new(cargo())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Which packages have an example called each name.
fn examples_by_name(metadata: &Value) -> BTreeMap<String, Vec<String>> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            if target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "example")
            {
                by_name
                    .entry(target["name"].as_str().unwrap().to_owned())
                    .or_default()
                    .push(package["name"].as_str().unwrap().to_owned());
            }
        }
    }
    by_name
}

#[test]
fn no_two_examples_of_the_workspace_share_a_name() {
    let by_name = examples_by_name(&metadata());
    assert!(by_name.contains_key("rmcp-notion") && by_name.contains_key("notion"));
    let shared: Vec<String> = by_name
        .iter()
        .filter(|(_, packages)| packages.len() > 1)
        .map(|(name, packages)| format!("`{name}` in {}", packages.join(" and ")))
        .collect();
    assert!(
        shared.is_empty(),
        "examples of one name overwrite each other in target/*/examples/: {}",
        shared.join("; ")
    );
}

#[test]
fn examples_of_one_name_in_two_packages_are_found() {
    let metadata = json!({"packages": [
        {"name": "a", "targets": [{"name": "demo", "kind": ["example"]}, {"name": "a", "kind": ["lib"]}]},
        {"name": "b", "targets": [{"name": "demo", "kind": ["example"]}, {"name": "b", "kind": ["bin"]}]},
    ]});
    assert_eq!(
        examples_by_name(&metadata),
        BTreeMap::from([("demo".to_owned(), vec!["a".to_owned(), "b".to_owned()])])
    );
}
