//! Agent skills served over MCP (SEP-2640): every subdirectory of a skills directory that
//! holds a `SKILL.md` with YAML frontmatter is a skill, each of its files a resource
//! `skill://<skill-path>/<file>`, each of its directories a directory resource; the
//! extension's `skills/list` and `skills/get` give each skill's entry (its frontmatter and
//! every file with a `sha256:` digest and size), and `resources/directory/read` lists a
//! directory's children.
//!
//! Invariants:
//! - The index is one immutable snapshot, rebuilt off the async threads and swapped whole:
//!   an entry, the listing and the files served always describe the same scan.
//! - Only regular, non-hidden files inside a skill directory are served; symbolic links
//!   are never followed, and files are opened through the root's capability handle, as
//!   the filesystem provider does; a large file is read on a blocking thread that stops
//!   when its request goes away (`kit::open::read_file`).
//! - A directory that breaks the naming rules or the limits (512 files, 16 MiB) is not
//!   served at all, with a warning naming the reason: never a partial skill.
//! - A changed file changes its digest in the next snapshot and notifies its subscribers;
//!   a skill or file that appears or goes notifies `list_changed`.
//!
//! # Layout
//!
//! This file is a facade. `provider.rs` is the provider, the handle that calls down;
//! `state.rs` what it serves (the directories, the settings, the index of the last
//! scan); `config.rs` the settings and the start error; `roots.rs` the directories and
//! the URI prefix. The rules take the state: `extension.rs` the extension's
//! `skills/list` and `skills/get`, `watch.rs` the rescans and their notifications,
//! `resources.rs` how an indexed file or directory shows as a resource; beneath them
//! `index.rs` (one scan and the differences between two) and `manifest.rs` (a skill's
//! `SKILL.md` and the limits).

mod config;
mod extension;
mod index;
mod manifest;
mod provider;
mod resources;
mod roots;
mod state;
mod watch;

pub use config::{SkillsConfig, SkillsError};
pub use extension::EXTENSION;
pub use manifest::{MAX_BYTES, MAX_FILES};
pub use provider::SkillsProvider;
pub use roots::PREFIX;
