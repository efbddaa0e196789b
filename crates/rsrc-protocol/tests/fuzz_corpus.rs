//! Replays every file of the `http_wire` fuzz corpus (`fuzz/corpus/http_wire/`) through
//! the checks the fuzz target runs (`rsrc_protocol::fuzzing`), so that what fuzzing found
//! stays fixed without cargo-fuzz or nightly.

use std::path::Path;

#[test]
fn the_http_wire_corpus_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/http_wire");
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        count += 1;
        if std::panic::catch_unwind(|| rsrc_protocol::fuzzing::http_wire(&data)).is_err() {
            failures.push(path.display().to_string());
        }
    }
    assert!(count > 0, "the http_wire corpus is empty");
    assert!(failures.is_empty(), "{failures:?}");
}
