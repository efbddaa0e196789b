//! The repository's shape, checked on every test run: no import cycle between the source
//! files of any crate, and no source file over [`MAX_LINES`] lines.
//!
//! Why: a cycle between files means neither can be read, changed or tested without the
//! other, and it is how layers silently stop being layers (the core importing the
//! declarative layer that imports it back); a file over 700 lines mixes jobs that
//! deserve their own files. Both are cheap to keep out and expensive to take out later.
//!
//! How: every target of every crate under `crates/` (library, binaries, build script,
//! tests, benches, examples) is read with `syn` from its root through its `mod`
//! declarations (`modules.rs`); every path a file writes that names something of its own
//! crate — `use crate::…`, `use super::…`, `pub use` re-exports, and paths written
//! inline in code, types and macro calls — is resolved to the file that defines it
//! (`imports.rs`); the strongly connected components of that graph are the cycles
//! (`cycles.rs`). A parent declaring `mod child;` is not an import; a child using an item
//! its parent defines (`super::Item`) is. The line count covers every `.rs` file under
//! `crates/` and `fuzz/`.
//!
//! [`KNOWN_CYCLES`] and [`KNOWN_LONG`] list what the tree held when the check came in,
//! while it is being taken apart: anything else fails (a known cycle may come apart into
//! smaller ones, but may take in no other file), and so does an entry that no longer
//! occurs, so the lists can only shrink, to empty.

mod cycles;
mod imports;
mod modules;
mod selftest;
mod source;

use std::fmt;
use std::path::{Path, PathBuf};

use source::Sources;

/// The most lines a source file may have.
const MAX_LINES: usize = 700;

/// Import cycles still being taken apart, each by its files (sorted).
const KNOWN_CYCLES: &[&[&str]] = &[
    &[
        "crates/rsrc-cli/src/inspect/complete.rs",
        "crates/rsrc-cli/src/inspect/ls.rs",
        "crates/rsrc-cli/src/inspect/mod.rs",
        "crates/rsrc-cli/src/inspect/read.rs",
        "crates/rsrc-cli/src/inspect/stat.rs",
        "crates/rsrc-cli/src/inspect/target.rs",
        "crates/rsrc-cli/src/inspect/templates.rs",
        "crates/rsrc-cli/src/inspect/watch.rs",
    ],
    &[
        "crates/rsrc-protocol/src/jsonrpc/mod.rs",
        "crates/rsrc-protocol/src/jsonrpc/write.rs",
    ],
    &[
        "crates/rsrc-protocol/src/resources/contents.rs",
        "crates/rsrc-protocol/src/resources/listing.rs",
        "crates/rsrc-protocol/src/resources/messages.rs",
        "crates/rsrc-protocol/src/resources/mod.rs",
        "crates/rsrc-protocol/src/resources/template.rs",
    ],
    &[
        "crates/rsrc-providers/src/db/mod.rs",
        "crates/rsrc-providers/src/db/render.rs",
    ],
    &[
        "crates/rsrc-providers/src/db/postgres.rs",
        "crates/rsrc-providers/src/db/postgres/watch.rs",
    ],
    &[
        "crates/rsrc-providers/src/db/sqlite.rs",
        "crates/rsrc-providers/src/db/sqlite/database.rs",
    ],
    &[
        "crates/rsrc-providers/src/fs/mod.rs",
        "crates/rsrc-providers/src/fs/watch.rs",
    ],
    &[
        "crates/rsrc-providers/src/git/mod.rs",
        "crates/rsrc-providers/src/git/watch.rs",
    ],
    &[
        "crates/rsrc-providers/src/skills/index.rs",
        "crates/rsrc-providers/src/skills/mod.rs",
    ],
    &[
        "crates/rsrc-uri-template/src/expand.rs",
        "crates/rsrc-uri-template/src/fuzz.rs",
        "crates/rsrc-uri-template/src/lib.rs",
        "crates/rsrc-uri-template/src/matching/compile.rs",
        "crates/rsrc-uri-template/src/matching/mod.rs",
        "crates/rsrc-uri-template/src/matching/values.rs",
        "crates/rsrc-uri-template/src/parse.rs",
        "crates/rsrc-uri-template/src/specificity.rs",
    ],
    &[
        "crates/rsrc/src/bus.rs",
        "crates/rsrc/src/bus/redis/leases.rs",
        "crates/rsrc/src/bus/redis/members.rs",
        "crates/rsrc/src/bus/redis/mod.rs",
        "crates/rsrc/src/bus/redis/publish.rs",
        "crates/rsrc/src/bus/redis/resync.rs",
        "crates/rsrc/src/bus/redis/store/logs.rs",
        "crates/rsrc/src/bus/redis/store/mod.rs",
        "crates/rsrc/src/bus/redis/subscribe.rs",
        "crates/rsrc/src/bus/redis/wire.rs",
    ],
    &[
        "crates/rsrc/src/client/era.rs",
        "crates/rsrc/src/client/filter.rs",
        "crates/rsrc/src/client/http.rs",
        "crates/rsrc/src/client/io.rs",
        "crates/rsrc/src/client/mod.rs",
        "crates/rsrc/src/client/paging.rs",
        "crates/rsrc/src/client/process.rs",
        "crates/rsrc/src/client/watch.rs",
    ],
    &[
        "crates/rsrc/src/server/builder.rs",
        "crates/rsrc/src/server/dispatch/mod.rs",
        "crates/rsrc/src/server/dispatch/prepare.rs",
        "crates/rsrc/src/server/dispatch/run.rs",
        "crates/rsrc/src/server/handlers/complete.rs",
        "crates/rsrc/src/server/handlers/lifecycle.rs",
        "crates/rsrc/src/server/handlers/listing.rs",
        "crates/rsrc/src/server/handlers/mod.rs",
        "crates/rsrc/src/server/handlers/read.rs",
        "crates/rsrc/src/server/handlers/subscriptions.rs",
        "crates/rsrc/src/server/inside.rs",
        "crates/rsrc/src/server/mod.rs",
        "crates/rsrc/src/server/tools/definitions.rs",
        "crates/rsrc/src/server/tools/list.rs",
        "crates/rsrc/src/server/tools/mod.rs",
        "crates/rsrc/src/server/tools/read.rs",
        "crates/rsrc/src/server/tools/search.rs",
    ],
    &[
        "crates/rsrc/src/transport/http/admit.rs",
        "crates/rsrc/src/transport/http/legacy/mod.rs",
        "crates/rsrc/src/transport/http/legacy/records.rs",
        "crates/rsrc/src/transport/http/legacy/session.rs",
        "crates/rsrc/src/transport/http/legacy/streams.rs",
        "crates/rsrc/src/transport/http/legacy/table.rs",
        "crates/rsrc/src/transport/http/mod.rs",
        "crates/rsrc/src/transport/http/modern.rs",
        "crates/rsrc/src/transport/http/serve.rs",
    ],
    &[
        "crates/rsrc/src/transport/http/sse/log.rs",
        "crates/rsrc/src/transport/http/sse/mod.rs",
        "crates/rsrc/src/transport/http/sse/reader.rs",
    ],
    &[
        "crates/rsrc/src/transport/mod.rs",
        "crates/rsrc/src/transport/stdio.rs",
        "crates/rsrc/src/transport/stream.rs",
    ],
];

