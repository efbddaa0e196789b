//! The SQLite backend's settings: [`SqliteConfig`] for the provider, [`SqliteSource`] for
//! one database to serve (a file or a script, with its own limits over the provider's).
//! Invariant: plain values with their defaults; nothing here opens a database
//! (`database.rs` does, when the provider is built).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rsrc::protocol::CacheHint;

/// Settings of the SQLite provider.
#[derive(Clone, Debug)]
pub struct SqliteConfig {
    /// Largest row (and value) read, in bytes (default 32 MiB).
    pub max_row_bytes: u64,
    /// Longest time one request may keep SQLite busy (default 5 s).
    pub statement_timeout: Duration,
    /// Longest wait for a writer's lock before answering that the database is busy
    /// (default 1 s).
    pub busy_timeout: Duration,
    /// Most bytes of child documents returned when a collection is read (default 1 MiB).
    pub collection_budget: u64,
    /// Most rows rendered when a table or view is read (default 256).
    pub collection_max_rows: usize,
    /// Whether reading a row also returns its CSV (default: yes).
    pub csv: bool,
    /// Most read-only connections per database, and so most requests served by SQLite at
    /// once per database; further requests wait for one (default 4). They stay open
    /// between requests.
    pub max_connections: usize,
    /// Whether databases are polled for changes, so that clients may subscribe and hear
    /// of list changes (default: yes).
    pub watch: bool,
    /// How often each database is polled (default 250 ms).
    pub poll_interval: Duration,
    /// Most subscribed URIs per database whose digests are kept (default 1024); beyond,
    /// every change updates them.
    pub max_watched: usize,
    /// A subscribed table or view with at most this many rows is digested whole
    /// (default 10,000).
    pub exact_digest_rows: u64,
    /// Most keys examined when completing a key no index range can find (default
    /// 100,000).
    pub completion_scan: usize,
    /// Caching hint for 2026-07-28 clients (default: the server's).
    pub cache: Option<CacheHint>,
}

impl Default for SqliteConfig {
    fn default() -> Self {
        SqliteConfig {
            max_row_bytes: 32 * 1024 * 1024,
            statement_timeout: Duration::from_secs(5),
            busy_timeout: Duration::from_secs(1),
            collection_budget: 1024 * 1024,
            collection_max_rows: 256,
            csv: true,
            max_connections: 4,
            watch: true,
            poll_interval: Duration::from_millis(250),
            max_watched: 1024,
            exact_digest_rows: 10_000,
            completion_scan: 100_000,
            cache: None,
        }
    }
}

/// One database to serve.
#[derive(Clone, Debug)]
pub struct SqliteSource {
    pub(super) name: String,
    pub(super) origin: Origin,
    /// This database's own settings, over the provider's.
    pub(super) overrides: Overrides,
}

/// Settings a database may set for itself, over the provider's.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Overrides {
    pub(super) max_row_bytes: Option<u64>,
    pub(super) statement_timeout: Option<Duration>,
    pub(super) poll_interval: Option<Duration>,
}

/// Where a database comes from.
#[derive(Clone, Debug)]
pub(super) enum Origin {
    File(PathBuf),
    Script(String),
}

impl SqliteSource {
    /// The database file at `path`, named after the file's stem.
    pub fn file(path: impl Into<PathBuf>) -> SqliteSource {
        let path = path.into();
        SqliteSource {
            name: default_name(&path),
            origin: Origin::File(path),
            overrides: Overrides::default(),
        }
    }

    /// The database file at `path`, under `name`.
    pub fn named_file(name: impl Into<String>, path: impl Into<PathBuf>) -> SqliteSource {
        SqliteSource {
            name: name.into(),
            origin: Origin::File(path.into()),
            overrides: Overrides::default(),
        }
    }

    /// An in-memory database built at start by running `sql` (which may hold several
    /// statements), under `name`. It lives as long as the provider and nothing of it
    /// touches the disk.
    pub fn script(name: impl Into<String>, sql: impl Into<String>) -> SqliteSource {
        SqliteSource {
            name: name.into(),
            origin: Origin::Script(sql.into()),
            overrides: Overrides::default(),
        }
    }

    /// This database's largest row, over [`SqliteConfig::max_row_bytes`].
    #[must_use]
    pub fn max_row_bytes(mut self, bytes: u64) -> SqliteSource {
        self.overrides.max_row_bytes = Some(bytes);
        self
    }

    /// This database's statement timeout, over [`SqliteConfig::statement_timeout`].
    #[must_use]
    pub fn statement_timeout(mut self, timeout: Duration) -> SqliteSource {
        self.overrides.statement_timeout = Some(timeout);
        self
    }

    /// How often this database is polled, over [`SqliteConfig::poll_interval`].
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> SqliteSource {
        self.overrides.poll_interval = Some(interval);
        self
    }

    /// The database's name in URIs.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A database name for `path`: the file's stem (`shop` for `shop.db`).
pub fn default_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "db".to_owned())
}
