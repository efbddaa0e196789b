//! Ready-made providers for `rsrc`, one cargo feature each: `fs` (directories, with `pdf`
//! text extraction as a format alternative), `sqlite` and `postgres` (databases, in the
//! shared model of [`db`]), `git` (repositories) and `skills` (agent skills, SEP-2640).
//!
//! Every provider here keeps the same contract as any `rsrc::Provider`: it never serves
//! anything outside what it was pointed at, bounds every input, and reports failures as
//! `ResourceError`s, never panics.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod db;
#[cfg(feature = "fs")]
pub mod fs;
#[cfg(feature = "git")]
pub mod git;
#[cfg(any(
    feature = "sqlite",
    feature = "postgres",
    feature = "git",
    feature = "skills"
))]
mod poll;
#[cfg(feature = "skills")]
pub mod skills;
