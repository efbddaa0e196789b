//! Fuzz target: `rsrc_redis::fuzzing::bus_message` (see its docs for the invariants it checks). The
//! same check replays the corpus in `crates/rsrc-redis/tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rsrc_redis::fuzzing::bus_message(data);
});
