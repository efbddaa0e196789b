//! Uses of `#[resource_handler]` that must not compile, each with the message and span in
//! `tests/ui/*.stderr` (regenerate with `TRYBUILD=overwrite`, then read every changed
//! file: the error must sit on the attribute and say how to fix it). Through `rsrc-rmcp`,
//! as users write it.

#[test]
fn misused_handlers_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
