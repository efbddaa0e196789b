//! Declarations the `#[resources]` macro must refuse at compile time, each with the
//! message and span in `tests/ui/*.stderr` (regenerate with `TRYBUILD=overwrite`, then
//! read every changed file: the span must point at the culprit). They live here rather
//! than in `rsrc` so that trybuild's project compiles `rsrc` with the `macros` feature
//! alone, not with every feature the workspace's tests turn on.

#[test]
fn invalid_declarations_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
