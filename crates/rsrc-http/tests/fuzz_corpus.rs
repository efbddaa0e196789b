//! Replays every file of the `http_headers` fuzz corpus (`fuzz/corpus/http_headers/`)
//! through the checks the fuzz target runs (`rsrc_http::fuzzing`), so that what fuzzing
//! found stays fixed without cargo-fuzz or nightly.

use std::path::Path;

#[test]
fn the_http_headers_corpus_is_checked() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/http_headers");
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        count += 1;
        if std::panic::catch_unwind(|| rsrc_http::fuzzing::http_headers(&data)).is_err() {
            failures.push(path.display().to_string());
        }
    }
    assert!(count > 0, "the http_headers corpus is empty");
    assert!(failures.is_empty(), "{failures:?}");
}
