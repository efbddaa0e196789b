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
mod conn;
mod ops;
mod resources;
mod search;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rsrc::protocol::{
    CacheHint, Completion, Resource, ResourceCapabilities, ResourceContents, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Listed, Page, Provider, ProviderCapabilities,
    ReadOutput, RequestContext, ResourceError, SearchRequest,
};
use rusqlite::Connection;
use tokio::sync::Semaphore;

use super::{
    JSON_MIME_TYPE, Target, database_uri, decode_key_position, encode_key_position, key_name,
    parse, row_template, row_uri, schema_json, schema_template,
};
use catalog::{Catalog, Relation};
use conn::{Budget, Limits, Location, OpError, Pool, StopOnDrop, lock};
use resources::{
    database_resource, list_default, relation_resource, row_contents, row_resource,
    schema_contents, schema_documents, schema_resource,
};
use watch::WatchSettings;

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
    own: Own,
}

/// Settings a database may set for itself.
#[derive(Clone, Copy, Debug, Default)]
struct Own {
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
            own: Own::default(),
        }
    }

    /// The database file at `path`, under `name`.
    pub fn named_file(name: impl Into<String>, path: impl Into<PathBuf>) -> SqliteSource {
        SqliteSource {
            name: name.into(),
            origin: Origin::File(path.into()),
            own: Own::default(),
        }
    }

    /// An in-memory database built at start by running `sql` (which may hold several
    /// statements), under `name`. It lives as long as the provider and nothing of it
    /// touches the disk.
    pub fn script(name: impl Into<String>, sql: impl Into<String>) -> SqliteSource {
        SqliteSource {
            name: name.into(),
            origin: Origin::Script(sql.into()),
            own: Own::default(),
        }
    }

    /// This database's largest row, over [`SqliteConfig::max_row_bytes`].
    #[must_use]
    pub fn max_row_bytes(mut self, bytes: u64) -> SqliteSource {
        self.own.max_row_bytes = Some(bytes);
        self
    }

    /// This database's statement timeout, over [`SqliteConfig::statement_timeout`].
    #[must_use]
    pub fn statement_timeout(mut self, timeout: Duration) -> SqliteSource {
        self.own.statement_timeout = Some(timeout);
        self
    }

    /// How often this database is polled, over [`SqliteConfig::poll_interval`].
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> SqliteSource {
        self.own.poll_interval = Some(interval);
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
    /// A name is empty, holds `/` or NUL, or is used twice.
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

/// This database's settings: its own where it sets them, else the provider's.
#[derive(Clone, Copy, Debug)]
struct Settings {
    max_row_bytes: u64,
    statement_timeout: Duration,
    exact_digest_rows: u64,
    poll_interval: Duration,
}

/// One served database.
pub(super) struct Database {
    name: String,
    /// `db://{name}`.
    uri: String,
    pool: Pool,
    /// One per connection: requests wait here, not on blocking threads.
    permits: Arc<Semaphore>,
    catalog: RwLock<Arc<Catalog>>,
    /// Subscribed URIs and their last digests.
    watched: Mutex<HashMap<String, u64>>,
    settings: Settings,
    /// The read-write connection that keeps an in-memory database alive.
    _anchor: Option<Mutex<Connection>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '\0'])
}

/// Distinguishes the in-memory databases of one process.
static MEMORY_DATABASES: AtomicU64 = AtomicU64::new(0);

