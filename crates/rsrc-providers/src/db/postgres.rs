//! The PostgreSQL provider: one database served as `db://` resources in the layout of
//! [`crate::db`], with the database's schemas as one more collection level:
//!
//! | URI | resource |
//! |---|---|
//! | `db://{db}` | the database: a collection of its schemas |
//! | `db://{db}/{schema}` | a schema: a collection of its tables, views, materialized views and foreign tables |
//! | `db://{db}/{schema}/{table}` | a relation: a collection of its `$schema` document and rows |
//! | `db://{db}/{schema}/{table}/{pk}` | a row: JSON, and CSV as a format alternative |
//! | `db://{db}/{schema}/{table}/$schema` | the relation's schema document |
//!
//! `{db}` is the name the provider was given (`NAME=postgres://…`; by default the
//! database's own name), written literally in its templates
//! `db://NAME/{schema}/{table}/{pk}` and `db://NAME/{schema}/{table}/$schema`, so several
//! databases (and SQLite's `db://{db}/{table}/{pk}`) never share a template. The provider
//! is mounted at `db://NAME`; it answers only for exactly that database name.
//!
//! # Keys
//!
//! A table's primary key; a table without one is addressed by its `ctid` (the row's
//! physical position, `(page,item)`: it changes when the row is updated or the table
//! rewritten, so such URIs are only as stable as the rows). Views, materialized views and
//! foreign tables have no key: their rows are addressed by their 1-based position when
//! sorted by the whole row's text (`ORDER BY t::text`), deterministic for given data, and
//! reading position *n* sorts the relation (the statement timeout bounds it). Key values
//! are compared in the column's own type: an integer key takes only a canonical decimal
//! integer, any other is bound as text and cast to the column's catalog type
//! (`$1::text::uuid`), so an index on the key serves the lookup; a value the type cannot
//! hold (`not-a-uuid`) is a missing row.
//!
//! # Values
//!
//! Integers (`int2/4/8`, `oid`) are JSON numbers, `float4/8` numbers (non-finite: `null`),
//! `bool` booleans, `json`/`jsonb` the value itself, `bytea` base64, and everything else
//! (numeric, dates and times, uuid, arrays, …) PostgreSQL's own text form as a string
//! (`numeric` as a string keeps its precision).
//!
//! # Safety and limits
//!
//! Every connection of the pool (deadpool-postgres, at most `pool_size`) starts with
//! `default_transaction_read_only=on` and `statement_timeout`, so every statement runs in
//! a read-only transaction under a time limit whatever a view or function tries;
//! identifiers come only from the catalog (`pg_class`, `pg_attribute`, `pg_index`),
//! quoted, and every value is a bound parameter. Only relations the role may `SELECT`
//! from are served; the system schemas (`pg_catalog`, `information_schema`, `pg_toast`,
//! temporary schemas) never are. Rows larger than `max_row_bytes` are refused. The
//! connection is not encrypted (no TLS): use it on loopback or a trusted network.
//!
//! # Layout
//!
//! This file holds the provider and its URIs; `catalog.rs` what is served, `rows.rs`
//! every statement and how rows are decoded, `search.rs` searching by name and key,
//! `watch.rs` change notifications.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

mod catalog;
mod rows;
mod search;
mod statement;
mod watch;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rsrc::protocol::{Completion, Resource, ResourceContents, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, ListEntry, ListRequest, Page, Provider, ProviderCapabilities,
    ReadOutput, RequestContext, ResourceError, SearchRequest, keyset,
};
use tokio_postgres::NoTls;

use catalog::{Catalog, Relation};

use super::resources::{self, RelationPosition, counted, relation_page, schema_contents};
use super::{
    COLLECTION_MIME_TYPE, JSON_MIME_TYPE, PREFIX, RowKey, SCHEMA_SEGMENT, Target, database_uri,
    push_segment, relation_uri, row_uri,
};
use crate::kit::refusal::refused;
use crate::kit::source_name::is_segment_name;
use crate::kit::watch::Subscribed;

/// How the rows of a relation without a key are ordered (see "Keys" above).
const POSITION_ORDER: &str = "the row's text";

