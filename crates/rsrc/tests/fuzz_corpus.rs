//! Replays every file of the fuzz corpora (`fuzz/corpus/<target>/`) through the checks the
//! fuzz targets run (`rsrc::fuzzing`), so that what fuzzing found stays fixed without
//! cargo-fuzz or nightly. `.ci/run` fuzzes each target for a bounded time.

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        count += 1;
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            failures.push(path.display().to_string());
        }
    }
    assert!(count > 0, "the {target} corpus is empty");
    assert!(failures.is_empty(), "{target}: {failures:?}");
}

#[test]
fn the_jsonrpc_corpus_passes_the_engine() {
    replay("jsonrpc", rsrc::fuzzing::jsonrpc);
}

#[test]
fn the_lines_corpus_keeps_framing_bounded() {
    replay("lines", rsrc::fuzzing::lines);
}

#[test]
fn the_cursor_corpus_opens_or_is_refused() {
    replay("cursor", rsrc::fuzzing::cursor);
}

#[test]
fn the_uri_corpus_maps_or_is_refused() {
    replay("uri", rsrc::fuzzing::uri);
}

#[test]
fn the_list_filter_corpus_compiles_or_is_refused() {
    replay("list_filter", rsrc::fuzzing::list_filter);
}
