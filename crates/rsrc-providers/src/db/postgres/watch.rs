//! Change notifications for the PostgreSQL provider: a poller of the cluster's snapshot
//! horizon, and the digests that tell which subscribed URIs changed.
//!
//! Invariant: the poller holds the provider only weakly and ends when it is dropped.
//!
//! # Changes
//!
//! A task polls `pg_snapshot_xmax(pg_current_snapshot())` every `poll_interval`: it moves
//! whenever a writing transaction of the cluster ends (polling needs no trigger, so the
//! database stays untouched; LISTEN/NOTIFY would need one in every table). When it moves,
//! the catalog is reloaded, `list_changed` is published and each subscribed URI of this
//! database whose digest changed is updated: a row's and a schema document's digest is a
//! hash of their JSON; a relation's its row count and greatest key (a change inside a
//! table that keeps both goes unnoticed by the table's subscribers, not by its rows');
//! a schema's and the database's a hash of the catalog.
//!
//! In a deployment of several instances, the poller takes turns with theirs
//! ([`crate::poll`]): one polls, and the others look once when it finds a change (each
//! reloads its catalog and digests its own subscriptions).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, PoisonError, Weak};

use rsrc::{ChangeFeed, ResourceError};

use super::{Inner, catalog, write};
use crate::db::{Target, schema_json};
use crate::poll::Turns;

/// Starts polling for `inner`'s database: on the current runtime, or on a thread of its
/// own when there is none.
pub(super) fn start(inner: &Arc<Inner>, feed: &ChangeFeed) {
    let name = inner.name.clone();
    let feed = Turns::new(feed, &inner.uri);
    let inner = Arc::downgrade(inner);
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(poll(inner, feed));
        return;
    }
    // Built before any runtime exists (as `rsrc serve` does): poll from a thread of
    // its own; its connections live on that thread's runtime.
    let started = std::thread::Builder::new()
        .name(format!("rsrc-postgres-watch-{name}"))
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match rt {
                Ok(rt) => rt.block_on(poll(inner, feed)),
                Err(e) => warn_unwatched(&e),
            }
        });
    if let Err(e) = started {
        warn_unwatched(&e);
    }
}

fn warn_unwatched(e: &std::io::Error) {
    tracing::warn!(error = %e, "no change watcher: changes will not be notified");
}

impl Inner {
    /// A digest of what `uri` holds now, for change detection.
    async fn digest(&self, uri: &str) -> Result<u64, ResourceError> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let cat = self.catalog();
        match self
            .target(uri)
            .ok_or_else(|| ResourceError::not_found(uri))?
        {
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

    /// Something was committed: reload the catalog, tell every listener that the list may
    /// have changed, and update the subscribed URIs whose content did.
    async fn changed(&self, feed: &ChangeFeed) {
        match catalog::load(&self.pool).await {
            Ok(c) => *write(&self.catalog) = Arc::new(c),
            Err(e) => {
                tracing::warn!(database = %self.name, error = %e, "cannot reload the catalog");
            }
        }
        feed.list_changed();
        let inside = format!("{}/", self.uri);
        let subscribed: Vec<String> = feed
            .subscribed(&self.uri)
            .into_iter()
            .filter(|u| *u == self.uri || u.starts_with(&inside))
            .collect();
        let known = {
            let mut w = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
            w.retain(|u, _| subscribed.contains(u));
            w.clone()
        };
        let mut fresh = HashMap::new();
        for (i, uri) in subscribed.iter().enumerate() {
            if i >= self.config.max_watched {
                feed.updated(uri);
                continue;
            }
            match self.digest(uri).await {
                Ok(d) => {
                    if known.get(uri).is_some_and(|&k| k != d) || !known.contains_key(uri) {
                        feed.updated(uri);
                    }
                    fresh.insert(uri.clone(), d);
                }
                Err(_) => feed.updated(uri),
            }
        }
        self.watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(fresh);
    }

    /// Records the digest of a URI just subscribed to, so its first change is told apart.
    pub(super) async fn remember(&self, uri: &str) {
        if let Ok(d) = self.digest(uri).await {
            let mut w = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
            if w.len() < self.config.max_watched {
                w.insert(uri.to_owned(), d);
            }
        }
    }
}

/// Polls the cluster's snapshot horizon in turns; ends when the provider is dropped.
async fn poll(inner: Weak<Inner>, turns: Turns) {
    const SQL: &str = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text";
    let horizon = |s: Arc<Inner>| async move {
        s.query(&s.uri, SQL, &[])
            .await
            .ok()
            .and_then(|rows| rows.first().map(|r| r.get::<_, String>(0)))
    };
    // The first look is taken at once, lease or not, so that a signal later compares
    // with something.
    let mut last = match inner.upgrade() {
        Some(s) => horizon(s).await,
        None => return,
    };
    let mut failing = false;
    loop {
        let interval = match inner.upgrade() {
            Some(s) => s.config.poll_interval,
            None => return,
        };
        let Some(turn) = turns.wait_async(interval).await else {
            continue;
        };
        let Some(s) = inner.upgrade() else { return };
        let now = horizon(Arc::clone(&s)).await;
        match now {
            Some(v) => {
                failing = false;
                if last.as_ref().is_some_and(|l| *l != v) {
                    s.changed(turns.feed()).await;
                    turns.found_change(turn);
                }
                last = Some(v);
            }
            None if !failing => {
                failing = true;
                tracing::warn!(database = %s.name, "cannot poll PostgreSQL for changes");
            }
            None => {}
        }
    }
}
