//! Change notifications for one SQLite database, through the shared poll-and-digest
//! watcher ([`crate::kit::watch`]): it looks at `PRAGMA data_version` on a read-only
//! connection of its own and, when another connection has committed, publishes
//! `list_changed` and an update of each subscribed URI of the database whose digest
//! ([`Database::digest`]) changed.
//!
//! Invariants:
//! - The watcher runs on a thread of its own (every look and digest blocks on SQLite) and
//!   ends when the database is dropped.
//! - Digests are computed with the pool's connections under the usual budget.

use std::sync::Arc;
use std::time::Duration;

use rsrc::ChangeFeed;
use rusqlite::Connection;

use super::conn::Conn;
use super::database::Database;
use crate::kit::watch::{self, Runs, Source, Subscribed};

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))
}

/// Starts watching `db`, looking every `interval`.
pub(super) fn start(db: &Arc<Database>, feed: &ChangeFeed, interval: Duration) {
    match db.pool.open_dedicated() {
        Ok(conn) => watch::start(
            db,
            feed,
            interval,
            conn,
            None,
            Runs::Thread(format!("rsrc-sqlite-watch-{}", db.name)),
        ),
        Err(e) => {
            tracing::warn!(database = %db.name, error = %e, "no change watcher: changes will not be notified");
        }
    }
}

impl Source for Database {
    /// `PRAGMA data_version`: it moves when another connection commits.
    type Look = i64;
    /// The watcher's own read-only connection.
    type Probe = Conn;

    fn topic(&self) -> &str {
        &self.uri
    }

    fn subscribed(&self) -> &Subscribed {
        &self.subscribed
    }

    async fn look(&self, conn: &mut Conn) -> Result<i64, String> {
        data_version(&conn.conn).map_err(|e| format!("cannot poll the database: {e}"))
    }

    async fn moved(&self, _: &mut Conn, _: &i64, _: &i64, feed: &ChangeFeed) {
        feed.list_changed();
    }

    async fn digest(&self, _: &mut Conn, _: &i64, uri: &str) -> Result<Option<u64>, String> {
        self.digest_now(uri).map(Some).map_err(|e| format!("{e:?}"))
    }
}
