//! Change notifications for the PostgreSQL provider, through the shared poll-and-digest
//! watcher ([`crate::kit::watch`]): the look is the cluster's snapshot horizon, and the
//! digests tell which subscribed URIs changed.
//!
//! Invariant: the watcher holds the database only weakly and ends when it is dropped.
//!
//! # Changes
//!
//! The watcher looks at `pg_snapshot_xmax(pg_current_snapshot())` every `poll_interval`:
//! it moves whenever a writing transaction of the cluster ends (polling needs no trigger,
//! so the database stays untouched; LISTEN/NOTIFY would need one in every table). When it
//! moves, the catalog is reloaded, `list_changed` is published and each subscribed URI of
//! this database whose digest changed is updated: a row's and a schema document's digest
//! is a hash of their JSON; a relation's its row count and greatest key (a change inside a
//! table that keeps both goes unnoticed by the table's subscribers, not by its rows'); a
//! schema's and the database's a hash of the catalog.
//!
//! In a deployment of several instances, the watcher takes turns with theirs
//! ([`crate::poll`]): one polls, and the others look once when it finds a change (each
//! reloads its catalog and digests its own subscriptions).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rsrc::{ChangeFeed, ResourceError};

use super::catalog;
use super::database::Database;
use crate::db::render::schema_json;
use crate::db::uri::Target;
use crate::kit::watch::{self, Runs, Source, Subscribed};

/// The cluster's snapshot horizon: it moves when a writing transaction ends.
const HORIZON: &str = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text";

/// Starts watching `db`: on the current runtime, or on a thread of its own when there is
/// none.
pub(super) fn start(db: &Arc<Database>, feed: &ChangeFeed) {
    watch::start(
        db,
        feed,
        db.config.poll_interval,
        (),
        None,
        Runs::Task(format!("rsrc-postgres-watch-{}", db.name)),
    );
}

impl Source for Database {
    /// The snapshot horizon.
    type Look = String;
    type Probe = ();

    fn topic(&self) -> &str {
        &self.uri
    }

    fn subscribed(&self) -> &Subscribed {
        &self.subscribed
    }

    async fn look(&self, (): &mut ()) -> Result<String, String> {
        let rows = self
            .query(&self.uri, HORIZON, &[])
            .await
            .map_err(|e| format!("cannot poll PostgreSQL for changes: {e:?}"))?;
        rows.first()
            .map(|r| r.get::<_, String>(0))
            .ok_or_else(|| "cannot poll PostgreSQL for changes: no horizon".to_owned())
    }

    /// Something was committed: the catalog is reloaded and every listener told that the
    /// list may have changed.
    async fn moved(&self, (): &mut (), _: &String, _: &String, feed: &ChangeFeed) {
        match catalog::load(&self.pool).await {
            Ok(c) => self.replace_catalog(c),
            Err(e) => {
                tracing::warn!(database = %self.name, error = %e, "cannot reload the catalog");
            }
        }
        feed.list_changed();
    }

    async fn digest(&self, (): &mut (), _: &String, uri: &str) -> Result<Option<u64>, String> {
        self.digest(uri)
            .await
            .map(Some)
            .map_err(|e| format!("{e:?}"))
    }
}

impl Database {
    /// A digest of what `uri` holds now, for change detection.
    async fn digest(&self, uri: &str) -> Result<u64, ResourceError> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let cat = self.catalog();
        match self.target(uri)? {
            Target::Database { .. } => cat.fingerprint.hash(&mut h),
            Target::Relation { path, .. } if path.len() == 1 => {
                cat.fingerprint.hash(&mut h);
            }
            Target::Relation { path, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(uri))?;
                let keys = rel.key_columns();
                let sql = match keys.first() {
                    Some((k, _, _)) => {
                        format!("SELECT count(*), max({k}::text) FROM {}", rel.quoted)
                    }
                    None => format!("SELECT count(*), NULL::text FROM {}", rel.quoted),
                };
                for row in self.query(uri, &sql, &[]).await? {
                    let count: i64 = row.get(0);
                    let max: Option<String> = row.get(1);
                    (count, max).hash(&mut h);
                }
            }
            Target::Schema { path, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(uri))?;
                schema_json(&self.name, &rel.info).hash(&mut h);
            }
            Target::Row { path, key, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(uri))?;
                match self.read_row(uri, rel, &key).await {
                    Ok(entries) => {
                        for e in entries {
                            if let rsrc::protocol::resources::Body::Text(t) = e.body {
                                t.hash(&mut h);
                            }
                        }
                    }
                    Err(ResourceError::NotFound { .. }) => 0u8.hash(&mut h),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(h.finish())
    }

    /// Records the digest of a URI just subscribed to, so its first change is told apart
    /// (once the watcher has its first look, see [`Subscribed::watching`]).
    pub(super) async fn remember(&self, uri: &str) {
        self.subscribed.watching().await;
        if let Ok(d) = self.digest(uri).await {
            self.subscribed.remember(uri, d);
        }
    }
}
