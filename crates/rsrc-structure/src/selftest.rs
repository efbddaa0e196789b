//! The checker itself, on small crates written in memory: what it must find, and what it
//! must not, so that the checks on the repository cannot pass by finding nothing.

use crate::allow::{Allowed, stale};
use crate::cycles::{Cycle, cycles};
use crate::imports::{Graph, Imports, graph};
use crate::source::Sources;

/// The imports of one crate `c` made of `files` (paths under `c/`).
fn imports_of(files: &[(&str, &str)]) -> Imports {
    let files: Vec<(String, &str)> = files.iter().map(|(p, t)| (format!("c/{p}"), *t)).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    graph(&Sources::from_files(&["c"], &files)).unwrap()
}

/// The import graph of one crate `c` made of `files` (paths under `c/`).
fn graph_of(files: &[(&str, &str)]) -> Graph {
    imports_of(files).graph
}

/// The upward imports of one crate `c` made of `files`, as `from -> to` (under `c/`).
fn upward_of(files: &[(&str, &str)]) -> Vec<String> {
    Imports::edges(&imports_of(files).upward)
        .into_iter()
        .map(|e| format!("{} -> {}", &e.from[2..], &e.to[2..]))
        .collect()
}

fn cycles_of(files: &[(&str, &str)]) -> Vec<Cycle> {
    cycles(&graph_of(files))
}

/// Whether `from` imports `to` (paths under `c/`).
fn imports(graph: &Graph, from: &str, to: &str) -> bool {
    graph
        .get(&format!("c/{from}"))
        .is_some_and(|t| t.contains_key(&format!("c/{to}")))
}

#[test]
fn a_two_file_cycle_is_found_and_told_as_a_chain() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "src/b.rs",
            "pub struct B;\npub fn f() -> crate::a::A { todo!() }\n",
        ),
    ]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].files, ["c/src/a.rs", "c/src/b.rs"]);
    assert_eq!(
        found[0].to_string().lines().next().unwrap(),
        "c/src/a.rs -> c/src/b.rs -> c/src/a.rs"
    );
    assert!(found[0].to_string().contains("c/src/a.rs -> c/src/b.rs: B"));
}

#[test]
fn a_parent_declaring_its_child_is_not_a_cycle() {
    let files = [
        ("src/lib.rs", "mod p;\n"),
        ("src/p/mod.rs", "mod c;\npub(crate) struct P;\n"),
        ("src/p/c.rs", "use super::P;\npub(super) fn g(_: &P) {}\n"),
    ];
    let g = graph_of(&files);
    assert!(imports(&g, "src/p/c.rs", "src/p/mod.rs"));
    assert!(!imports(&g, "src/p/mod.rs", "src/p/c.rs"), "{g:?}");
    assert!(cycles(&g).is_empty());
}

#[test]
fn a_super_path_to_an_item_of_the_parent_is_an_import_of_the_parent() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod p;\n"),
        ("src/p.rs", "mod c;\npub struct P;\nfn f() { c::g() }\n"),
        ("src/p/c.rs", "pub fn g() { let _ = super::P; }\n"),
    ]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].files, ["c/src/p.rs", "c/src/p/c.rs"]);
}

#[test]
fn paths_inside_function_bodies_macro_calls_and_nested_uses_are_imports() {
    let g = graph_of(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod d;\nmod e;\n"),
        ("src/a.rs", "fn f() { let _ = crate::b::N + 1; }\n"),
        (
            "src/b.rs",
            "pub const N: u8 = 1;\nfn f() { println!(\"{}\", crate::d::M); }\n",
        ),
        (
            "src/d.rs",
            "pub const M: u8 = 1;\nfn f() { use crate::e::K; let _ = K; }\n",
        ),
        (
            "src/e.rs",
            "pub const K: u8 = 1;\nmacro_rules! m { () => { $crate::a::X } }\n",
        ),
    ]);
    assert!(imports(&g, "src/a.rs", "src/b.rs"));
    assert!(imports(&g, "src/b.rs", "src/d.rs"));
    assert!(imports(&g, "src/d.rs", "src/e.rs"));
    assert!(
        !imports(&g, "src/e.rs", "src/a.rs"),
        "`$crate` in a macro is not resolved here"
    );
}

#[test]
fn a_re_export_is_followed_to_the_file_that_defines_the_item() {
    let g = graph_of(&[
        (
            "src/lib.rs",
            "mod a;\nmod b;\npub use a::A;\npub use std::fmt::Result;\n",
        ),
        ("src/a.rs", "pub struct A;\n"),
        (
            "src/b.rs",
            "use crate::{A, Result};\nfn f(_: A) -> Result { Ok(()) }\n",
        ),
    ]);
    assert!(
        imports(&g, "src/lib.rs", "src/a.rs"),
        "a `pub use` is an import"
    );
    assert!(imports(&g, "src/b.rs", "src/a.rs"));
    assert!(
        !imports(&g, "src/b.rs", "src/lib.rs"),
        "neither `A` nor std's `Result` is defined in lib.rs"
    );
}

