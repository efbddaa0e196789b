//! Fuzz target: `rsrc_providers::fs::fuzz_ignore_file` (an ignore file's bytes decoded,
//! parsed into rules and matched). The same check replays the corpus in
//! `crates/rsrc-providers/tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rsrc_providers::fs::fuzz_ignore_file(data);
});