impl Database {
    fn open(source: SqliteSource, config: &SqliteConfig) -> Result<Database, SqliteError> {
        let settings = Settings {
            max_row_bytes: source.own.max_row_bytes.unwrap_or(config.max_row_bytes),
            statement_timeout: source
                .own
                .statement_timeout
                .unwrap_or(config.statement_timeout),
            exact_digest_rows: config.exact_digest_rows,
            poll_interval: source.own.poll_interval.unwrap_or(config.poll_interval),
        };
        let limits = Limits {
            statement_timeout: settings.statement_timeout,
            busy_timeout: config.busy_timeout,
            max_row_bytes: settings.max_row_bytes,
        };
        let (location, anchor) = match source.origin {
            Origin::File(path) => {
                let failed = |message: String| SqliteError::Open {
                    path: path.clone(),
                    message,
                };
                match std::fs::metadata(&path) {
                    Ok(md) if md.is_file() => {}
                    Ok(_) => return Err(failed("not a regular file".into())),
                    Err(e) => return Err(failed(e.to_string())),
                }
                (Location::File(path), None)
            }
            Origin::Script(sql) => {
                let id = MEMORY_DATABASES.fetch_add(1, Ordering::Relaxed);
                let name = format!("rsrc-{}-{id}", std::process::id());
                let anchor = conn::create_memory(&name, &sql).map_err(|e| SqliteError::Script {
                    name: source.name.clone(),
                    message: e.to_string(),
                })?;
                (Location::Memory(name), Some(Mutex::new(anchor)))
            }
        };
        let failed = |e: &dyn std::fmt::Display| SqliteError::Open {
            path: PathBuf::from(location.display()),
            message: e.to_string(),
        };
        let pool = Pool::new(location.clone(), limits, config.max_connections.max(1));
        let first = pool.get().map_err(|e| failed(&e))?;
        let catalog = catalog::load(&first.conn).map_err(|e| failed(&e))?;
        pool.put(first);
        Ok(Database {
            uri: database_uri(&source.name),
            name: source.name,
            pool,
            permits: Arc::new(Semaphore::new(config.max_connections.max(1))),
            catalog: RwLock::new(Arc::new(catalog)),
            watched: Mutex::new(HashMap::new()),
            settings,
            _anchor: anchor,
        })
    }

    /// Runs `f` on a pooled connection under `budget`, with the catalog as of now.
    fn run<T>(
        &self,
        budget: &Arc<Budget>,
        f: impl FnOnce(&Connection, &Arc<Catalog>) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let conn = self.pool.get()?;
        let out = conn.with_budget(budget, |c| {
            // One read transaction: one lock of the file, and the catalog check and the
            // work see the same snapshot.
            c.prepare_cached("BEGIN")?.execute([])?;
            let out = self.fresh_catalog(c).and_then(|catalog| f(c, &catalog));
            if !c.is_autocommit()
                && c.prepare_cached("COMMIT")
                    .and_then(|mut s| s.execute([]))
                    .is_err()
            {
                let _ = c.execute_batch("ROLLBACK");
            }
            out
        });
        // A connection still in a transaction (it could not be ended) is not reused.
        if conn.conn.is_autocommit() {
            self.pool.put(conn);
        }
        out
    }

    /// The catalog, reloaded first if the schema changed.
    fn fresh_catalog(&self, conn: &Connection) -> Result<Arc<Catalog>, OpError> {
        let version = catalog::schema_version(conn)?;
        {
            let current = self.catalog.read().unwrap_or_else(PoisonError::into_inner);
            if current.schema_version == version {
                return Ok(Arc::clone(&current));
            }
        }
        let fresh = Arc::new(catalog::load(conn)?);
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&fresh);
        Ok(fresh)
    }

    /// The digest of what `uri` names now ([`ops::MISSING`] if nothing).
    fn digest(&self, conn: &Connection, cat: &Catalog, uri: &str) -> Result<u64, OpError> {
        let Some(target) = parse(uri, LEVELS.len()) else {
            return Ok(ops::MISSING);
        };
        let rel = match &target {
            Target::Database { .. } => return Ok(cat.fingerprint()),
            Target::Relation { path, .. }
            | Target::Schema { path, .. }
            | Target::Row { path, .. } => match cat.get(&path[0]) {
                Some(r) => r,
                None => return Ok(ops::MISSING),
            },
        };
        let max = self.settings.max_row_bytes;
        Ok(match &target {
            Target::Relation { .. } => {
                ops::relation_digest(conn, rel, self.settings.exact_digest_rows, max)?
            }
            Target::Schema { .. } => ops::hash_str(&schema_json(&self.name, &rel.info)),
            Target::Row { key, .. } => match ops::read_row(conn, rel, key, max, false)? {
                Some(row) => ops::hash_str(&row.json),
                None => ops::MISSING,
            },
            Target::Database { .. } => cat.fingerprint(),
        })
    }

    /// [`Database::digest`] on the calling thread, with a budget of its own.
    fn digest_now(&self, uri: &str) -> Result<u64, OpError> {
        let budget = Budget::new(self.settings.statement_timeout);
        self.run(&budget, |c, cat| self.digest(c, cat, uri))
    }
}

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

/// What an operation returns to the async side.
type Blocking<T> = Result<T, OpError>;

/// Runs `f` on a blocking thread; dropping the returned future stops its statements.
async fn blocking<T: Send + 'static>(
    budget: Arc<Budget>,
    f: impl FnOnce(&Arc<Budget>) -> Blocking<T> + Send + 'static,
) -> Blocking<T> {
    let _stop = StopOnDrop(Arc::clone(&budget));
    tokio::task::spawn_blocking(move || f(&budget))
        .await
        .unwrap_or_else(|e| Err(OpError::Internal(format!("the database task failed: {e}"))))
}

