//! Fuzz target: `rsrc_http::fuzzing::http_headers` (see its docs for the invariants it
//! checks). The same check replays the corpus in `crates/rsrc-http/tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rsrc_http::fuzzing::http_headers(data);
});
