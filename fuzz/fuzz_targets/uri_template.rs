//! Fuzz target: the input is a template, a newline, and a URI. It exercises parse, expand
//! (with fixed sample values) and match, and checks the invariants listed on
//! `rsrc_uri_template::fuzz_check` (no panic; a matched URI's captures expand to a URI
//! that matches again). The same check replays the corpus in `tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rsrc_uri_template::fuzz_check(data);
});
