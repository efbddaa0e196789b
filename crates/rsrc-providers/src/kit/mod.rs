//! The toolkit shared by the providers: each rule that more than one provider keeps is
//! written here once, one file per rule, each compiled for the providers that use it.
//!
//! | piece | what it is | used by |
//! |---|---|---|
//! | [`refusal`] | the refusal that looks like not-found | all |
//! | [`blocking`] | work on a blocking thread, stopped when its request goes away | `fs`, `skills`, `sqlite`, `git` |
//! | [`source_name`] | the rule for source names | `fs`, `sqlite`, `postgres`, `git` |
//! | [`segment`] | URI segment encoding | all |
//! | [`content`] | MIME and text detection | `fs`, `git`, `skills` |
//! | [`rel_path`] | a path beneath a served directory, and its URI | `fs`, `skills` (Unix) |
//! | [`open`] | opening and reading one file beneath a root handle | `fs`, `skills` (Unix) |
//! | [`watch`] | the poll-and-digest watcher, its subscription table, and what a provider it watches tells the engine (it hears changes only for what is subscribed) | `sqlite`, `postgres`, `git` |
//! | [`armed`] | a subscription waits until its watcher sees every change | `fs`, `sqlite`, `postgres`, `git` |
//! | [`time`] | RFC 3339 timestamps, never a panic for an out-of-range time | `fs`, `git` |
//!
//! Two more shared pieces live beside their users: keyset paging over a sorted list is
//! the engine's (`rsrc::keyset`, also used by `ResourceSet`), and the database resource
//! builders are the database model's (`crate::db::resources`).
//!
//! Invariant: nothing here knows which provider calls it; a provider's own rules stay in
//! its module.

#[cfg(any(
    feature = "fs",
    feature = "sqlite",
    feature = "postgres",
    feature = "git"
))]
pub(crate) mod armed;
#[cfg(any(
    feature = "fs",
    feature = "sqlite",
    feature = "git",
    feature = "skills"
))]
pub(crate) mod blocking;
#[cfg(any(feature = "fs", feature = "git", feature = "skills"))]
pub(crate) mod content;
#[cfg(all(unix, any(feature = "fs", feature = "skills")))]
pub(crate) mod open;
pub(crate) mod refusal;
#[cfg(all(unix, any(feature = "fs", feature = "skills")))]
pub(crate) mod rel_path;
pub(crate) mod segment;
#[cfg(any(
    feature = "fs",
    feature = "sqlite",
    feature = "postgres",
    feature = "git"
))]
pub(crate) mod source_name;
#[cfg(any(feature = "fs", feature = "git"))]
pub(crate) mod time;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "git"))]
pub(crate) mod watch;
