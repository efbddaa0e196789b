//! Replays every file of the fuzz corpus (`fuzz/corpus/uri_template/`) through the fuzz
//! target's check, so the corpus is tested without nightly or cargo-fuzz.

use rsrc_uri_template::fuzz_check;

#[test]
fn replay_fuzz_corpus() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/uri_template"
    );
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.expect("directory entry").path();
        if !path.is_file() {
            continue;
        }
        let data = std::fs::read(&path).expect("readable corpus file");
        if let Err(e) = std::panic::catch_unwind(|| fuzz_check(&data)) {
            panic!("{}: {:?}", path.display(), e.downcast_ref::<String>());
        }
        count += 1;
    }
    assert!(count >= 20, "only {count} corpus files in {dir}");
}
