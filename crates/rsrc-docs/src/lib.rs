//! The project's Markdown documents, kept from drifting away from the code.
//!
//! Every ```` ```rust ```` block of `README.md` and `docs/*.md` is a doctest of this crate
//! (included below, compiled by `cargo test --doc`, and run unless marked `no_run`), so a
//! snippet that stops compiling fails the tests. `tests/docs.rs` checks that every Markdown
//! document is included here, that no Rust block is left out with `ignore`, and that every
//! file path `docs/architecture.md` names exists.
//!
//! `tests/commands/` runs the example commands of `README.md`, `docs/rmcp.md`,
//! `docs/writing-resources.md` and `docs/providers.md` as written (each `cargo run …`, each
//! client command talking to a stdio server), and checks that no two examples of the
//! workspace share a name.
//!
//! This crate has no code of its own: its dependencies are the snippets' dependencies.

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub mod readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/writing-resources.md")]
pub mod writing_resources {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/converters.md")]
pub mod converters {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/architecture.md")]
pub mod architecture {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/deployment.md")]
pub mod deployment {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/operations.md")]
pub mod operations {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/performance.md")]
pub mod performance {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/security.md")]
pub mod security {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/ui.md")]
pub mod ui {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/rmcp.md")]
pub mod rmcp {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/providers.md")]
pub mod providers {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/spec-status.md")]
pub mod spec_status {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/benchmark.md")]
pub mod benchmark {}