/// Source files still over [`MAX_LINES`].
const KNOWN_LONG: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The failures of a check against its allow-list: what is found that no entry covers,
/// and each entry that covers nothing found any more (to be taken out).
fn against_known<T: fmt::Debug>(
    found: &[T],
    known: &[T],
    covers: impl Fn(&T, &T) -> bool,
    list: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for f in found.iter().filter(|f| !known.iter().any(|k| covers(k, f))) {
        out.push(format!("not in {list}: {f:?}"));
    }
    for k in known.iter().filter(|k| !found.iter().any(|f| covers(k, f))) {
        out.push(format!(
            "no longer found: {k:?}: take it out of {list} (the list only shrinks)"
        ));
    }
    out
}

#[test]
fn no_source_file_imports_itself_through_other_files() {
    let sources = Sources::from_disk(&root(), &["crates"]);
    let graph = imports::graph(&sources)
        .unwrap_or_else(|e| panic!("the module tree could not be read:\n{}", e.join("\n")));
    let cycles = cycles::cycles(&graph);
    let report: String = cycles.iter().map(|c| format!("{c}\n")).collect();
    eprintln!("{} import cycle(s):\n{report}", cycles.len());
    let found: Vec<Vec<&str>> = cycles
        .iter()
        .map(|c| c.files.iter().map(String::as_str).collect())
        .collect();
    let known: Vec<Vec<&str>> = KNOWN_CYCLES.iter().map(|c| c.to_vec()).collect();
    // A known knot may come apart into smaller ones, but may take in no other file.
    let within = |k: &Vec<&str>, f: &Vec<&str>| f.iter().all(|file| k.contains(file));
    let failures = against_known(&found, &known, within, "KNOWN_CYCLES");
    assert!(
        failures.is_empty(),
        "{}\n\nevery cycle found:\n{report}",
        failures.join("\n")
    );
}

#[test]
fn no_source_file_is_over_700_lines() {
    let sources = Sources::from_disk(&root(), &["crates", "fuzz"]);
    let long: Vec<(String, usize)> = sources
        .files()
        .map(|(path, text)| (path.to_owned(), text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect();
    let report: String = long
        .iter()
        .map(|(p, n)| format!("{p}: {n} lines\n"))
        .collect();
    eprintln!("{} file(s) over {MAX_LINES} lines:\n{report}", long.len());
    let found: Vec<&str> = long.iter().map(|(p, _)| p.as_str()).collect();
    let failures = against_known(&found, KNOWN_LONG, |k, f| k == f, "KNOWN_LONG");
    assert!(
        failures.is_empty(),
        "{}\n\nevery file over {MAX_LINES} lines:\n{report}",
        failures.join("\n")
    );
}
