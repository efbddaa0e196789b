//! The skills provider's settings ([`SkillsConfig`]) and why it could not start
//! ([`SkillsError`]). Invariant: plain values with their defaults.

use std::path::PathBuf;
use std::time::Duration;

use rsrc::protocol::{CacheHint, CacheScope};

/// Settings of the skills provider.
#[derive(Debug, Clone)]
pub struct SkillsConfig {
    /// How often the directories are scanned for changes (default 2 s; `None`: never, and
    /// no subscriptions).
    pub poll_interval: Option<Duration>,
    /// Entries per `skills/list` page (default 100).
    pub page_size: usize,
    /// Caching hint for 2026-07-28 clients (default: immediately stale, private).
    pub cache: CacheHint,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            poll_interval: Some(Duration::from_secs(2)),
            page_size: 100,
            cache: CacheHint::new(0, CacheScope::Private),
        }
    }
}

/// Why the provider could not start.
#[derive(Debug)]
pub enum SkillsError {
    /// A directory could not be opened.
    Open(PathBuf, std::io::Error),
    /// A name is not a valid first URI segment, or two sources share it.
    BadName(String),
    /// Several directories need a name each.
    Unnamed,
}

impl std::fmt::Display for SkillsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkillsError::Open(p, e) => write!(f, "{}: {e}", p.display()),
            SkillsError::BadName(n) => write!(
                f,
                "{n:?} cannot name skills (lowercase letters, digits and inner hyphens; once each)"
            ),
            SkillsError::Unnamed => {
                f.write_str("several skills directories need names: NAME=skills:DIR")
            }
        }
    }
}

impl std::error::Error for SkillsError {}
