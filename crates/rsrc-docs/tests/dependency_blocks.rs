//! The docs' `[dependencies]` blocks, as a reader pastes them: each guide's first
//! ```` ```toml ```` block, with nothing added, builds every Rust snippet of its guide.
//!
//! The crates are not on a registry yet, so the blocks name them by `git` (the
//! repository, which must be the workspace's `repository`) and, in a second block, by
//! `path` (`../rsrc/crates/NAME`, with the same features). Here the `git` form is checked
//! by pointing it at this checkout: a scratch project outside the workspace gets the block
//! as its dependencies, the workspace's `dev` profile (so that what is already built is
//! reused) and its lockfile, and one binary per snippet of the guide (hidden lines shown,
//! wrapped in `fn main` when it has none, as rustdoc does); `cargo check --offline` must
//! pass. A feature the code needs and the block leaves out fails here, as it failed a
//! newcomer.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The fenced blocks of `text` whose info string starts with `lang`, with their line.
fn blocks(text: &str, lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => {
                let first = info.split(',').next().unwrap_or("").trim();
                open = Some((i + 1, first == lang, String::new()));
            }
            (Some(_), Some(_)) => {
                let (at, wanted, body) = open.take().unwrap();
                if wanted {
                    out.push((at, body));
                }
            }
            (Some((_, _, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A snippet as rustdoc compiles it: hidden lines (`# …`) shown, and wrapped in `fn main`
/// when it has none (in a function returning a `Result` when it ends in `Ok::<…>(())`).
fn program(snippet: &str) -> String {
    let shown: Vec<&str> = snippet
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t == "#" {
                ""
            } else if let Some(rest) = t.strip_prefix("# ") {
                rest
            } else if t.starts_with("##") {
                &t[1..]
            } else {
                l
            }
        })
        .collect();
    let code = shown.join("\n");
    let returns_result = code
        .trim_end()
        .lines()
        .last()
        .is_some_and(|l| l.starts_with("Ok::<"));
    if code.contains("fn main") {
        format!("#![allow(unused)]\n{code}\n")
    } else if returns_result {
        // rustdoc's form for a snippet that ends in `Ok::<(), E>(())`.
        format!(
            "#![allow(unused)]\nfn main() {{\n\
             fn _inner() -> Result<(), impl core::fmt::Debug> {{\n{code}\n}}\n\
             _inner().unwrap()\n}}\n"
        )
    } else {
        format!("#![allow(unused)]\nfn main() {{\n{code}\n}}\n")
    }
}

/// The workspace's `repository`.
fn repository() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = "))
        .map(|v| v.trim_matches('"').to_owned())
        .expect("the workspace names its repository")
}

/// The workspace's `[profile.dev]` sections, as written.
fn dev_profile() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.dev");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The crates of this workspace a block names by `git` (each must name the repository),
/// and the block with them pointed at this checkout.
fn at_this_checkout(block: &str) -> (Vec<String>, String) {
    let git = format!("git = \"{}\"", repository());
    let mut names = Vec::new();
    let mut out = String::new();
    for line in block.lines() {
        let name = line
            .split_once(" = ")
            .map(|(n, _)| n)
            .filter(|n| n.starts_with("rsrc"));
        let Some(name) = name else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        assert!(
            line.contains(&git),
            "`{line}`: rsrc's crates are not on a registry; name them with `{git}`"
        );
        let path = format!("path = \"{}\"", root().join("crates").join(name).display());
        out.push_str(&line.replace(&git, &path));
        out.push('\n');
        names.push(name.to_owned());
    }
    (names, out)
}

/// The second block, by `path`, names the same crates with the same features.
fn check_path_block(doc: &str, git_block: &str, path_block: &str) {
    let git = format!("git = \"{}\"", repository());
    for line in path_block.lines().filter(|l| l.starts_with("rsrc")) {
        let (name, _) = line.split_once(" = ").unwrap();
        let path = format!("path = \"../rsrc/crates/{name}\"");
        assert!(line.contains(&path), "{doc}: `{line}` should read `{path}`");
        assert!(
            root().join("crates").join(name).is_dir(),
            "{doc}: no crate {name}"
        );
        let as_git = line.replace(&path, &git);
        assert!(
            git_block.lines().any(|l| l == as_git),
            "{doc}: `{line}` differs from its `git` line (expected `{as_git}` there)"
        );
    }
}

/// Builds every Rust snippet of `doc` with its first TOML block as the dependencies.
fn check(doc: &str) {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let tomls = blocks(&text, "toml");
    let (_, git_block) = tomls.first().unwrap_or_else(|| panic!("{doc} has no TOML"));
    assert!(
        git_block.starts_with("[dependencies]\n"),
        "{doc}: {git_block}"
    );
    if let Some((_, path_block)) = tomls.get(1) {
        check_path_block(doc, git_block, path_block);
    }
    let (names, dependencies) = at_this_checkout(git_block);
    assert!(!names.is_empty(), "{doc}: no rsrc crate in {git_block}");

    let project = tempfile::tempdir().unwrap();
    let manifest = format!(
        "[package]\nname = \"reader\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n{dependencies}\n{}",
        dev_profile()
    );
    std::fs::write(project.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root().join("Cargo.lock"), project.path().join("Cargo.lock")).unwrap();
    let bins = project.path().join("src/bin");
    std::fs::create_dir_all(&bins).unwrap();
    let snippets = blocks(&text, "rust");
    assert!(!snippets.is_empty(), "{doc} has no Rust snippet");
    for (line, snippet) in &snippets {
        std::fs::write(bins.join(format!("line_{line}.rs")), program(snippet)).unwrap();
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["check", "--offline", "--bins", "--quiet"])
        .current_dir(project.path())
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{doc}'s snippets do not build with its [dependencies] block (bin line_N is the \
         snippet at line N):\n{git_block}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_rmcp_guide_builds_with_its_dependency_block() {
    check("docs/rmcp.md");
}

#[test]
fn the_resources_guide_builds_with_its_dependency_block() {
    check("docs/writing-resources.md");
}

#[test]
fn the_providers_page_builds_with_its_dependency_block() {
    check("docs/providers.md");
}

#[test]
fn snippets_become_programs_as_rustdoc_makes_them() {
    assert_eq!(
        program("# use x::y;\nlet a = 1;\n#\n## not hidden"),
        "#![allow(unused)]\nfn main() {\nuse x::y;\nlet a = 1;\n\n# not hidden\n}\n"
    );
    assert_eq!(program("fn main() {}"), "#![allow(unused)]\nfn main() {}\n");
    assert!(
        program("let s = f()?;\nOk::<(), E>(())")
            .contains("fn _inner() -> Result<(), impl core::fmt::Debug> {\nlet s")
    );
    let text =
        "a\n```toml\n[dependencies]\nx = 1\n```\n```rust,no_run\nlet b;\n```\n```rust\nc\n```\n";
    assert_eq!(
        blocks(text, "toml"),
        [(2, "[dependencies]\nx = 1\n".to_owned())]
    );
    assert_eq!(
        blocks(text, "rust"),
        [(6, "let b;\n".to_owned()), (9, "c\n".to_owned())]
    );
}
