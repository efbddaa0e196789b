//! Replays the ignore-file fuzz corpus (`fuzz/corpus/ignore_file/`) through the fuzz
//! target's check, so what fuzzing found stays fixed without cargo-fuzz.

use std::path::Path;

#[test]
fn the_ignore_file_corpus_parses_without_panicking() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/ignore_file");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        count += 1;
        assert!(
            std::panic::catch_unwind(|| rsrc_providers::fs::fuzz_ignore_file(&data)).is_ok(),
            "{}",
            path.display()
        );
    }
    assert!(count > 0, "the corpus is empty");
}