/// Settings of the PostgreSQL provider.
#[derive(Clone, Debug)]
pub struct PostgresConfig {
    /// Most connections open at once (default 8).
    pub pool_size: usize,
    /// Longest a statement may run (default 5 s).
    pub statement_timeout: Duration,
    /// Longest wait for a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Largest row read, in bytes (default 32 MiB).
    pub max_row_bytes: usize,
    /// Most bytes of child documents returned when a collection is read (default 1 MiB).
    pub collection_budget: usize,
    /// Most rows rendered when a relation is read (default 256).
    pub collection_max_rows: usize,
    /// Whether the database is polled for changes (default: yes).
    pub watch: bool,
    /// How often (default 500 ms).
    pub poll_interval: Duration,
    /// Most subscribed URIs digested per change; others are simply updated (default 1024).
    pub max_watched: usize,
    /// Most completion values (default 100).
    pub completion_limit: usize,
    /// The password, when the connection string holds none (default: none), so that it
    /// can be kept out of command lines and configuration files.
    pub password: Option<String>,
}

impl Default for PostgresConfig {
    fn default() -> Self {
        PostgresConfig {
            pool_size: 8,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            max_row_bytes: 32 * 1024 * 1024,
            collection_budget: 1024 * 1024,
            collection_max_rows: 256,
            watch: true,
            poll_interval: Duration::from_millis(500),
            max_watched: 1024,
            completion_limit: 100,
            password: None,
        }
    }
}

/// Why a PostgreSQL database could not be served.
#[derive(Debug)]
pub struct PostgresError(String);

impl std::fmt::Display for PostgresError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PostgresError {}

/// The served database: its name and URI, its connection pool, the served part of its
/// catalog as last read, the settings, and the subscribed URIs with their digests.
struct Database {
    name: String,
    /// `db://{name}`.
    uri: String,
    pool: Pool,
    catalog: RwLock<Arc<Catalog>>,
    config: PostgresConfig,
    /// Subscribed URIs and their last digests, for the change watcher.
    subscribed: Subscribed,
}

/// A PostgreSQL database as resources. Cheap to clone.
#[derive(Clone)]
pub struct PostgresProvider {
    db: Arc<Database>,
}

impl std::fmt::Debug for PostgresProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresProvider")
            .field("name", &self.db.name)
            .finish_non_exhaustive()
    }
}

