//! A source: where its resources come from, its own settings, and the `[[sources]]`
//! table it is written as.
//!
//! Invariants: a table names exactly one location and only the options its kind takes
//! (an error names the others); a source's paths are made absolute, relative to the file
//! it was written in; directories and SQLite files get their default names.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::values::{Dur, Size};

/// Where a source's resources come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A directory.
    Directory(PathBuf),
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection string.
    Postgres(String),
    /// A git repository.
    Git(PathBuf),
    /// A directory of agent skills.
    Skills(PathBuf),
}

impl Location {
    /// The key that names this kind of source in a `[[sources]]` table.
    fn key(&self) -> &'static str {
        match self {
            Location::Directory(_) => "path",
            Location::Sqlite(_) => "sqlite",
            Location::Postgres(_) => "postgres",
            Location::Git(_) => "git",
            Location::Skills(_) => "skills",
        }
    }

    /// The options a source of this kind takes.
    pub(super) fn options(&self) -> &'static [&'static str] {
        match self {
            Location::Directory(_) => &[
                "hidden",
                "ignore_files",
                "include",
                "exclude",
                "max_read",
                "tools",
            ],
            Location::Sqlite(_) => &["max_read", "db_timeout", "db_poll", "tools"],
            Location::Postgres(_) => &[
                "max_read",
                "db_timeout",
                "db_poll",
                "password_file",
                "tools",
            ],
            Location::Git(_) => &["max_read", "poll", "tools"],
            Location::Skills(_) => &["tools"],
        }
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        match self {
            Location::Directory(p)
            | Location::Sqlite(p)
            | Location::Git(p)
            | Location::Skills(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

/// A source's own settings; an absent one takes the top-level value.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SourceOptions {
    pub(crate) hidden: Option<bool>,
    pub(crate) ignore_files: Option<bool>,
    pub(crate) include: Option<Vec<String>>,
    pub(crate) exclude: Option<Vec<String>>,
    pub(crate) max_read: Option<Size>,
    pub(crate) db_timeout: Option<Dur>,
    pub(crate) db_poll: Option<Dur>,
    /// A git repository's ref polling interval.
    pub(crate) poll: Option<Dur>,
    /// A file holding a PostgreSQL password.
    pub(crate) password_file: Option<PathBuf>,
    /// Whether the source is offered through the tools (when they are on).
    pub(crate) tools: Option<bool>,
}

impl SourceOptions {
    /// The keys that are set.
    fn set(&self) -> impl Iterator<Item = &'static str> {
        [
            ("hidden", self.hidden.is_some()),
            ("ignore_files", self.ignore_files.is_some()),
            ("include", self.include.is_some()),
            ("exclude", self.exclude.is_some()),
            ("max_read", self.max_read.is_some()),
            ("db_timeout", self.db_timeout.is_some()),
            ("db_poll", self.db_poll.is_some()),
            ("poll", self.poll.is_some()),
            ("password_file", self.password_file.is_some()),
            ("tools", self.tools.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
    }
}

/// One source: a `[[sources]]` table, or a source named on the command line.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(try_from = "SourceTable", into = "SourceTable")]
pub(crate) struct SourceConfig {
    /// Its name in URIs (directories and SQLite files default to the file's name).
    pub(crate) name: Option<String>,
    pub(crate) at: Location,
    pub(crate) options: SourceOptions,
}

/// A `[[sources]]` table as written: the name, one location key and the options.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sqlite: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    git: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skills: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignore_files: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exclude: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_read: Option<Size>,
    #[serde(skip_serializing_if = "Option::is_none")]
    db_timeout: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    db_poll: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    password_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<bool>,
}

impl TryFrom<SourceTable> for SourceConfig {
    type Error = String;

    fn try_from(t: SourceTable) -> Result<Self, String> {
        let mut found = [
            t.path.map(Location::Directory),
            t.sqlite.map(Location::Sqlite),
            t.postgres.map(Location::Postgres),
            t.git.map(Location::Git),
            t.skills.map(Location::Skills),
        ]
        .into_iter()
        .flatten();
        let at = found
            .next()
            .ok_or("a source needs one of `path`, `sqlite`, `postgres`, `git` or `skills`")?;
        if let Some(other) = found.next() {
            return Err(format!(
                "a source has one location: `{}` and `{}` are both set",
                at.key(),
                other.key()
            ));
        }
        let options = SourceOptions {
            hidden: t.hidden,
            ignore_files: t.ignore_files,
            include: t.include,
            exclude: t.exclude,
            max_read: t.max_read,
            db_timeout: t.db_timeout,
            db_poll: t.db_poll,
            poll: t.poll,
            password_file: t.password_file,
            tools: t.tools,
        };
        if let Some(key) = options.set().find(|k| !at.options().contains(k)) {
            return Err(format!(
                "`{key}` does not apply to a `{}` source (it takes {})",
                at.key(),
                at.options()
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(SourceConfig {
            name: t.name,
            at,
            options,
        })
    }
}

impl From<SourceConfig> for SourceTable {
    fn from(s: SourceConfig) -> Self {
        let o = s.options;
        let mut t = SourceTable {
            name: s.name,
            path: None,
            sqlite: None,
            postgres: None,
            git: None,
            skills: None,
            hidden: o.hidden,
            ignore_files: o.ignore_files,
            include: o.include,
            exclude: o.exclude,
            max_read: o.max_read,
            db_timeout: o.db_timeout,
            db_poll: o.db_poll,
            poll: o.poll,
            password_file: o.password_file,
            tools: o.tools,
        };
        match s.at {
            Location::Directory(p) => t.path = Some(p),
            Location::Sqlite(p) => t.sqlite = Some(p),
            Location::Postgres(url) => t.postgres = Some(url),
            Location::Git(p) => t.git = Some(p),
            Location::Skills(p) => t.skills = Some(p),
        }
        t
    }
}

impl SourceConfig {
    /// Makes the location's path absolute (relative to `base`, then to the working
    /// directory) and fills in the default name of directories and SQLite files.
    pub(super) fn absolutize(&mut self, base: &Path) -> Result<(), String> {
        if let Some(path) = self.at.path_mut() {
            *path = absolute(&base.join(&*path))?;
        }
        if let Some(path) = &mut self.options.password_file {
            *path = absolute(&base.join(&*path))?;
        }
        if self.name.is_none() {
            self.name = match &self.at {
                Location::Directory(p) => Some(rsrc_providers::fs::default_root_name(p)),
                Location::Sqlite(p) => Some(rsrc_providers::db::sqlite::default_name(p)),
                _ => None,
            };
        }
        Ok(())
    }
}

pub(super) fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}
