//! The source tree's shape, read from the code and checked by `tests/repository.rs` on
//! every test run:
//!
//! - **no import cycle** between the files of any crate: a cycle means neither file can
//!   be read, changed or tested without the other, and it is how layers silently stop
//!   being layers;
//! - **no arrow running back up**: no file imports an item that a module above its own
//!   defines (its parent `mod.rs`, `lib.rs`, or `foo.rs` over `foo/`), so every parent is
//!   a facade of `mod` declarations and re-exports, and a module's state lives in a leaf
//!   that its rules take, never in the handle that calls them. Tests (a `#[cfg(test)]`
//!   module, a `tests/` or `benches/` target) may reach up: they test what is above them;
//! - **no file over [`MAX_LINES`] lines** (`lines.rs`): such a file mixes jobs that
//!   deserve their own.
//!
//! How: every target of every crate (library, binaries, build script, tests, benches,
//! examples) is read with `syn` from its root through its `mod` declarations
//! (`modules.rs`); every path a file writes that names something of its own crate is
//! resolved to the file that defines it (`imports.rs`); the cycles are the strongly
//! connected components of that graph (`cycles.rs`). A parent declaring `mod child;` is no
//! import; a child naming an item its parent defines (`super::Item`) is.
//!
//! Invariant: the checks are strict. An edge may be exempted only by name, in the
//! repository test's allow-list with its reason; an exempted edge that no longer occurs
//! fails too, so the list only shrinks.

mod allow;
mod cycles;
mod imports;
mod lines;
mod modules;
#[cfg(test)]
mod selftest;
pub mod source;

pub use allow::{Allowed, stale};
pub use cycles::{Cycle, cycles};
pub use imports::{Edge, Graph, Imports, graph};
pub use lines::{MAX_LINES, long_files};
pub use source::Sources;