impl PostgresProvider {
    /// Connects to `url` (`postgres://user@host:port/db` or a libpq key/value string),
    /// checks that the server answers and loads the catalog. `name` is the `{db}` of the
    /// URIs; `None` takes the database's name from the URL (or the user's, as libpq does).
    pub async fn connect(
        name: Option<String>,
        url: &str,
        config: PostgresConfig,
    ) -> Result<PostgresProvider, PostgresError> {
        let mut pg: tokio_postgres::Config = url
            .parse()
            .map_err(|e| PostgresError(format!("bad PostgreSQL connection string: {e}")))?;
        let name = name
            .or_else(|| pg.get_dbname().map(str::to_owned))
            .or_else(|| pg.get_user().map(str::to_owned))
            .ok_or_else(|| PostgresError("the connection string names no database".into()))?;
        if !is_segment_name(&name) {
            return Err(PostgresError(format!("bad database name {name:?}")));
        }
        let ms = config.statement_timeout.as_millis().max(1);
        pg.options(format!(
            "-c default_transaction_read_only=on -c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}"
        ));
        if let Some(password) = &config.password
            && pg.get_password().is_none()
        {
            pg.password(password.as_str());
        }
        pg.application_name("rsrc");
        pg.connect_timeout(config.connect_timeout);
        let manager = Manager::from_config(
            pg,
            NoTls,
            ManagerConfig {
                // Connections are reset before each statement instead (`statement.rs`),
                // sent in the same round trip.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(config.connect_timeout))
            .create_timeout(Some(config.connect_timeout))
            .build()
            .map_err(|e| PostgresError(format!("cannot build the connection pool: {e}")))?;
        let db = Arc::new(Database {
            uri: database_uri(&name),
            name,
            pool,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            subscribed: Subscribed::new(config.max_watched),
            config,
        });
        let catalog = catalog::load(&db.pool)
            .await
            .map_err(|e| PostgresError(format!("cannot read the database's catalog: {e}")))?;
        *write(&db.catalog) = Arc::new(catalog);
        // The connection just used belongs to the caller's runtime, which may be a
        // short-lived one: start serving with an empty pool.
        db.pool.retain(|_, _| false);
        Ok(PostgresProvider { db })
    }

    /// The `{db}` of this database's URIs.
    pub fn name(&self) -> &str {
        &self.db.name
    }

    /// The mount prefix: `db://NAME`.
    pub fn prefix(&self) -> &str {
        &self.db.uri
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl Database {
    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&read(&self.catalog))
    }

    /// Parses `uri` for this database; what names nothing of it is refused.
    fn target(&self, uri: &str) -> Result<Target, ResourceError> {
        parse_pg(uri)
            .filter(|t| t.db() == self.name)
            .ok_or_else(|| refused(uri, "not a URI of this database"))
    }

    fn database_resource(&self, cat: &Catalog) -> Resource {
        resources::database_resource(
            &self.name,
            format!(
                "PostgreSQL database: {}",
                counted(cat.schemas.len(), "schema")
            ),
        )
    }

    fn namespace_resource(&self, schema: &str, count: usize) -> Resource {
        Resource::new(relation_uri(&self.name, &[schema]), schema)
            .with_description(format!("schema: {}", counted(count, "relation")))
            .with_mime_type(COLLECTION_MIME_TYPE)
            .collection()
    }

    fn relation_resource(&self, rel: &Relation) -> Resource {
        resources::relation_resource(&self.name, &rel.info, POSITION_ORDER)
    }

    fn schema_contents(&self, rel: &Relation) -> ResourceContents {
        schema_contents(&self.name, &rel.info)
    }
}

/// Parses a PostgreSQL `db://` URI: the database, a schema (`db://d/s`), or the
/// two-level relation layout.
fn parse_pg(uri: &str) -> Option<Target> {
    if let Some(t) = super::parse(uri, 2) {
        return Some(t);
    }
    // `db://{db}/{schema}`: a namespace, which the shared parser leaves to backends.
    match super::parse(uri, 1)? {
        Target::Relation { db, path } => Some(Target::Relation { db, path }),
        _ => None,
    }
}

/// A page of a URI-ordered, in-memory listing under `filter`, keyset-paginated on the URI
/// of the last entry (examined, under a filter).
fn page_of(mut entries: Vec<Resource>, req: &ListRequest<'_>, limit: usize) -> Page {
    entries.sort_by(|a, b| a.uri.cmp(&b.uri));
    let after = req.after.and_then(|a| std::str::from_utf8(a).ok());
    let rest = keyset::after(&entries, after, |r| r.uri.as_str());
    let page = rsrc::filter::page(
        req.filter,
        rest,
        limit,
        |f, r| f.matches_resource(r),
        |r| r.uri.clone().into_bytes(),
    );
    Page {
        resources: page
            .items
            .into_iter()
            .cloned()
            .map(ListEntry::from)
            .collect(),
        next: page.next,
        cache: None,
    }
}

impl Provider for PostgresProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        let mut base = String::from(PREFIX);
        push_segment(&mut base, self.db.name.as_bytes());
        vec![
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{{pk}}"),
                format!("{}-rows", self.db.name),
            )
            .with_title(format!("Rows of PostgreSQL database {}", self.db.name))
            .with_description("A row by its primary key (ctid without one; position in views)")
            .with_mime_type(JSON_MIME_TYPE),
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{SCHEMA_SEGMENT}"),
                format!("{}-schemas", self.db.name),
            )
            .with_title(format!("Table schemas of {}", self.db.name))
            .with_mime_type(JSON_MIME_TYPE),
        ]
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let limit = req.limit.max(1);
        let Some(parent) = req.parent else {
            // The catalog: the database, its schemas, relations and schema documents.
            let mut entries = vec![s.database_resource(&cat)];
            for (schema, rels) in &cat.schemas {
                entries.push(s.namespace_resource(schema, rels.len()));
                for rel in rels.values() {
                    entries.push(s.relation_resource(rel));
                    entries.push(s.schema_contents(rel).resource);
                }
            }
            return Ok(page_of(entries, &req, limit));
        };
        match s.target(parent)? {
            Target::Database { .. } => {
                let entries = cat
                    .schemas
                    .iter()
                    .map(|(n, rels)| s.namespace_resource(n, rels.len()))
                    .collect();
                Ok(page_of(entries, &req, limit))
            }
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat
                    .schemas
                    .get(&path[0])
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let entries = rels.values().map(|r| s.relation_resource(r)).collect();
                Ok(page_of(entries, &req, limit))
            }
            Target::Relation { path, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let from = RelationPosition::decode(req.after)
                    .ok_or_else(|| ResourceError::bad_position(parent))?;
                let (keys, more) = match from.rows_to_fetch(limit, req.filter) {
                    0 => (Vec::new(), true),
                    want => s.row_page(parent, rel, from.after_key(), want).await?,
                };
                let schema = s.schema_contents(rel).resource;
                relation_page(
                    (&s.name, &rel.info),
                    &from,
                    schema,
                    (&keys, more),
                    (limit, req.filter),
                    None,
                )
                .ok_or_else(
                    || {
                        ResourceError::invalid(
                            parent,
                            format!(
                                "{parent}: a row's primary key is too large to continue the listing after it"
                            ),
                        )
                    },
                )
            }
            Target::Schema { .. } | Target::Row { .. } => {
                Err(ResourceError::not_a_collection(parent))
            }
        }
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let missing = || ResourceError::not_found(uri);
        match s.target(uri)? {
            Target::Database { .. } => Ok(s.database_resource(&cat)),
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat.schemas.get(&path[0]).ok_or_else(missing)?;
                Ok(s.namespace_resource(&path[0], rels.len()))
            }
            Target::Relation { path, .. } => {
                Ok(s.relation_resource(cat.relation(&path).ok_or_else(missing)?))
            }
            Target::Schema { path, .. } => Ok(s
                .schema_contents(cat.relation(&path).ok_or_else(missing)?)
                .resource),
            Target::Row { path, key, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                let mut entries = s.read_row(uri, rel, &key).await?;
                Ok(entries.swap_remove(0).resource)
            }
        }
    }

    async fn read(&self, _ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let missing = || ResourceError::not_found(uri);
        let budget = s.config.collection_budget;
        let within = |docs: Vec<ResourceContents>| {
            let mut used = 0;
            docs.into_iter()
                .take_while(|d| {
                    used += d.body.len();
                    used <= budget
                })
                .collect::<Vec<_>>()
        };
        let contents = match s.target(uri)? {
            Target::Database { .. } => within(
                cat.schemas
                    .values()
                    .flat_map(|rels| rels.values().map(|r| s.schema_contents(r)))
                    .collect(),
            ),
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat.schemas.get(&path[0]).ok_or_else(missing)?;
                within(rels.values().map(|r| s.schema_contents(r)).collect())
            }
            Target::Relation { path, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                let mut docs = vec![s.schema_contents(rel)];
                let (keys, _) = s
                    .row_page(uri, rel, None, s.config.collection_max_rows)
                    .await?;
                let mut used = docs[0].body.len();
                for key in keys {
                    let row_uri = row_uri(&s.name, &rel.path(), &key);
                    let segment = row_uri.rsplit('/').next().unwrap_or_default();
                    let mut entries = match s
                        .read_row(&row_uri, rel, &RowKey::from_segment(segment))
                        .await
                    {
                        Ok(e) => e,
                        Err(ResourceError::NotFound { .. }) => continue,
                        Err(e) => return Err(e),
                    };
                    entries.truncate(1);
                    used += entries[0].body.len();
                    if used > budget {
                        break;
                    }
                    docs.extend(entries);
                }
                docs
            }
            Target::Schema { path, .. } => {
                vec![s.schema_contents(cat.relation(&path).ok_or_else(missing)?)]
            }
            Target::Row { path, key, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                s.read_row(uri, rel, &key).await?
            }
        };
        Ok(contents.into())
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let limit = s.config.completion_limit;
        let prefixed = |names: &mut dyn Iterator<Item = &String>| {
            Completion::from_matches(
                names
                    .filter(|n| n.starts_with(req.value))
                    .take(limit)
                    .cloned()
                    .collect(),
            )
        };
        let schema = req.context.get("schema");
        match req.argument {
            "schema" => Ok(prefixed(&mut cat.schemas.keys())),
            "table" => match schema.and_then(|n| cat.schemas.get(n)) {
                Some(rels) => Ok(prefixed(&mut rels.keys())),
                None => Ok(prefixed(&mut cat.schemas.values().flat_map(|r| r.keys()))),
            },
            "pk" => {
                let (Some(schema), Some(table)) = (schema, req.context.get("table")) else {
                    return Ok(Completion::empty());
                };
                let Some(rel) = cat.relation(&[schema.clone(), table.clone()]) else {
                    return Ok(Completion::empty());
                };
                s.complete_keys(rel, req.value, limit).await
            }
            _ => Ok(Completion::empty()),
        }
    }

    /// The catalog by name, then rows by key (see [`search`]), resumable across calls.
    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        self.db
            .search(req.words, req.after, req.limit)
            .await
            .map(Some)
    }

    fn capabilities(&self) -> ProviderCapabilities {
        let watching = self.db.config.watch;
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    /// Its watcher digests subscribed resources only (`kit/watch.rs`): a change to one
    /// not yet subscribed is never published.
    fn hears_every_change(&self) -> bool {
        !self.capabilities().subscribe
    }

    fn armed(&self) -> bool {
        self.db.subscribed.is_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        if !self.db.config.watch {
            return;
        }
        watch::start(&self.db, &feed);
    }

    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.metadata(ctx, uri).await?;
        self.db.remember(uri).await;
        Ok(())
    }
}
