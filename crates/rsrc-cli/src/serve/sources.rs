//! A source: where its resources come from, its own settings, the `[[sources]]` table it
//! is written as, and the argument that names it on the command line (`DIR`,
//! `sqlite:PATH`, `postgres://…`, `git:PATH` or `skills:DIR`, each optionally `NAME=…`).
//!
//! Invariants: a table names exactly one location and only the options its kind takes
//! (an error names the others); a source's paths are made absolute, relative to the file
//! it was written in; directories and SQLite files get their default names. On the
//! command line, `NAME=` is split off only when the argument is not an existing path and
//! the part before `=` holds no `/` or `:`, so paths and URLs holding `=` stay whole; a
//! source made absolute keeps the form it was written in (a URL stays as it is).

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

/// Splits `NAME=REST` when `arg` is not an existing path and the part before `=` is a
/// plain name (no `/` or `:`), so that paths and URLs holding `=` stay whole.
fn split_name(arg: &str) -> (Option<&str>, &str) {
    if !Path::new(arg).exists()
        && let Some((name, rest)) = arg.split_once('=')
        && !name.is_empty()
        && !name.contains(['/', ':'])
    {
        return (Some(name), rest);
    }
    (None, arg)
}

/// Parses one source argument (one arm per kind), with the top level's options.
pub(crate) fn parse_source(arg: &str) -> Result<SourceConfig, String> {
    let (name, spec) = split_name(arg);
    let at = if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        Location::Postgres(spec.to_owned())
    } else if let Some(path) = spec.strip_prefix("git:") {
        if path.is_empty() {
            return Err(format!("{arg}: no repository after \"git:\""));
        }
        Location::Git(PathBuf::from(path))
    } else if let Some(path) = spec.strip_prefix("skills:") {
        if path.is_empty() || !Path::new(path).is_dir() {
            return Err(format!("{arg}: no directory of skills after \"skills:\""));
        }
        Location::Skills(PathBuf::from(path))
    } else if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() {
            return Err(format!("{arg}: no database file after \"sqlite:\""));
        }
        Location::Sqlite(PathBuf::from(path))
    } else {
        if name.is_none() && !Path::new(spec).is_dir() {
            return Err(format!("{arg}: not a directory"));
        }
        Location::Directory(PathBuf::from(spec))
    };
    Ok(SourceConfig {
        name: name.map(str::to_owned),
        at,
        options: SourceOptions::default(),
    })
}

/// `arg` with its path made absolute (symbolic links resolved), in the same form: what a
/// host that launches `rsrc serve` from anywhere must be given. A URL stays as it is.
pub(crate) fn absolute_source(arg: &str) -> Result<String, String> {
    let (name, _) = split_name(arg);
    let named = name.map(|n| format!("{n}=")).unwrap_or_default();
    let absolute = |path: &Path| {
        let full = std::fs::canonicalize(path)
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| format!("{arg}: {e}"))?;
        full.into_os_string()
            .into_string()
            .map_err(|_| format!("{arg}: the path is not UTF-8"))
    };
    Ok(match parse_source(arg)?.at {
        Location::Postgres(url) => format!("{named}{url}"),
        Location::Git(path) => format!("{named}git:{}", absolute(&path)?),
        Location::Skills(path) => format!("{named}skills:{}", absolute(&path)?),
        Location::Sqlite(path) => format!("{named}sqlite:{}", absolute(&path)?),
        Location::Directory(path) => format!("{named}{}", absolute(&path)?),
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{Location, parse_source};

    #[test]
    fn sources_are_directories_or_named_databases() {
        let parsed = |arg: &str| parse_source(arg).map(|s| (s.name, s.at));
        assert_eq!(
            parsed("sqlite:data/shop.db"),
            Ok((None, Location::Sqlite(PathBuf::from("data/shop.db"))))
        );
        assert_eq!(
            parsed("sales=sqlite:/srv/x=y.db"),
            Ok((
                Some("sales".into()),
                Location::Sqlite(PathBuf::from("/srv/x=y.db"))
            ))
        );
        assert_eq!(
            parsed("sqlite:/srv/a=b.db"),
            Ok((None, Location::Sqlite(PathBuf::from("/srv/a=b.db"))))
        );
        assert_eq!(
            parsed("docs=/srv/docs"),
            Ok((
                Some("docs".into()),
                Location::Directory(PathBuf::from("/srv/docs"))
            ))
        );
        assert!(parse_source("sqlite:").is_err());
        assert!(parse_source("/definitely/not/here").is_err());
    }
}
