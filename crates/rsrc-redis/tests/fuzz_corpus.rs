//! Replays the corpora of the fuzz targets `bus_message` and `session_record`
//! (`fuzz/corpus/<target>/`) through the checks they run (`rsrc_redis::fuzzing`, behind
//! the `fuzzing` feature), so that what fuzzing found stays fixed without cargo-fuzz or
//! nightly. `.ci/run` fuzzes each target for a bounded time.

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
fn the_bus_message_corpus_is_refused_or_round_trips() {
    replay("bus_message", rsrc_redis::fuzzing::bus_message);
}

#[test]
fn the_session_record_corpus_is_never_believed_without_its_tag() {
    replay("session_record", rsrc_redis::fuzzing::session_record);
}
