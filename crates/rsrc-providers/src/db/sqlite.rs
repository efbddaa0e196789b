//! The SQLite provider: one or more SQLite databases served as `db://` resources, in the
//! layout of [`crate::db`] (`db://{db}`, `db://{db}/{table}`, `db://{db}/{table}/{pk}`,
//! `db://{db}/{table}/$schema`).
//!
//! Each database has a name (`NAME=sqlite:PATH` on the command line; by default the
//! file's stem), so one provider and one template, `db://{db}/{table}/{pk}`, cover all of
//! them.
//!
//! # What is served
//!
//! - **Relations**: every table, view and virtual table of the `main` schema, except
//!   SQLite's own (`sqlite_…`) and the shadow tables behind virtual tables.
//! - **Keys**: a table's primary key; for a table without one, its rowid (under the first
//!   of `rowid`, `_rowid_`, `oid` that no column shadows); a `WITHOUT ROWID` table always
//!   has its primary key. A primary-key value is bound by what its column can hold: a
//!   rowid, an `INTEGER PRIMARY KEY` or a STRICT table's `INTEGER` column takes only a
//!   canonical integer (`42`, not `042` or `4x`: anything else is a missing row); other
//!   columns take the segment as text, as a blob and, when it reads as one, as a number,
//!   compared under the column's own affinity and collation. If values that print alike
//!   (the integer 42 and the text `42` in an untyped column) are both keys, the URI reads
//!   the first in key order.
//! - **Views** have no key: a view's rows are addressed by their 1-based position when
//!   the view's rows are sorted by all their columns (`ORDER BY 1, 2, …`). This is
//!   deterministic for given data, but positions shift when the data changes, and reading
//!   position *n* sorts the view (views are meant to be small; the statement time limit
//!   bounds the rest). A table whose rowid is shadowed by columns named `rowid`, `_rowid_`
//!   and `oid` is addressed the same way.
//! - **NULL keys**: a rowid table's non-integer primary key may hold NULL (an old SQLite
//!   quirk); such rows have no address and are left out of listings and reads.
//!
//! # Listings and reads
//!
//! - The default listing (`resources/list` without `uri`) holds each database, each of its
//!   tables and views, and each one's `$schema` document: the catalog, never the rows
//!   (listing every row of every table would be unbounded).
//! - A database's listing holds its tables and views; a table's or view's listing holds
//!   its `$schema` document, then its rows in key order, keyset-paginated (a view's by
//!   position, counted with `LIMIT`/`OFFSET`). Row entries carry URI, name (the key as
//!   text), type and kind; their size is in `resources/metadata` and reads.
//! - Reading a row returns its JSON and, as a format alternative, its CSV. Reading a table
//!   or view returns its schema document and its first rows (JSON), whole documents only,
//!   within the collection budget; reading a database returns its relations' schema
//!   documents within the same budget.
//!
//! # Safety and limits
//!
//! Databases are opened read-only (`conn.rs`); identifiers come only from the catalog
//! (`catalog.rs`) and every value is bound. A value or row over `max_row_bytes` is
//! refused (`TooLarge`); a request that keeps SQLite busy past `statement_timeout` is
//! stopped; a database locked by a writer past `busy_timeout` answers an error saying
//! so. All SQLite work runs on blocking threads, never on the async runtime.
//!
//! # Changes
//!
//! A thread per database (`watch.rs`) polls `PRAGMA data_version` every `poll_interval`.
//! When another connection has committed, it publishes `list_changed` and an update of
//! each subscribed URI of that database whose digest changed: a row's or schema
//! document's digest is a hash of its JSON; a table's or view's is the hash of all its rows
//! when it has at most `exact_digest_rows` of them, else of its row count and first and
//! last keys (then a change inside a large table that keeps both goes unnoticed by the
//! table's subscribers, though not by its rows'); a database's is a hash of its catalog.
//! A schema change reloads the catalog (checked on every request with
//! `PRAGMA schema_version`, so answers never wait for the poll).

mod catalog;
mod complete;
mod conn;
mod database;
mod digest;
mod provider;
mod resources;
mod rows;
mod search;
mod values;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rsrc::ResourceError;
use rsrc::protocol::CacheHint;
use rusqlite::Connection;

use super::{Target, parse, row_template, schema_template};
use crate::kit::blocking;
use crate::kit::refusal::refused;
use crate::kit::source_name::is_segment_name;
use catalog::{Catalog, Relation};
use conn::{Budget, OpError};
use database::Database;

