//! A source named on the command line: `DIR`, `sqlite:PATH`, `postgres://…`, `git:PATH`
//! or `skills:DIR`, each optionally `NAME=…`.
//!
//! Invariants: `NAME=` is split off only when the argument is not an existing path and
//! the part before `=` holds no `/` or `:`, so paths and URLs holding `=` stay whole; a
//! source made absolute keeps the form it was written in (a URL stays as it is).

use std::path::{Path, PathBuf};

use crate::config::{Location, SourceConfig, SourceOptions};

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
    use super::parse_source;
    use crate::config::Location;
    use std::path::PathBuf;

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
