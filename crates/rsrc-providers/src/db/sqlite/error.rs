//! Why a SQLite provider could not be built. Invariant: each variant names the database
//! (its file or its name) and what SQLite said.

use std::path::PathBuf;

/// Why a SQLite provider could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum SqliteError {
    /// A database could not be opened or read.
    Open {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        message: String,
    },
    /// A database script failed.
    Script {
        /// The database's name.
        name: String,
        /// What SQLite said.
        message: String,
    },
    /// A name is empty, `.` or `..`, holds `/` or NUL, or is used twice.
    BadName(String),
    /// No database was given.
    NoDatabase,
}

impl std::fmt::Display for SqliteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SqliteError::Open { path, message } => write!(
                f,
                "cannot open the SQLite database {}: {message}",
                path.display()
            ),
            SqliteError::Script { name, message } => {
                write!(f, "cannot build the SQLite database {name}: {message}")
            }
            SqliteError::BadName(n) => write!(f, "invalid or duplicate database name {n:?}"),
            SqliteError::NoDatabase => f.write_str("no SQLite database to serve"),
        }
    }
}

impl std::error::Error for SqliteError {}
