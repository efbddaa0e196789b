//! One served SQLite database: its read-only connections, the catalog as of the last
//! schema change, the subscribed URIs and their digests, and how one request runs on it.
//!
//! Invariants:
//! - Every request runs in one read transaction on a pooled read-only connection, under
//!   its time budget, and sees a catalog checked against `PRAGMA schema_version` in that
//!   same transaction (so answers never wait for the change watcher).
//! - A connection that could not end its transaction is never reused.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::Semaphore;

use super::catalog::{self, Catalog};
use super::config::{Origin, SqliteConfig, SqliteSource};
use super::conn::{self, Budget, Limits, Location, OpError, Pool};
use super::error::SqliteError;
use super::{digest, rows};
use crate::db::render::schema_json;
use crate::db::uri::{Target, database_uri, parse};
use crate::kit::watch::Subscribed;

/// The names of the URI levels below a database: SQLite has tables only.
pub(super) const LEVELS: [&str; 1] = ["table"];

/// This database's settings: its own where it sets them, else the provider's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Settings {
    pub(super) max_row_bytes: u64,
    pub(super) statement_timeout: Duration,
    pub(super) exact_digest_rows: u64,
    pub(super) poll_interval: Duration,
}

/// One served database.
pub(super) struct Database {
    pub(super) name: String,
    /// `db://{name}`.
    pub(super) uri: String,
    pub(super) pool: Pool,
    /// One per connection: requests wait here, not on blocking threads.
    pub(super) permits: Arc<Semaphore>,
    catalog: RwLock<Arc<Catalog>>,
    /// Subscribed URIs and their last digests, for the change watcher.
    pub(super) subscribed: Subscribed,
    pub(super) settings: Settings,
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

/// Distinguishes the in-memory databases of one process.
static MEMORY_DATABASES: AtomicU64 = AtomicU64::new(0);

impl Database {
    /// Opens the database of `source` and reads its catalog.
    pub(super) fn open(
        source: SqliteSource,
        config: &SqliteConfig,
    ) -> Result<Database, SqliteError> {
        let settings = Settings {
            max_row_bytes: source
                .overrides
                .max_row_bytes
                .unwrap_or(config.max_row_bytes),
            statement_timeout: source
                .overrides
                .statement_timeout
                .unwrap_or(config.statement_timeout),
            exact_digest_rows: config.exact_digest_rows,
            poll_interval: source
                .overrides
                .poll_interval
                .unwrap_or(config.poll_interval),
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
            subscribed: Subscribed::new(config.max_watched),
            settings,
            _anchor: anchor,
        })
    }

    /// Runs `f` on a pooled connection under `budget`, with the catalog as of now.
    pub(super) fn run<T>(
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

    /// The digest of what `uri` names now ([`digest::MISSING`] if nothing).
    pub(super) fn digest(
        &self,
        conn: &Connection,
        cat: &Catalog,
        uri: &str,
    ) -> Result<u64, OpError> {
        let Some(target) = parse(uri, LEVELS.len()) else {
            return Ok(digest::MISSING);
        };
        let rel = match &target {
            Target::Database { .. } => return Ok(cat.fingerprint()),
            Target::Relation { path, .. }
            | Target::Schema { path, .. }
            | Target::Row { path, .. } => match cat.get(&path[0]) {
                Some(r) => r,
                None => return Ok(digest::MISSING),
            },
        };
        let max = self.settings.max_row_bytes;
        Ok(match &target {
            Target::Relation { .. } => {
                digest::relation_digest(conn, rel, self.settings.exact_digest_rows, max)?
            }
            Target::Schema { .. } => digest::hash_str(&schema_json(&self.name, &rel.info)),
            Target::Row { key, .. } => match rows::read_row(conn, rel, key, max, false)? {
                Some(row) => digest::hash_str(&row.json),
                None => digest::MISSING,
            },
            Target::Database { .. } => cat.fingerprint(),
        })
    }

    /// [`Database::digest`] on the calling thread, with a budget of its own.
    pub(super) fn digest_now(&self, uri: &str) -> Result<u64, OpError> {
        let budget = Budget::new(self.settings.statement_timeout);
        self.run(&budget, |c, cat| self.digest(c, cat, uri))
    }
}
