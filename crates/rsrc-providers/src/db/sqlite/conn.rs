//! Connections to one SQLite database: how they are opened, pooled and bounded, and how
//! their failures read to a client.
//!
//! Invariants:
//! - Every connection is opened `SQLITE_OPEN_READ_ONLY` (never `CREATE`), then made
//!   `query_only`, with `trusted_schema` off (functions with side effects cannot run from
//!   a view or trigger the database file defines) and `defensive` on. Nothing this
//!   module hands out can write.
//! - Every use runs under a [`Budget`]: a progress handler stops the statement once the
//!   budget's deadline passes or its request is dropped (the budget is the stop signal
//!   of [`crate::kit::blocking`]), so a pathological view cannot hold a thread. No value longer than the row limit is ever materialised
//!   (`SQLITE_LIMIT_LENGTH`).
//! - At most `max_idle` connections are kept; a checkout never waits (the provider bounds
//!   how many requests use a database at once, before they take a thread).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rsrc::ResourceError;

use crate::kit::blocking::{Panicked, Signal};
use rusqlite::config::DbConfig;
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a database lives.
#[derive(Clone, Debug)]
pub(super) enum Location {
    /// A file, opened by path (never as a URI: `?` and `#` are just characters).
    File(PathBuf),
    /// An in-memory database of this process, shared by name (`file:/NAME?vfs=memdb`).
    Memory(String),
}

impl Location {
    /// The location as a user may see it in an error.
    pub(super) fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Memory(_) => "(in memory)".to_owned(),
        }
    }
}

/// What bounds each connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// How long a request may keep SQLite busy.
    pub(super) statement_timeout: Duration,
    /// How long a read waits for a writer's lock.
    pub(super) busy_timeout: Duration,
    /// The largest value (and row) read, in bytes.
    pub(super) max_row_bytes: u64,
}

/// The time a request may spend in SQLite, and whether it is still wanted: the signal
/// the work of a request looks at (through the progress handler, between statements'
/// steps), set when the request goes away or once the deadline passes.
#[derive(Debug)]
pub(super) struct Budget {
    deadline: Instant,
    stopped: AtomicBool,
}

impl Budget {
    pub(super) fn new(timeout: Duration) -> Arc<Budget> {
        let now = Instant::now();
        Arc::new(Budget {
            deadline: now.checked_add(timeout).unwrap_or(now),
            stopped: AtomicBool::new(false),
        })
    }
}

impl Signal for Budget {
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// Stops whatever runs under this budget at its next progress check.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

/// How many virtual-machine steps run between two budget checks.
const PROGRESS_STEPS: i32 = 4096;

/// A read-only connection and the budget its progress handler checks.
pub(super) struct Conn {
    pub(super) conn: Connection,
    budget: Arc<Mutex<Option<Arc<Budget>>>>,
}

impl Conn {
    /// Runs `f` under `budget`.
    pub(super) fn with_budget<T>(
        &self,
        budget: &Arc<Budget>,
        f: impl FnOnce(&Connection) -> T,
    ) -> T {
        *lock(&self.budget) = Some(Arc::clone(budget));
        let out = f(&self.conn);
        *lock(&self.budget) = None;
        out
    }
}

/// Opens a read-only connection.
pub(super) fn open(location: &Location, limits: &Limits) -> rusqlite::Result<Conn> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = match location {
        Location::File(path) => Connection::open_with_flags(path, flags)?,
        Location::Memory(name) => Connection::open_with_flags(
            format!("file:/{name}?vfs=memdb"),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )?,
    };
    conn.busy_timeout(limits.busy_timeout)?;
    conn.pragma_update(None, "query_only", true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    let max_len = i32::try_from(limits.max_row_bytes.max(1)).unwrap_or(i32::MAX);
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, max_len)?;
    conn.set_prepared_statement_cache_capacity(64);
    let budget: Arc<Mutex<Option<Arc<Budget>>>> = Arc::default();
    let checked = Arc::clone(&budget);
    conn.progress_handler(
        PROGRESS_STEPS,
        Some(move || lock(&checked).as_ref().is_some_and(|b| b.stopped())),
    )?;
    Ok(Conn { conn, budget })
}

/// Creates an in-memory database shared by `name` and runs `script` in it; the returned
/// (read-write) connection keeps the database alive.
pub(super) fn create_memory(name: &str, script: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        format!("file:/{name}?vfs=memdb"),
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch(script)?;
    Ok(conn)
}

/// Idle connections of one database.
pub(super) struct Pool {
    location: Location,
    limits: Limits,
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
}

