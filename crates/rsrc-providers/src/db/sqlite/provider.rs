//! The SQLite provider itself: [`SqliteProvider`], the handle an `rsrc::Server` mounts,
//! and its `rsrc::Provider` face — listings, metadata, reads, completion, search and
//! subscriptions, each run on a served database (`database.rs`) on a blocking thread.
//!
//! Invariant: it only calls down; every answer about a relation or a row comes from the
//! catalog and the statements of one read transaction (see [`super::database`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rsrc::protocol::{
    Completion, Resource, ResourceCapabilities, ResourceContents, ResourceTemplate,
};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError, SearchRequest, keyset,
};
use rusqlite::Connection;

use super::catalog::{Catalog, Relation};
use super::config::{SqliteConfig, SqliteSource};
use super::conn::Budget;
use super::conn::OpError;
use super::database::{Database, LEVELS};
use super::error::SqliteError;
use super::resources::{database_resource, list_default, relation_resource, schema_documents};
use super::{complete, digest, rows, search, watch};
use crate::db::render::schema_json;
use crate::db::resources::{
    RelationPosition, relation_page, row_contents, row_resource, schema_contents, schema_resource,
};
use crate::db::uri::{
    JSON_MIME_TYPE, Target, database_uri, parse, row_template, row_uri, schema_template,
};
use crate::kit::blocking;
use crate::kit::refusal::refused;
use crate::kit::source_name::is_segment_name;
use crate::kit::watch::{DigestWatched, Subscribed};

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

impl DigestWatched for SqliteProvider {
    fn watches(&self) -> bool {
        self.config.watch
    }

    fn tables(&self) -> impl Iterator<Item = &Subscribed> {
        self.dbs.iter().map(|db| &db.subscribed)
    }
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
        self.watched_capabilities()
    }

    /// Its watcher digests subscribed resources only ([`DigestWatched`]).
    fn hears_every_change(&self) -> bool {
        self.hears_unsubscribed_changes()
    }

    fn armed(&self) -> bool {
        self.watchers_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        if !self.config.watch {
            return;
        }
        for db in &self.dbs {
            watch::start(
                db,
                &feed,
                db.settings.poll_interval.max(Duration::from_millis(1)),
            );
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
            Some(bytes) => search::decode(bytes).ok_or_else(|| ResourceError::bad_position(""))?,
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
                .blocking_on(Arc::clone(db), &db.uri, move |db, c, cat| {
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
                let position = search::encode(db, &stage).ok_or_else(|| {
                    ResourceError::invalid(
                        "",
                        "a row's primary key is too large to continue the search after it",
                    )
                })?;
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
        db.subscribed.watching().await;
        let owned = uri.to_owned();
        let digest = self
            .blocking_on(Arc::clone(&db), uri, move |db, c, cat| {
                db.digest(c, cat, &owned)
            })
            .await?;
        if digest == digest::MISSING {
            return Err(ResourceError::not_found(uri));
        }
        db.subscribed.remember(uri, digest);
        Ok(())
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let limit = req.limit.max(1);
        let filter = req.filter.cloned();
        let Some(uri) = req.parent else {
            let dbs = self.dbs.clone();
            let after = req.after.map(<[u8]>::to_vec);
            let cache = self.config.cache;
            let budget = self.budget();
            let held = Arc::clone(&budget);
            return blocking::run(budget, move |_| {
                let paging = (after.as_deref(), limit, filter.as_ref());
                list_default(&dbs, &held, paging, cache)
            })
            .await;
        };
        let (target, db) = self.resolve(uri)?;
        let after = req.after.map(<[u8]>::to_vec);
        let cache = self.config.cache;
        let max = db.settings.max_row_bytes;
        self.blocking_on(db, uri, move |db, c, cat| {
            let page = match target {
                Target::Database { .. } => {
                    let after = after.as_deref().map(String::from_utf8_lossy);
                    let rest = keyset::after(&cat.relations, after.as_deref(), |r| r.name());
                    let listed = rest.iter().map(|r| (r, relation_resource(&db.name, r)));
                    let page = rsrc::filter::page(
                        filter.as_ref(),
                        listed,
                        limit,
                        |f, (_, resource)| f.matches_resource(resource),
                        |(r, _)| r.name().as_bytes().to_vec(),
                    );
                    Page {
                        resources: page.items.into_iter().map(|(_, r)| r.into()).collect(),
                        next: page.next,
                        cache,
                    }
                }
                Target::Relation { path, .. } => {
                    let rel = relation(cat, &path)?;
                    let from = RelationPosition::decode(after.as_deref())
                        .ok_or_else(|| OpError::BadPosition)?;
                    let rows = match from.rows_to_fetch(limit, filter.as_ref()) {
                        0 => (Vec::new(), true),
                        want => rows::list_keys(c, rel, from.after_key(), want)?,
                    };
                    let schema = schema_resource(&db.name, &rel.info, None);
                    relation_page(
                        (&db.name, &rel.info),
                        &from,
                        schema,
                        (&rows.0, rows.1),
                        (limit, filter.as_ref()),
                        cache,
                    )
                    .ok_or(OpError::KeyTooLarge)?
                }
                Target::Schema { path, .. } => {
                    relation(cat, &path)?;
                    return Err(OpError::NotACollection);
                }
                Target::Row { path, key, .. } => {
                    let rel = relation(cat, &path)?;
                    if rows::read_row(c, rel, &key, max, false)?.is_none() {
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
        self.blocking_on(db, uri, move |db, c, cat| {
            Ok(match target {
                Target::Database { .. } => database_resource(db, cat),
                Target::Relation { path, .. } => relation_resource(&db.name, relation(cat, &path)?),
                Target::Schema { path, .. } => {
                    let rel = relation(cat, &path)?;
                    let size = schema_json(&db.name, &rel.info).len();
                    schema_resource(&db.name, &rel.info, Some(size))
                }
                Target::Row { path, key, .. } => {
                    let rel = relation(cat, &path)?;
                    let row = rows::read_row(c, rel, &key, max, false)?.ok_or(OpError::NotFound)?;
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
            .blocking_on(db, uri, move |db, c, cat| {
                Ok(match target {
                    Target::Database { .. } => schema_documents(db, cat, budget),
                    Target::Relation { path, .. } => {
                        let rel = relation(cat, &path)?;
                        let schema = schema_contents(&db.name, &rel.info);
                        let mut used = 0u64;
                        let mut out = Vec::new();
                        if schema.body.len() as u64 <= budget {
                            used = schema.body.len() as u64;
                            out.push(schema);
                        }
                        let path = [rel.name()];
                        for row in rows::first_rows(c, rel, max_rows, max)? {
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
                        let mut entry = schema_contents(&db.name, &rel.info);
                        entry.resource.uri = owned;
                        vec![entry]
                    }
                    Target::Row { path, key, .. } => {
                        let rel = relation(cat, &path)?;
                        let row =
                            rows::read_row(c, rel, &key, max, csv)?.ok_or(OpError::NotFound)?;
                        row_contents(&owned, &row.key, row.json, row.csv)
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
                self.blocking_on(Arc::clone(db), &db.uri, move |_, _, cat| {
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
                self.blocking_on(Arc::clone(db), &uri, move |_, c, cat| {
                    match cat.get(&table) {
                        Some(rel) => complete::complete_key(c, rel, &prefix, scan),
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
