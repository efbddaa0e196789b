//! [`FsError`]: why a filesystem provider could not be built.
//!
//! Invariant: each variant names what was wrong (the directory, the name, the glob), so
//! the message alone tells the operator what to change.

use std::io;
use std::path::PathBuf;

/// Why a filesystem provider could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum FsError {
    /// A root could not be opened.
    Open(PathBuf, io::Error),
    /// A root name is empty, `.` or `..`, holds `/` or NUL, or is used twice.
    BadName(String),
    /// No root was given.
    NoRoot,
    /// An include or exclude glob is invalid.
    BadGlob(String),
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsError::Open(p, e) => write!(f, "cannot open the directory {}: {e}", p.display()),
            FsError::BadName(n) => write!(f, "invalid or duplicate root name {n:?}"),
            FsError::NoRoot => f.write_str("no directory to serve"),
            FsError::BadGlob(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for FsError {}