impl Pool {
    pub(super) fn new(location: Location, limits: Limits, max_idle: usize) -> Pool {
        Pool {
            location,
            limits,
            idle: Mutex::new(Vec::new()),
            max_idle,
        }
    }

    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// An idle connection, or a new one.
    pub(super) fn get(&self) -> rusqlite::Result<Conn> {
        if let Some(c) = lock(&self.idle).pop() {
            return Ok(c);
        }
        open(&self.location, &self.limits)
    }

    /// Gives a connection back (closed if enough are idle).
    pub(super) fn put(&self, conn: Conn) {
        let mut idle = lock(&self.idle);
        if idle.len() < self.max_idle {
            idle.push(conn);
        }
    }

    /// A connection of its own (for the change watcher).
    pub(super) fn open_dedicated(&self) -> rusqlite::Result<Conn> {
        open(&self.location, &self.limits)
    }
}

/// Why an operation failed, before it is tied to a URI.
#[derive(Debug)]
pub(super) enum OpError {
    /// Nothing there.
    NotFound,
    /// A document was asked for its children.
    NotACollection,
    /// A row (or value) over the limit; at least this many bytes.
    TooLarge(u64),
    /// A listing position cannot hold this key.
    KeyTooLarge,
    /// A listing position this provider cannot continue from.
    BadPosition,
    /// SQLite failed.
    Sql(rusqlite::Error),
    /// Anything else.
    Internal(String),
}

impl From<Panicked> for OpError {
    fn from(e: Panicked) -> Self {
        OpError::Internal(e.to_string())
    }
}

impl From<rusqlite::Error> for OpError {
    fn from(e: rusqlite::Error) -> Self {
        OpError::Sql(e)
    }
}

impl OpError {
    /// The error a client sees for `uri`. Busy databases and stopped statements get a
    /// message of their own; other SQLite failures are logged and answered as internal
    /// errors (their text can name host paths).
    pub(super) fn into_resource_error(self, uri: &str, limits: &Limits) -> ResourceError {
        match self {
            OpError::NotFound => ResourceError::not_found(uri),
            OpError::NotACollection => ResourceError::not_a_collection(uri),
            OpError::TooLarge(size) => {
                ResourceError::too_large(uri.to_owned(), size, limits.max_row_bytes)
            }
            OpError::BadPosition => ResourceError::bad_position(uri),
            OpError::KeyTooLarge => ResourceError::invalid(
                uri,
                format!("{uri}: a row's primary key is too large to continue the listing after it"),
            ),
            OpError::Sql(e) => match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                    ResourceError::unavailable(
                        uri,
                        format!(
                            "{uri}: the database is locked by a writer (waited {} ms); try again",
                            limits.busy_timeout.as_millis()
                        ),
                    )
                }
                Some(rusqlite::ErrorCode::OperationInterrupted) => {
                    crate::db::timeout::timed_out(uri, limits.statement_timeout)
                }
                Some(rusqlite::ErrorCode::TooBig) => ResourceError::too_large(
                    uri.to_owned(),
                    limits.max_row_bytes.saturating_add(1),
                    limits.max_row_bytes,
                ),
                _ => ResourceError::internal(format!("{uri}: {e}")),
            },
            OpError::Internal(m) => ResourceError::internal(format!("{uri}: {m}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout: Duration) -> Limits {
        Limits {
            statement_timeout: timeout,
            busy_timeout: Duration::from_secs(1),
            max_row_bytes: 1 << 20,
        }
    }

    #[test]
    fn a_connection_of_the_pool_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let conn = open(&Location::File(path), &limits(Duration::from_secs(5)))
            .unwrap()
            .conn;
        for sql in [
            "INSERT INTO t VALUES (2)",
            "DELETE FROM t",
            "CREATE TABLE u (y)",
            "DROP TABLE t",
            "PRAGMA user_version = 7",
            "ATTACH DATABASE ':memory:' AS m; CREATE TABLE m.z (a); INSERT INTO m.z VALUES (1)",
        ] {
            assert!(conn.execute_batch(sql).is_err(), "{sql} was accepted");
        }
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        assert!(conn.is_readonly("main").unwrap());
    }

    #[test]
    fn a_statement_past_its_budget_is_interrupted() {
        let limits = limits(Duration::from_millis(50));
        let anchor = create_memory("conn-test-budget", "CREATE TABLE t (x)").unwrap();
        let reader = open(&Location::Memory("conn-test-budget".into()), &limits).unwrap();
        let budget = Budget::new(limits.statement_timeout);
        let started = Instant::now();
        let r: rusqlite::Result<i64> = reader.with_budget(&budget, |c| {
            c.query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                 SELECT x FROM c WHERE x < 0",
                [],
                |r| r.get(0),
            )
        });
        assert_eq!(
            r.unwrap_err().sqlite_error_code(),
            Some(rusqlite::ErrorCode::OperationInterrupted)
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(anchor);
    }
}
