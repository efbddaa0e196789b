//! The skills directories served, and the URI prefix their skills are served under.
//! Invariant: a directory is reached only through its capability handle, opened once
//! when the provider is built (`state.rs`).

use std::path::PathBuf;

use cap_std::fs::Dir;

/// The URI prefix of skills.
pub const PREFIX: &str = "skill://";

/// One skills directory.
pub(super) struct Root {
    /// The organisational prefix of its skills (`NAME=skills:DIR`), if any.
    pub(super) name: Option<String>,
    pub(super) path: PathBuf,
    pub(super) dir: Dir,
}