/// A table listing's position: after its schema document, or after a row's key.
const AFTER_SCHEMA: u8 = 0;
const AFTER_ROW: u8 = 1;

impl SqliteProvider {
    /// Serves `sources`. Each database is opened (read-only) and its catalog read now, so
    /// that a missing or unreadable file is an error at start.
    pub fn new(sources: Vec<SqliteSource>, config: SqliteConfig) -> Result<Self, SqliteError> {
        if sources.is_empty() {
            return Err(SqliteError::NoDatabase);
        }
        let mut dbs: Vec<Arc<Database>> = Vec::with_capacity(sources.len());
        for source in sources {
            if !valid_name(&source.name) || dbs.iter().any(|d| d.name == source.name) {
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

    /// Runs `f` on `db` on a blocking thread; failures are errors about `uri`.
    async fn on<T: Send + 'static>(
        &self,
        db: Arc<Database>,
        uri: &str,
        f: impl FnOnce(&Database, &Connection, &Catalog) -> Blocking<T> + Send + 'static,
    ) -> Result<T, ResourceError> {
        let limits = *db.pool.limits();
        // The semaphore is never closed.
        let permit = Arc::clone(&db.permits)
            .acquire_owned()
            .await
            .map_err(ResourceError::internal)?;
        let worker = Arc::clone(&db);
        blocking(Budget::new(db.settings.statement_timeout), move |budget| {
            let out = worker.run(budget, |c, cat| f(&worker, c, cat));
            drop(permit);
            out
        })
        .await
        .map_err(|e| e.into_resource_error(uri, &limits))
    }
}

/// A refused URI answers like a missing one; the reason is only logged.
fn refused(uri: &str, reason: &str) -> ResourceError {
    tracing::debug!(%uri, reason, "refused");
    ResourceError::not_found(uri)
}

/// The relation a target names, or not-found.
fn relation<'c>(cat: &'c Catalog, path: &[String]) -> Result<&'c Arc<Relation>, OpError> {
    path.first()
        .and_then(|name| cat.get(name))
        .ok_or(OpError::NotFound)
}