/// The names of the URI levels below a database: SQLite has tables only.
const LEVELS: [&str; 1] = ["table"];

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
    name: String,
    origin: Origin,
    /// This database's own settings, over the provider's.
    overrides: Overrides,
}

/// Settings a database may set for itself, over the provider's.
#[derive(Clone, Copy, Debug, Default)]
struct Overrides {
    max_row_bytes: Option<u64>,
    statement_timeout: Option<Duration>,
    poll_interval: Option<Duration>,
}

#[derive(Clone, Debug)]
enum Origin {
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

/// SQLite databases served as resources.
pub struct SqliteProvider {
    dbs: Vec<Arc<Database>>,
    config: SqliteConfig,
}

impl std::fmt::Debug for SqliteProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteProvider")
            .field(
                "databases",
                &self.dbs.iter().map(|d| &d.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl SqliteProvider {
    /// Serves `sources`. Each database is opened (read-only) and its catalog read now, so
    /// that a missing or unreadable file is an error at start.
    pub fn new(sources: Vec<SqliteSource>, config: SqliteConfig) -> Result<Self, SqliteError> {
        if sources.is_empty() {
            return Err(SqliteError::NoDatabase);
        }
        let mut dbs: Vec<Arc<Database>> = Vec::with_capacity(sources.len());
        for source in sources {
            if !is_segment_name(&source.name) || dbs.iter().any(|d| d.name == source.name) {
                return Err(SqliteError::BadName(source.name));
            }
            dbs.push(Arc::new(Database::open(source, &config)?));
        }
        Ok(SqliteProvider { dbs, config })
    }

    /// Serves one database file, named after its stem.
    pub fn open(path: impl Into<PathBuf>, config: SqliteConfig) -> Result<Self, SqliteError> {
        SqliteProvider::new(vec![SqliteSource::file(path)], config)
    }

    /// The names of the databases served.
    pub fn database_names(&self) -> Vec<&str> {
        self.dbs.iter().map(|d| d.name.as_str()).collect()
    }

    /// The row template, `db://{db}/{table}/{pk}`.
    pub fn row_template() -> String {
        row_template(&LEVELS)
    }

    /// The schema template, `db://{db}/{table}/$schema`.
    pub fn schema_template() -> String {
        schema_template(&LEVELS)
    }

    fn budget(&self) -> Arc<Budget> {
        Budget::new(self.config.statement_timeout)
    }

    fn database(&self, name: &str) -> Option<&Arc<Database>> {
        self.dbs.iter().find(|d| d.name == name)
    }

    /// The target of `uri` and its database, or not-found.
    fn resolve(&self, uri: &str) -> Result<(Target, Arc<Database>), ResourceError> {
        let target = parse(uri, LEVELS.len())
            .ok_or_else(|| refused(uri, "not a db:// URI of this layout"))?;
        let db = self
            .database(target.db())
            .ok_or_else(|| refused(uri, "no such database"))?;
        Ok((target, Arc::clone(db)))
    }

    /// Runs `f` on `db` on a blocking thread, once one of its connections is free, under a
    /// budget that dropping the returned future stops ([`crate::kit::blocking`]); failures
    /// are errors about `uri`.
    async fn blocking_on<T: Send + 'static>(
        &self,
        db: Arc<Database>,
        uri: &str,
        f: impl FnOnce(&Database, &Connection, &Catalog) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, ResourceError> {
        let limits = *db.pool.limits();
        // The semaphore is never closed.
        let permit = Arc::clone(&db.permits)
            .acquire_owned()
            .await
            .map_err(ResourceError::internal)?;
        let worker = Arc::clone(&db);
        let budget = Budget::new(db.settings.statement_timeout);
        let held = Arc::clone(&budget);
        blocking::run(budget, move |_| {
            // The statements' span, under the request's (`blocking::run` carries it here).
            let _span = rsrc::observe::child_span(|| {
                tracing::info_span!(
                    target: "rsrc::sqlite",
                    "sqlite",
                    otel.kind = "client",
                    db.system.name = "sqlite",
                    db.namespace = worker.name.as_str(),
                )
            })
            .entered();
            let out = worker.run(&held, |c, cat| f(&worker, c, cat));
            drop(permit);
            out
        })
        .await
        .map_err(|e| e.into_resource_error(uri, &limits))
    }
}

/// The relation a target names, or not-found.
fn relation<'c>(cat: &'c Catalog, path: &[String]) -> Result<&'c Arc<Relation>, OpError> {
    path.first()
        .and_then(|name| cat.get(name))
        .ok_or(OpError::NotFound)
}