#[test]
fn names_in_scope_visibilities_and_globs_resolve_as_rustc_resolves_them() {
    let g = graph_of(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod x;\n"),
        // `pub(in crate::b)` names no dependency; `b::B` is `crate::b::B` through `use`.
        (
            "src/a.rs",
            "use crate::b;\npub(in crate::b) fn f() -> b::B { b::B }\n",
        ),
        ("src/b.rs", "pub struct B;\n"),
        // A glob brings `B` in scope; `self::inner` is an inline module of this file.
        (
            "src/x.rs",
            "use crate::b::*;\nmod inner { pub fn g() -> super::B { super::B } }\nfn h() -> B { self::inner::g() }\n",
        ),
    ]);
    assert!(imports(&g, "src/a.rs", "src/b.rs"));
    assert!(imports(&g, "src/x.rs", "src/b.rs"));
    assert_eq!(g.len(), 2, "{g:?}");
}

#[test]
fn modules_are_found_where_rustc_finds_them() {
    let found = cycles_of(&[
        (
            "src/main.rs",
            "#[path = \"other/place.rs\"]\nmod moved;\nmod deep;\n",
        ),
        ("src/other/place.rs", "mod sub;\n"),
        (
            "src/other/sub.rs",
            "pub fn f() { crate::deep::inner::g() }\n",
        ),
        ("src/deep/mod.rs", "pub mod inner;\n"),
        (
            "src/deep/inner.rs",
            "pub fn g() { crate::moved::sub::f() }\n",
        ),
        (
            "tests/t/main.rs",
            "#[path = \"../common/mod.rs\"]\nmod common;\n",
        ),
        (
            "tests/common/mod.rs",
            "mod one;\nuse one::X;\npub struct Y;\n",
        ),
        ("tests/common/one.rs", "pub struct X(super::Y);\n"),
    ]);
    let files: Vec<Vec<String>> = found.into_iter().map(|c| c.files).collect();
    assert_eq!(
        files,
        [
            ["c/src/deep/inner.rs", "c/src/other/sub.rs"],
            ["c/tests/common/mod.rs", "c/tests/common/one.rs"]
        ]
    );
}

#[test]
fn a_missing_module_file_or_a_file_that_does_not_parse_is_an_error() {
    let sources = Sources::from_files(
        &["c"],
        &[
            ("c/src/lib.rs", "mod gone;\nmod broken;\n"),
            ("c/src/broken.rs", "fn f( {\n"),
        ],
    );
    let errors = graph(&sources).unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("c/src/broken.rs does not parse: "),
        "{errors:?}"
    );
    assert!(errors[1].contains("`mod gone;` has neither c/src/gone.rs nor c/src/gone/mod.rs"));
}

#[test]
fn a_longer_cycle_is_told_through_every_file() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        (
            "src/a.rs",
            "use crate::b::B;\nuse crate::d::D;\npub struct A;\n",
        ),
        ("src/b.rs", "use crate::a::A;\npub struct B;\n"),
        ("src/c.rs", "use crate::a::A;\npub struct C;\n"),
        ("src/d.rs", "use crate::c::C;\npub struct D;\n"),
    ]);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].chain.join(" -> "),
        "c/src/a.rs -> c/src/b.rs -> c/src/a.rs -> c/src/d.rs -> c/src/c.rs -> c/src/a.rs"
    );
    assert_eq!(found[0].ties.len(), 5);
}

#[test]
fn a_child_naming_what_its_parent_defines_runs_up_and_a_re_export_does_not() {
    let up = upward_of(&[
        (
            "src/lib.rs",
            "mod p;\nmod leaf;\npub use leaf::L;\npub struct Root;\n",
        ),
        ("src/leaf.rs", "pub struct L;\n"),
        ("src/p/mod.rs", "mod c;\nmod s;\npub(crate) struct P;\n"),
        // Up to the parent, and to the crate's root; through the root's re-export, not.
        (
            "src/p/c.rs",
            "use super::P;\nuse crate::{L, Root};\npub fn g(_: &P, _: L, _: Root) {}\n",
        ),
        // A sibling is no arrow up.
        (
            "src/p/s.rs",
            "pub fn h() { super::c::g(todo!(), todo!(), todo!()) }\n",
        ),
    ]);
    assert_eq!(
        up,
        ["src/p/c.rs -> src/lib.rs", "src/p/c.rs -> src/p/mod.rs"]
    );
}

#[test]
fn tests_may_reach_up() {
    let up = upward_of(&[
        ("src/lib.rs", "mod p;\n"),
        (
            "src/p.rs",
            "#[cfg(test)]\nmod tests;\npub(crate) fn f() {}\n",
        ),
        (
            "src/p/tests.rs",
            "mod deeper;\n#[test]\nfn t() { super::f() }\n",
        ),
        ("src/p/tests/deeper.rs", "fn u() { crate::p::f() }\n"),
        ("tests/it/main.rs", "mod helper;\npub fn shared() {}\n"),
        ("tests/it/helper.rs", "fn v() { super::shared() }\n"),
    ]);
    assert!(up.is_empty(), "{up:?}");
}

#[test]
fn an_allowed_edge_is_taken_out_and_one_that_no_longer_occurs_fails() {
    let files = [
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "src/b.rs",
            "pub struct B;\npub fn f() -> crate::a::A { todo!() }\n",
        ),
    ];
    let allowed = [
        Allowed {
            from: "c/src/b.rs",
            to: "c/src/a.rs",
            why: "a test",
        },
        Allowed {
            from: "c/src/a.rs",
            to: "c/src/lib.rs",
            why: "a test",
        },
    ];
    let mut imports = imports_of(&files);
    let failures = stale(&allowed, &mut imports);
    assert!(cycles(&imports.graph).is_empty());
    assert_eq!(
        failures,
        ["allowed import no longer found: c/src/a.rs -> c/src/lib.rs: take it out of the list"]
    );
}
