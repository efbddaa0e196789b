//! Ready-made providers for `rsrc`, one cargo feature each: `fs` (directories, with `pdf`
//! text extraction as a format alternative), `sqlite` and `postgres` (databases, in the
//! shared model of [`db`]), `git` (repositories) and `skills` (agent skills, SEP-2640).
//!
//! Every provider here keeps the same contract as any `rsrc::Provider`: it never serves
//! anything outside what it was pointed at, bounds every input, and reports failures as
//! `ResourceError`s, never panics. What several providers share — the refusal that looks
//! like not-found, source names, URI segments, content types, the safe opening of files,
//! the poll-and-digest watcher — is written once, in `kit`.
//!
//! `fs` and `skills` serve directories through capability handles with Unix file
//! semantics (non-blocking opens, byte file names) and exist on Unix only; watching a
//! directory for changes needs Linux (inotify). `sqlite`, `postgres` and `git` build
//! everywhere.

#[cfg(all(not(unix), any(feature = "fs", feature = "skills")))]
compile_error!("the `fs` and `skills` features of rsrc-providers need a Unix system");

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod db;
#[cfg(all(unix, feature = "fs"))]
pub mod fs;
#[cfg(feature = "git")]
pub mod git;
#[cfg(any(
    feature = "fs",
    feature = "sqlite",
    feature = "postgres",
    feature = "git",
    feature = "skills"
))]
mod kit;
#[cfg(any(
    feature = "sqlite",
    feature = "postgres",
    feature = "git",
    feature = "skills"
))]
mod poll;
#[cfg(all(unix, feature = "skills"))]
pub mod skills;
