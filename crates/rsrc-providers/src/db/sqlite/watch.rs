//! Change notifications for one SQLite database: a thread polls `PRAGMA data_version` on a
//! read-only connection of its own and, when another connection has committed, publishes
//! `list_changed` and an update of each subscribed URI whose content digest changed. In a
//! deployment of several instances, it takes turns with theirs ([`crate::poll`]).
//!
//! Invariants:
//! - The thread holds the database weakly and ends within one poll interval of the
//!   provider being dropped.
//! - At most `max_watched` subscribed URIs of the database are digested per change; the
//!   others are told to look again (an update without a digest).
//! - Digests are computed with the pool's connections under the usual budget, never while
//!   holding the subscription table's lock.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rsrc::ChangeFeed;
use rusqlite::Connection;

use crate::poll::Turns;

use super::Database;
use super::conn::lock;

/// How the watcher runs.
#[derive(Clone, Copy, Debug)]
pub(super) struct WatchSettings {
    pub(super) interval: Duration,
    pub(super) max_watched: usize,
}

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))
}

/// Starts watching `db` on a thread of its own.
pub(super) fn start(db: &Arc<Database>, feed: &ChangeFeed, settings: WatchSettings) {
    let conn = match db.pool.open_dedicated() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(database = %db.name, error = %e, "no change watcher: changes will not be notified");
            return;
        }
    };
    let weak = Arc::downgrade(db);
    let turns = Turns::new(feed, &db.uri);
    let started = std::thread::Builder::new()
        .name(format!("rsrc-sqlite-watch-{}", db.name))
        .spawn(move || run(&weak, &conn.conn, &turns, settings));
    if let Err(e) = started {
        tracing::warn!(error = %e, "no change watcher: changes will not be notified");
    }
}

/// How often the thread looks whether the provider is still there.
const SLICE: Duration = Duration::from_millis(500);

fn run(db: &Weak<Database>, conn: &Connection, turns: &Turns, settings: WatchSettings) {
    let mut version = data_version(conn).ok();
    let mut failing = false;
    loop {
        let Ok(turn) = turns.wait(settings.interval, SLICE, || db.strong_count() > 0) else {
            return;
        };
        let (Some(turn), Some(db)) = (turn, db.upgrade()) else {
            continue;
        };
        match data_version(conn) {
            Ok(v) => {
                failing = false;
                if version != Some(v) {
                    if version.is_some() {
                        changed(&db, turns.feed(), settings.max_watched);
                        turns.found_change(turn);
                    }
                    version = Some(v);
                }
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(database = %db.name, error = %e, "cannot poll the database for changes");
                    failing = true;
                }
            }
        }
    }
}

/// Another connection committed: the list may have changed, and so may every subscribed
/// resource of this database.
fn changed(db: &Database, feed: &ChangeFeed, max_watched: usize) {
    feed.list_changed();
    let inside = format!("{}/", db.uri);
    let subscribed: Vec<String> = feed
        .subscribed(&db.uri)
        .into_iter()
        .filter(|u| *u == db.uri || u.starts_with(&inside))
        .collect();
    let known: HashMap<String, u64> = {
        let still: HashSet<&str> = subscribed.iter().map(String::as_str).collect();
        let mut table = lock(&db.watched);
        table.retain(|uri, _| still.contains(uri.as_str()));
        table.clone()
    };
    let mut fresh = HashMap::with_capacity(subscribed.len().min(max_watched));
    for (i, uri) in subscribed.iter().enumerate() {
        if i >= max_watched {
            feed.updated(uri);
            continue;
        }
        match db.digest_now(uri) {
            Ok(d) => {
                if known.get(uri) != Some(&d) {
                    feed.updated(uri);
                }
                fresh.insert(uri.clone(), d);
            }
            Err(e) => {
                tracing::debug!(%uri, error = ?e, "digest failed; notifying");
                feed.updated(uri);
            }
        }
    }
    let mut table = lock(&db.watched);
    for (uri, d) in fresh {
        if table.len() < max_watched || table.contains_key(&uri) {
            table.insert(uri, d);
        }
    }
}
