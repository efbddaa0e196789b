//! The checks of `rsrc-structure`, run on this repository: every crate under `crates/`
//! (its library, binaries, build script, tests, benches and examples) and the fuzz
//! targets under `fuzz/`.
//!
//! Strict: anything found fails, unless [`ALLOWED`] names that very import with its
//! reason; an entry that names an import no longer found fails too, so the list only
//! shrinks.

use std::path::{Path, PathBuf};

use rsrc_structure::{Allowed, Imports, MAX_LINES, Sources, cycles, graph, long_files, stale};

/// Imports the checks let through, each with its reason.
const ALLOWED: &[Allowed] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository's imports, with [`ALLOWED`] taken out, and the stale entries.
fn imports() -> (Imports, Vec<String>) {
    let sources = Sources::from_disk(&root(), &["crates", "fuzz"]);
    let mut imports = graph(&sources)
        .unwrap_or_else(|e| panic!("the module tree could not be read:\n{}", e.join("\n")));
    let stale = stale(ALLOWED, &mut imports);
    (imports, stale)
}

#[test]
fn no_source_file_imports_itself_through_other_files() {
    let (imports, stale) = imports();
    let cycles = cycles(&imports.graph);
    let report: String = cycles.iter().map(|c| format!("{c}\n")).collect();
    assert!(
        cycles.is_empty() && stale.is_empty(),
        "{}\n{} import cycle(s):\n{report}",
        stale.join("\n"),
        cycles.len()
    );
}

#[test]
fn no_source_file_imports_what_a_module_above_its_own_defines() {
    let (imports, stale) = imports();
    let up = Imports::edges(&imports.upward);
    let report: String = up
        .iter()
        .map(|e| format!("{} -> {}: {}\n", e.from, e.to, e.names.join(", ")))
        .collect();
    assert!(
        up.is_empty() && stale.is_empty(),
        "{}\n{} import(s) of what a parent defines (move it to a leaf both can use):\n{report}",
        stale.join("\n"),
        up.len()
    );
}

#[test]
fn no_source_file_is_over_700_lines() {
    let long = long_files(&Sources::from_disk(&root(), &["crates", "fuzz"]));
    let report: String = long
        .iter()
        .map(|(p, n)| format!("{p}: {n} lines\n"))
        .collect();
    assert!(
        long.is_empty(),
        "{} file(s) over {MAX_LINES} lines:\n{report}",
        long.len()
    );
}