impl Provider for SqliteProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new(Self::row_template(), "rows")
                .with_title("Database rows")
                .with_description(
                    "One row of a table or view, as JSON (CSV as an alternative): {db} is the \
                     database, {table} the table or view, {pk} the primary key (the rowid for \
                     tables without one, the position for views; a composite key's values \
                     joined by commas)",
                )
                .with_mime_type(JSON_MIME_TYPE)
                .with_capabilities(ResourceCapabilities {
                    list: Some(false),
                    subscribe: None,
                }),
            ResourceTemplate::new(Self::schema_template(), "schemas")
                .with_title("Table schemas")
                .with_description("The columns, key and definition of a table or view, as JSON")
                .with_mime_type(JSON_MIME_TYPE)
                .with_capabilities(ResourceCapabilities {
                    list: Some(false),
                    subscribe: None,
                }),
        ]
    }

    fn capabilities(&self) -> ProviderCapabilities {
        let watching = self.config.watch;
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    fn attach(&self, feed: ChangeFeed) {
        if !self.config.watch {
            return;
        }
        for db in &self.dbs {
            let settings = WatchSettings {
                interval: db.settings.poll_interval.max(Duration::from_millis(1)),
                max_watched: self.config.max_watched,
            };
            watch::start(db, &feed, settings);
        }
    }

    /// Databases, relations and rows by key (see [`search`]), resumable across calls.
    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        let (mut index, mut stage) = match req.after {
            None => (0, search::Stage::Database),
            Some(bytes) => {
                search::decode(bytes).ok_or_else(|| ResourceError::internal("bad position"))?
            }
        };
        let mut resources = Vec::new();
        let mut examined = 0;
        while let Some(db) = self.dbs.get(index) {
            let words = req.words.to_vec();
            let (want, scan) = (
                req.limit.saturating_sub(resources.len()),
                search::SCAN - examined,
            );
            let from = std::mem::replace(&mut stage, search::Stage::Database);
            let found = self
                .on(Arc::clone(db), &db.uri, move |db, c, cat| {
                    search::within(db, c, cat, &words, from, want, scan)
                })
                .await?;
            resources.extend(found.hits);
            examined += found.examined;
            let next = match found.next {
                Some(within) => Some((index, within)),
                None => {
                    index += 1;
                    let full = resources.len() >= req.limit || examined >= search::SCAN;
                    (full && index < self.dbs.len()).then_some((index, search::Stage::Database))
                }
            };
            if let Some((db, stage)) = next {
                let position = search::encode(db, &stage)
                    .ok_or_else(|| ResourceError::internal("position"))?;
                return Ok(Some(Page {
                    resources,
                    next: Some(position),
                    cache: self.config.cache,
                }));
            }
        }
        Ok(Some(Page {
            resources,
            next: None,
            cache: self.config.cache,
        }))
    }

    async fn subscribe(&self, _ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        let (_, db) = self.resolve(uri)?;
        let owned = uri.to_owned();
        let digest = self
            .on(Arc::clone(&db), uri, move |db, c, cat| {
                db.digest(c, cat, &owned)
            })
            .await?;
        if digest == ops::MISSING {
            return Err(ResourceError::not_found(uri));
        }
        let mut watched = lock(&db.watched);
        if watched.len() < self.config.max_watched || watched.contains_key(uri) {
            watched.insert(uri.to_owned(), digest);
        }
        Ok(())
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let limit = req.limit.max(1);
        let Some(uri) = req.parent else {
            let dbs = self.dbs.clone();
            let after = req.after.map(<[u8]>::to_vec);
            let cache = self.config.cache;
            let budget = self.budget();
            let _stop = StopOnDrop(Arc::clone(&budget));
            return tokio::task::spawn_blocking(move || {
                list_default(&dbs, &budget, after.as_deref(), limit, cache)
            })
            .await
            .unwrap_or_else(|e| Err(ResourceError::internal(e)));
        };
        let (target, db) = self.resolve(uri)?;
        let after = req.after.map(<[u8]>::to_vec);
        let cache = self.config.cache;
        let max = db.settings.max_row_bytes;
        self.on(db, uri, move |db, c, cat| {
            let page = match target {
                Target::Database { .. } => {
                    let start = match &after {
                        None => 0,
                        Some(name) => cat.after(&String::from_utf8_lossy(name)),
                    };
                    let end = cat.relations.len().min(start + limit);
                    let resources = cat.relations[start..end]
                        .iter()
                        .map(|r| relation_resource(&db.name, r).into())
                        .collect();
                    let next = (end < cat.relations.len())
                        .then(|| cat.relations[end - 1].name().as_bytes().to_vec());
                    Page {
                        resources,
                        next,
                        cache,
                    }
                }
                Target::Relation { path, .. } => {
                    let rel = relation(cat, &path)?;
                    let mut resources: Vec<Listed> = Vec::with_capacity(limit.min(4096));
                    let keys_after = match after.as_deref() {
                        None => {
                            resources.push(schema_resource(&db.name, rel, None).into());
                            None
                        }
                        Some([AFTER_SCHEMA]) => None,
                        Some([AFTER_ROW, position @ ..]) => Some(
                            decode_key_position(position)
                                .ok_or_else(|| OpError::Internal("bad position".into()))?,
                        ),
                        Some(_) => return Err(OpError::Internal("bad position".into())),
                    };
                    let want = limit - resources.len();
                    let (keys, more) = if want == 0 {
                        (Vec::new(), true)
                    } else {
                        ops::list_keys(c, rel, keys_after.as_deref(), want)?
                    };
                    let path = [rel.name()];
                    for key in &keys {
                        resources.push(
                            Resource::new(row_uri(&db.name, &path, key), key_name(key))
                                .with_mime_type(JSON_MIME_TYPE)
                                .document()
                                .into(),
                        );
                    }
                    let next = if !more {
                        None
                    } else if let Some(last) = keys.last() {
                        let mut v = vec![AFTER_ROW];
                        v.extend(encode_key_position(last).ok_or(OpError::KeyTooLarge)?);
                        Some(v)
                    } else {
                        Some(vec![AFTER_SCHEMA])
                    };
                    Page {
                        resources,
                        next,
                        cache,
                    }
                }
                Target::Schema { path, .. } => {
                    relation(cat, &path)?;
                    return Err(OpError::NotACollection);
                }
                Target::Row { path, key, .. } => {
                    let rel = relation(cat, &path)?;
                    if ops::read_row(c, rel, &key, max, false)?.is_none() {
                        return Err(OpError::NotFound);
                    }
                    return Err(OpError::NotACollection);
                }
            };
            Ok(page)
        })
        .await
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let (target, db) = self.resolve(uri)?;
        let owned = uri.to_owned();
        let max = db.settings.max_row_bytes;
        self.on(db, uri, move |db, c, cat| {
            Ok(match target {
                Target::Database { .. } => database_resource(db, cat),
                Target::Relation { path, .. } => relation_resource(&db.name, relation(cat, &path)?),
                Target::Schema { path, .. } => {
                    let rel = relation(cat, &path)?;
                    let size = schema_json(&db.name, &rel.info).len();
                    schema_resource(&db.name, rel, Some(size))
                }
                Target::Row { path, key, .. } => {
                    let rel = relation(cat, &path)?;
                    let row = ops::read_row(c, rel, &key, max, false)?.ok_or(OpError::NotFound)?;
                    row_resource(owned, &row.key, JSON_MIME_TYPE, row.json.len())
                }
            })
        })
        .await
    }

    async fn read(&self, _ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let (target, db) = self.resolve(uri)?;
        let owned = uri.to_owned();
        let max = db.settings.max_row_bytes;
        let csv = self.config.csv;
        let budget = self.config.collection_budget;
        let max_rows = self.config.collection_max_rows;
        let contents = self
            .on(db, uri, move |db, c, cat| {
                Ok(match target {
                    Target::Database { .. } => schema_documents(db, cat, budget),
                    Target::Relation { path, .. } => {
                        let rel = relation(cat, &path)?;
                        let schema = schema_contents(&db.name, rel);
                        let mut used = 0u64;
                        let mut out = Vec::new();
                        if schema.body.len() as u64 <= budget {
                            used = schema.body.len() as u64;
                            out.push(schema);
                        }
                        let path = [rel.name()];
                        for row in ops::first_rows(c, rel, max_rows, max)? {
                            let size = row.json.len() as u64;
                            if used + size > budget {
                                continue;
                            }
                            used += size;
                            let uri = row_uri(&db.name, &path, &row.key);
                            out.push(ResourceContents::text(
                                row_resource(uri, &row.key, JSON_MIME_TYPE, row.json.len()),
                                row.json,
                            ));
                        }
                        out
                    }
                    Target::Schema { path, .. } => {
                        let rel = relation(cat, &path)?;
                        let mut entry = schema_contents(&db.name, rel);
                        entry.resource.uri = owned;
                        vec![entry]
                    }
                    Target::Row { path, key, .. } => {
                        let rel = relation(cat, &path)?;
                        let row =
                            ops::read_row(c, rel, &key, max, csv)?.ok_or(OpError::NotFound)?;
                        row_contents(&owned, row)
                    }
                })
            })
            .await?;
        Ok(ReadOutput {
            contents,
            cache: self.config.cache,
        })
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let row = Self::row_template();
        let is_row = req.template == row;
        if !is_row && req.template != Self::schema_template() {
            return Ok(Completion::empty());
        }
        let db = req
            .context
            .get("db")
            .and_then(|name| self.database(name))
            .or_else(|| (self.dbs.len() == 1).then(|| &self.dbs[0]));
        match req.argument {
            "db" => Ok(Completion::from_matches(
                self.dbs
                    .iter()
                    .map(|d| d.name.clone())
                    .filter(|n| n.starts_with(req.value))
                    .collect(),
            )),
            "table" => {
                let Some(db) = db else {
                    return Ok(Completion::empty());
                };
                let prefix = req.value.to_owned();
                self.on(Arc::clone(db), &db.uri, move |_, _, cat| {
                    Ok(Completion::from_matches(
                        cat.relations
                            .iter()
                            .map(|r| r.name().to_owned())
                            .filter(|n| n.starts_with(&prefix))
                            .collect(),
                    ))
                })
                .await
            }
            "pk" if is_row => {
                let (Some(db), Some(table)) = (db, req.context.get("table")) else {
                    return Ok(Completion::empty());
                };
                let table = table.clone();
                let prefix = req.value.to_owned();
                let scan = self.config.completion_scan;
                let uri = database_uri(&db.name);
                self.on(Arc::clone(db), &uri, move |_, c, cat| {
                    match cat.get(&table) {
                        Some(rel) => ops::complete_key(c, rel, &prefix, scan),
                        None => Ok(Completion::empty()),
                    }
                })
                .await
            }
            other => Err(ResourceError::invalid(
                "",
                format!("the template {} has no variable {other:?}", req.template),
            )),
        }
    }
}
