//! The documents themselves: every Markdown document is compiled as doctests (included by
//! `src/lib.rs`), no code block escapes being compiled or is mistaken for Rust, every
//! document names only files that exist, and every item a table's "where" column places
//! in a file is defined there.

mod paths;
mod places;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use paths::{Tree, named_paths};
use places::{defines, placed_items, where_cells};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md` and every `docs/*.md`, relative to the root.
fn documents() -> Vec<String> {
    let mut out = vec!["README.md".to_owned()];
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            out.push(format!("docs/{name}"));
        }
    }
    out.sort();
    out
}

/// The info strings of a Markdown text's fenced code blocks, with their line numbers.
fn fences(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !open {
            out.push((i + 1, rest.trim().to_owned()));
        }
        open = !open;
    }
    out
}

#[test]
fn every_document_is_compiled_as_doctests() {
    let lib = fs::read_to_string(root().join("crates/rsrc-docs/src/lib.rs")).unwrap();
    for doc in documents() {
        let include = format!("include_str!(\"../../../{doc}\")");
        assert!(
            lib.contains(&include),
            "{doc} is not included in crates/rsrc-docs/src/lib.rs, so its Rust snippets are never compiled"
        );
    }
}

#[test]
fn every_code_block_names_its_language_and_no_rust_block_is_ignored() {
    for doc in documents() {
        let text = fs::read_to_string(root().join(&doc)).unwrap();
        for (line, info) in fences(&text) {
            // rustdoc compiles a block without a language as Rust.
            assert!(
                !info.is_empty(),
                "{doc}:{line}: a code block without a language (write ```text for plain text)"
            );
            let attrs: Vec<&str> = info.split(',').map(str::trim).collect();
            if attrs[0] == "rust" {
                assert!(
                    !attrs.contains(&"ignore"),
                    "{doc}:{line}: a Rust block marked `ignore` is never compiled (use `no_run`)"
                );
            }
        }
    }
}

/// Paths the documents name that are not the repository's: the reader's files, and the
/// folders of the release archive. (Build output, under `target/`, is left out too.)
const NOT_IN_THE_REPOSITORY: [&str; 4] = [
    "claude_desktop_config.json", // the host's configuration `rsrc config` writes into
    "prometheus.yml",             // the reader's Prometheus configuration
    "completions/",               // the release archive's shell completions
    "man/man1/",                  // the release archive's manual page
];

#[test]
fn every_path_a_document_names_exists() {
    let files = Tree::read(&root());
    let missing: Vec<String> = documents()
        .into_iter()
        .flat_map(|doc| {
            let text = fs::read_to_string(root().join(&doc)).unwrap();
            named_paths(&text)
                .into_iter()
                .filter(|p| {
                    files.matching(p).is_empty()
                        && !NOT_IN_THE_REPOSITORY.contains(&p.as_str())
                        && !p.starts_with("target/")
                })
                .map(move |p| format!("{doc}: `{p}`"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "paths named by the documents that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_item_a_where_column_names_is_defined_in_the_file_it_names() {
    let files = Tree::read(&root());
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = fs::read_to_string(root().join(&doc)).unwrap();
        for (line, cell) in where_cells(&text) {
            for (place, item) in placed_items(&cell) {
                let candidates = files.matching(&place);
                let defined = candidates.iter().any(|file| {
                    let source = files.source_of(file);
                    source.iter().any(|text| defines(text, &item))
                });
                if !defined {
                    wrong.push(format!(
                        "{doc}:{line}: `{item}` is not defined in `{place}` ({} file(s) match)",
                        candidates.len()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "items a \"where\" column places in a file that does not define them:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn paths_are_found_in_backticks_with_their_braces_expanded() {
    let found = named_paths(
        "the `handlers.rs` file, `db/{mod,model}.rs`, `file:///x.md`, `inode/directory`, \
         `crates/rsrc/src/`, `--watch`, `.gitignore`",
    );
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [
            "crates/rsrc/src/",
            "db/mod.rs",
            "db/model.rs",
            "handlers.rs"
        ]
    );
}

/// The crates' table of `docs/architecture.md`: each crate's name and its "depends on".
fn crate_rows(text: &str) -> Vec<(String, String)> {
    let section = text
        .split("\n## Crates\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/architecture.md has a `## Crates` section");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let name = cells[0].split('`').nth(1).unwrap_or_default().to_owned();
            (name, cells.get(1).copied().unwrap_or_default().to_owned())
        })
        .collect()
}

/// The workspace crates a crate's manifest depends on (not for tests), optional ones too.
fn workspace_dependencies(manifest: &toml::Table) -> BTreeSet<String> {
    let mut sections = vec![manifest.get("dependencies")];
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        sections.extend(targets.values().map(|t| t.get("dependencies")));
    }
    sections
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
        .flat_map(|deps| deps.keys())
        .filter(|name| name.starts_with("rsrc"))
        .cloned()
        .collect()
}

/// The workspace's crates and their manifests: every member of the root manifest, a
/// `dir/*` member standing for each folder of `dir`. A crate's own helper crate inside its
/// folder (`crates/rsrc-rmcp/macros`) is part of that crate, not a row of its own.
fn crate_manifests() -> Vec<(String, toml::Table)> {
    let workspace: toml::Table = fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let members = workspace["workspace"]["members"].as_array().unwrap();
    let mut dirs = Vec::new();
    for member in members.iter().filter_map(toml::Value::as_str) {
        match member.strip_suffix("/*") {
            Some(parent) => {
                for entry in fs::read_dir(root().join(parent)).unwrap() {
                    dirs.push(entry.unwrap().path());
                }
            }
            None if !member.starts_with("crates/") => dirs.push(root().join(member)),
            None => {}
        }
    }
    dirs.iter()
        .filter_map(|dir| fs::read_to_string(dir.join("Cargo.toml")).ok())
        .map(|manifest| {
            let manifest: toml::Table = manifest.parse().unwrap();
            let name = manifest["package"]["name"].as_str().unwrap().to_owned();
            (name, manifest)
        })
        .collect()
}

#[test]
fn the_crates_table_names_every_crate_and_exactly_its_workspace_dependencies() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let rows = crate_rows(&text);
    let mut wrong = Vec::new();
    for (name, manifest) in crate_manifests() {
        let Some((_, depends)) = rows.iter().find(|(n, _)| *n == name) else {
            wrong.push(format!("{name}: no row"));
            continue;
        };
        let words: BTreeSet<String> = depends
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .filter(|w| w.starts_with("rsrc"))
            .map(str::to_owned)
            .collect();
        let actual = workspace_dependencies(&manifest);
        for missing in actual.difference(&words) {
            wrong.push(format!(
                "{name}: depends on {missing}, which its row leaves out"
            ));
        }
        for extra in words.difference(&actual) {
            wrong.push(format!("{name}: its row names {extra}, not a dependency"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's crates table is out of date:\n{}",
        wrong.join("\n")
    );
}

/// The floors picture of `docs/architecture.md`: each crate's floor.
fn floors(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("floor "))
        .flat_map(|l| {
            let mut words = l.split_whitespace();
            let floor: u32 = words.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            words
                .map(move |c| (c.to_owned(), floor))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_crate_depends_only_on_crates_on_lower_floors() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let floors = floors(&text);
    let floor_of = |name: &str| floors.iter().find(|(c, _)| c == name).map(|(_, f)| *f);
    let manifests = crate_manifests();
    let mut wrong = Vec::new();
    for (name, depends) in crate_rows(&text) {
        let Some(floor) = floor_of(&name) else {
            wrong.push(format!("{name}: on no floor"));
            continue;
        };
        let Some((_, manifest)) = manifests.iter().find(|(n, _)| *n == name) else {
            wrong.push(format!(
                "{name}: no such crate in the workspace ({depends})"
            ));
            continue;
        };
        for dependency in workspace_dependencies(manifest) {
            match floor_of(&dependency) {
                Some(f) if f < floor => {}
                // A crate's own helper crate (rsrc-rmcp-macros) lives inside it.
                None if dependency.starts_with(&format!("{name}-")) => {}
                _ => wrong.push(format!("{name} (floor {floor}) depends on {dependency}")),
            }
        }
    }
    assert!(
        !floors.is_empty(),
        "docs/architecture.md has no floors picture"
    );
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's floors do not hold:\n{}",
        wrong.join("\n")
    );
}
