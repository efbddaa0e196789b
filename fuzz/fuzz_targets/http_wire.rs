//! Fuzz target: `rsrc_protocol::fuzzing::http_wire` (see its docs for the invariants it
//! checks): the Streamable HTTP header sentinel and the SSE parser. The same check
//! replays the corpus in `crates/rsrc-protocol/tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rsrc_protocol::fuzzing::http_wire(data);
});
