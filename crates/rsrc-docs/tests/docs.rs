//! The documents themselves: every Markdown document is compiled as doctests (included by
//! `src/lib.rs`), no code block escapes being compiled or is mistaken for Rust, and the map
//! (`docs/architecture.md`) names only files that exist.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

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

/// Backticked words of `text` that name a file or directory of the repository.
fn named_paths(text: &str) -> BTreeSet<String> {
    const EXTENSIONS: [&str; 10] = [
        ".rs", ".md", ".toml", ".txt", ".sql", ".sh", ".py", ".mjs", ".yml", ".json",
    ];
    const ROOTS: [&str; 7] = [
        "crates/",
        "docs/",
        "scripts/",
        "fuzz/",
        "interop/",
        "conformance/",
        ".ci/",
    ];
    let mut out = BTreeSet::new();
    for (i, chunk) in text.split('`').enumerate() {
        // Odd chunks are inside backticks; code blocks' fences split evenly too.
        if i % 2 == 0 || chunk.contains([' ', ':', '*', '<', '>', '\n', '=', '"', '(']) {
            continue;
        }
        let path_like = EXTENSIONS.iter().any(|e| chunk.ends_with(e))
            || ROOTS.iter().any(|r| chunk.starts_with(r));
        if path_like && !chunk.starts_with('.') || chunk.starts_with(".ci/") {
            out.extend(expand_braces(chunk));
        }
    }
    out
}

/// `db/{mod,model}.rs` → `db/mod.rs`, `db/model.rs`.
fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|alt| expand_braces(&format!("{}{alt}{}", &path[..open], &path[close + 1..])))
            .collect(),
        _ => vec![path.to_owned()],
    }
}

/// Every file and directory under the root (but `target/` and hidden ones), relative.
fn tree(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name == "target" || name == "node_modules" || (name.starts_with('.') && name != ".ci") {
            continue;
        }
        let path = format!("{rel}{name}");
        if entry.file_type().unwrap().is_dir() {
            out.push(format!("{path}/"));
            tree(&entry.path(), &format!("{path}/"), out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_path_the_architecture_names_exists() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut files = Vec::new();
    tree(&root(), "", &mut files);
    let missing: Vec<String> = named_paths(&text)
        .into_iter()
        .filter(|p| {
            // A path is named whole from the root, or by its last components (`fs/read.rs`
            // for `crates/rsrc-providers/src/fs/read.rs`).
            let p = p.trim_end_matches('/');
            !files.iter().any(|f| {
                let f = f.trim_end_matches('/');
                f == p || f.ends_with(&format!("/{p}"))
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that do not exist: {missing:?}"
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
