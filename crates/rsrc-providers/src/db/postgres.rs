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
//! # Statements
//!
//! Every statement goes out in one round trip (`query_typed`: parse, bind and execute
//! together, each parameter an `int8` or a `text` cast in the SQL), so nothing is
//! prepared and kept on the server. Named prepared statements would save PostgreSQL's
//! parse and plan (~40 µs on loopback here) but cost one server-side statement per
//! relation, kind of query and pooled connection, and go stale when a column's type
//! changes; a point read already spends most of its time on the round trip.
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

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

mod catalog;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rsrc::protocol::{Completion, Resource, ResourceContents, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, ListRequest, Listed, Page, Provider, ReadOutput, RequestContext,
    ResourceError,
};
use tokio_postgres::NoTls;
use tokio_postgres::Row;
use tokio_postgres::types::{ToSql, Type};

use catalog::{Catalog, PgKind, Relation};

use super::{
    COLLECTION_MIME_TYPE, CSV_MIME_TYPE, Cell, JSON_MIME_TYPE, KeyKind, KeyValue, PREFIX, RowKey,
    SCHEMA_SEGMENT, Target, database_uri, decode_key_position, encode_key_position, key_name,
    push_segment, relation_uri, row_csv, row_json, row_uri, schema_json, schema_uri,
};

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

struct Inner {
    name: String,
    uri: String,
    pool: Pool,
    catalog: RwLock<Arc<Catalog>>,
    config: PostgresConfig,
    /// Digests of subscribed URIs, as last seen.
    watched: Mutex<HashMap<String, u64>>,
}

/// A PostgreSQL database as resources. Cheap to clone.
#[derive(Clone)]
pub struct PostgresProvider {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PostgresProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresProvider")
            .field("name", &self.inner.name)
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
        if name.is_empty() || name.contains('/') {
            return Err(PostgresError(format!("bad database name {name:?}")));
        }
        let ms = config.statement_timeout.as_millis().max(1);
        pg.options(format!(
            "-c default_transaction_read_only=on -c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}"
        ));
        pg.application_name("rsrc");
        pg.connect_timeout(config.connect_timeout);
        let manager = Manager::from_config(
            pg,
            NoTls,
            ManagerConfig {
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
        let inner = Arc::new(Inner {
            uri: database_uri(&name),
            name,
            pool,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            config,
            watched: Mutex::new(HashMap::new()),
        });
        let catalog = catalog::load(&inner.pool)
            .await
            .map_err(|e| PostgresError(format!("cannot read the database's catalog: {e}")))?;
        *write(&inner.catalog) = Arc::new(catalog);
        // The connection just used belongs to the caller's runtime, which may be a
        // short-lived one: start serving with an empty pool.
        inner.pool.retain(|_, _| false);
        Ok(PostgresProvider { inner })
    }

    /// The `{db}` of this database's URIs.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The mount prefix: `db://NAME`.
    pub fn prefix(&self) -> &str {
        &self.inner.uri
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// What went wrong talking to PostgreSQL, for one URI.
fn pg_error(uri: &str, e: &tokio_postgres::Error) -> ResourceError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        // Data exceptions (a key the type cannot hold) and a relation dropped since the
        // catalog was read: nothing is there.
        if code.starts_with("22") || code == "42P01" || code == "42703" {
            return ResourceError::not_found(uri);
        }
        if code == "57014" {
            return ResourceError::internal(format!(
                "{uri}: the statement took longer than the time limit"
            ));
        }
        return ResourceError::internal(format!("{uri}: PostgreSQL: {}", db.message()));
    }
    ResourceError::internal(format!("{uri}: PostgreSQL: {e}"))
}

fn pool_error(uri: &str, e: &deadpool_postgres::PoolError) -> ResourceError {
    ResourceError::internal(format!("{uri}: no connection to PostgreSQL: {e}"))
}

impl Inner {
    /// Runs `sql` on a pooled connection in one round trip (parse, bind and execute sent
    /// together, every parameter typed up front); errors are reported against `uri`.
    async fn query(
        &self,
        uri: &str,
        sql: &str,
        params: &[Param],
    ) -> Result<Vec<Row>, ResourceError> {
        let client = self.pool.get().await.map_err(|e| pool_error(uri, &e))?;
        let typed: Vec<(&(dyn ToSql + Sync), Type)> = params.iter().map(Param::typed).collect();
        client
            .query_typed(sql, &typed)
            .await
            .map_err(|e| pg_error(uri, &e))
    }

    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&read(&self.catalog))
    }

    /// Parses `uri` for this database: `None` when it names nothing of it.
    fn target(&self, uri: &str) -> Option<Target> {
        let t = parse_pg(uri)?;
        (t.db() == self.name).then_some(t)
    }

    fn database_resource(&self, cat: &Catalog) -> Resource {
        Resource::new(self.uri.clone(), self.name.clone())
            .with_description(format!(
                "PostgreSQL database: {} schema{}",
                cat.schemas.len(),
                if cat.schemas.len() == 1 { "" } else { "s" }
            ))
            .with_mime_type(COLLECTION_MIME_TYPE)
            .collection()
    }

    fn namespace_resource(&self, schema: &str, count: usize) -> Resource {
        Resource::new(relation_uri(&self.name, &[schema]), schema)
            .with_description(format!(
                "schema: {count} relation{}",
                if count == 1 { "" } else { "s" }
            ))
            .with_mime_type(COLLECTION_MIME_TYPE)
            .collection()
    }

    fn relation_resource(&self, rel: &Relation) -> Resource {
        let info = &rel.info;
        let addressed = match &info.key {
            KeyKind::PrimaryKey(_) => {
                format!("rows by primary key ({})", info.key_names().join(", "))
            }
            KeyKind::RowId(_) => "no primary key: rows by ctid".to_owned(),
            KeyKind::Position => "rows by position when sorted by the row's text".to_owned(),
        };
        Resource::new(relation_uri(&self.name, &rel.path()), info.name.clone())
            .with_description(format!(
                "{}, {} column{}; {addressed}",
                info.kind.as_str(),
                info.columns.len(),
                if info.columns.len() == 1 { "" } else { "s" }
            ))
            .with_mime_type(COLLECTION_MIME_TYPE)
            .collection()
    }

    fn schema_contents(&self, rel: &Relation) -> ResourceContents {
        let json = schema_json(&self.name, &rel.info);
        let r = Resource::new(schema_uri(&self.name, &rel.path()), SCHEMA_SEGMENT)
            .with_title(format!("Schema of {}", rel.info.name))
            .with_mime_type(JSON_MIME_TYPE)
            .with_size(json.len() as u64)
            .document();
        ResourceContents::text(r, json)
    }

    /// Decodes one result row into cells (borrowing `row`) and the key values.
    fn render(
        &self,
        uri: &str,
        rel: &Relation,
        row: &tokio_postgres::Row,
        key: &[KeyValue],
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let mut cells = Vec::with_capacity(rel.kinds.len());
        for (i, kind) in rel.kinds.iter().enumerate() {
            let cell = match kind {
                PgKind::Int => row
                    .try_get::<_, Option<i64>>(i)
                    .map(|v| v.map_or(Cell::Null, Cell::Integer)),
                PgKind::Float => row
                    .try_get::<_, Option<f64>>(i)
                    .map(|v| v.map_or(Cell::Null, Cell::Real)),
                PgKind::Bool => row
                    .try_get::<_, Option<bool>>(i)
                    .map(|v| v.map_or(Cell::Null, Cell::Bool)),
                PgKind::Json => row
                    .try_get::<_, Option<&str>>(i)
                    .map(|v| v.map_or(Cell::Null, Cell::Json)),
                PgKind::Bytes => row
                    .try_get::<_, Option<&[u8]>>(i)
                    .map(|v| v.map_or(Cell::Null, Cell::Blob)),
                PgKind::Text => row
                    .try_get::<_, Option<&str>>(i)
                    .map(|v| v.map_or(Cell::Null, |s| Cell::Text(s.as_bytes()))),
            }
            .map_err(|e| ResourceError::internal(format!("{uri}: cannot decode a value: {e}")))?;
            cells.push(cell);
        }
        let stored: usize = cells.iter().map(Cell::stored_len).sum();
        if stored > self.config.max_row_bytes {
            return Err(ResourceError::TooLarge {
                uri: uri.to_owned(),
                size: stored as u64,
                limit: self.config.max_row_bytes as u64,
            });
        }
        let names: Vec<&str> = rel.info.columns.iter().map(|c| c.name.as_str()).collect();
        let json = row_json(&names, &cells);
        let csv = row_csv(&names, &cells);
        let entry = |mime: &str, text: String| {
            let r = Resource::new(uri.to_owned(), key_name(key))
                .with_mime_type(mime)
                .with_size(text.len() as u64)
                .document();
            ResourceContents::text(r, text)
        };
        Ok(vec![entry(JSON_MIME_TYPE, json), entry(CSV_MIME_TYPE, csv)])
    }

    /// Reads the row `key` of `rel`: its JSON and CSV, or not found.
    async fn read_row(
        &self,
        uri: &str,
        rel: &Relation,
        key: &RowKey,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let missing = || ResourceError::not_found(uri);
        if rel.info.key == KeyKind::Position {
            let n = canonical_int(key.whole())
                .filter(|&n| n >= 1)
                .ok_or_else(missing)?;
            let sql = format!(
                "SELECT {} FROM {} t ORDER BY t::text OFFSET $1 LIMIT 1",
                rel.select_list(),
                rel.quoted
            );
            let rows = self.query(uri, &sql, &[Param::Int(n - 1)]).await?;
            let row = rows.first().ok_or_else(missing)?;
            return self.render(uri, rel, row, &[KeyValue::Integer(n)]);
        }
        let cols = rel.key_columns();
        let values = key.values(cols.len()).ok_or_else(missing)?;
        let (cond, params, key_values) = bind_key(&cols, &values, 1).ok_or_else(missing)?;
        let sql = format!(
            "SELECT {} FROM {} WHERE {cond} LIMIT 1",
            rel.select_list(),
            rel.quoted
        );
        let rows = self.query(uri, &sql, &params).await?;
        let row = rows.first().ok_or_else(missing)?;
        self.render(uri, rel, row, &key_values)
    }

    /// One page of `rel`'s rows after `after`: (URI, key) pairs and whether more follow.
    async fn row_page(
        &self,
        uri: &str,
        rel: &Relation,
        after: Option<&[KeyValue]>,
        limit: usize,
    ) -> Result<(Vec<Vec<KeyValue>>, bool), ResourceError> {
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        if rel.info.key == KeyKind::Position {
            let start = match after {
                Some([KeyValue::Integer(n)]) => *n,
                Some(_) => return Err(ResourceError::InvalidParams("bad cursor".into())),
                None => 0,
            };
            let sql = format!(
                "SELECT 1 FROM {} t ORDER BY t::text OFFSET $1 LIMIT $2",
                rel.quoted
            );
            let rows = self
                .query(uri, &sql, &[Param::Int(start), Param::Int(fetch)])
                .await?;
            let more = rows.len() > limit;
            let keys = (0..rows.len().min(limit))
                .map(|i| vec![KeyValue::Integer(start + 1 + i as i64)])
                .collect();
            return Ok((keys, more));
        }
        let cols = rel.key_columns();
        // Qualified and aliased: `ORDER BY "id"` would sort by an output column of that
        // name, the text.
        let select: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, (c, _, _))| format!("t.{c}::text AS k{i}"))
            .collect();
        let order: Vec<String> = cols.iter().map(|(c, _, _)| format!("t.{c}")).collect();
        let order = order.join(", ");
        let mut params = Vec::new();
        let cond = match after {
            None => "TRUE".to_owned(),
            Some(key) if key.len() == cols.len() => {
                let mut rhs = Vec::new();
                for ((_, kind, ty), v) in cols.iter().zip(key) {
                    let n = params.len() + 1;
                    match (kind, v) {
                        (PgKind::Int, KeyValue::Integer(i)) => {
                            params.push(Param::Int(*i));
                            rhs.push(format!("${n}::int8"));
                        }
                        (_, KeyValue::Text(t)) => {
                            let s = String::from_utf8(t.clone())
                                .map_err(|_| ResourceError::InvalidParams("bad cursor".into()))?;
                            params.push(Param::Text(s));
                            rhs.push(format!("${n}::text::{ty}"));
                        }
                        _ => return Err(ResourceError::InvalidParams("bad cursor".into())),
                    }
                }
                format!("({order}) > ({})", rhs.join(", "))
            }
            Some(_) => return Err(ResourceError::InvalidParams("bad cursor".into())),
        };
        let n = params.len() + 1;
        params.push(Param::Int(fetch));
        let sql = format!(
            "SELECT {} FROM {} t WHERE {cond} ORDER BY {order} LIMIT ${n}",
            select.join(", "),
            rel.quoted
        );
        let rows = self.query(uri, &sql, &params).await?;
        let more = rows.len() > limit;
        let mut keys = Vec::with_capacity(rows.len().min(limit));
        for row in rows.iter().take(limit) {
            let mut key = Vec::with_capacity(cols.len());
            for (i, (_, kind, _)) in cols.iter().enumerate() {
                let text: Option<&str> = row.get(i);
                let Some(text) = text else { continue };
                key.push(match kind {
                    PgKind::Int => text
                        .parse()
                        .map_or_else(|_| KeyValue::Text(text.into()), KeyValue::Integer),
                    _ => KeyValue::Text(text.as_bytes().to_vec()),
                });
            }
            if key.len() == cols.len() {
                keys.push(key);
            }
        }
        Ok((keys, more))
    }

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
    async fn remember(&self, uri: &str) {
        if let Ok(d) = self.digest(uri).await {
            let mut w = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
            if w.len() < self.config.max_watched {
                w.insert(uri.to_owned(), d);
            }
        }
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

/// The decimal integer `bytes` spells canonically (`42`, `-7`; not `042`, `+1`, ` 1`).
fn canonical_int(bytes: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(bytes).ok()?;
    let n: i64 = s.parse().ok()?;
    (n.to_string() == s).then_some(n)
}

/// A bound parameter: every value this provider sends is an `int8` or a `text` (cast in
/// the SQL to the column's type), so each goes out with its type and needs no prepare.
enum Param {
    Int(i64),
    Text(String),
}

impl Param {
    fn typed(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Param::Int(i) => (i, Type::INT8),
            Param::Text(t) => (t, Type::TEXT),
        }
    }
}

/// The condition `k1 = $a AND k2 = $b …` for key values from a URI, its parameters
/// (numbered from `first`) and the key values; `None` when a value cannot be a key of
/// this type (not an integer for an integer key, not UTF-8).
fn bind_key(
    cols: &[(String, PgKind, String)],
    values: &[&[u8]],
    first: usize,
) -> Option<(String, Vec<Param>, Vec<KeyValue>)> {
    let mut conds = Vec::with_capacity(cols.len());
    let mut params = Vec::with_capacity(cols.len());
    let mut key = Vec::with_capacity(cols.len());
    for (i, ((col, kind, ty), v)) in cols.iter().zip(values).enumerate() {
        let n = first + i;
        if *kind == PgKind::Int {
            let int = canonical_int(v)?;
            conds.push(format!("{col} = ${n}::int8"));
            params.push(Param::Int(int));
            key.push(KeyValue::Integer(int));
        } else {
            let s = std::str::from_utf8(v).ok()?;
            if s.contains('\0') {
                return None;
            }
            conds.push(format!("{col} = ${n}::text::{ty}"));
            params.push(Param::Text(s.to_owned()));
            key.push(KeyValue::Text(v.to_vec()));
        }
    }
    Some((conds.join(" AND "), params, key))
}

/// Listing position of the catalog listings: the URI of the last entry.
fn after_uri(after: Option<&[u8]>) -> Option<&str> {
    after.and_then(|a| std::str::from_utf8(a).ok())
}

/// A page of a URI-ordered, in-memory listing.
fn page_of(mut entries: Vec<Resource>, after: Option<&[u8]>, limit: usize) -> Page {
    entries.sort_by(|a, b| a.uri.cmp(&b.uri));
    let start = match after_uri(after) {
        Some(last) => entries.partition_point(|r| r.uri.as_str() <= last),
        None => 0,
    };
    let rest = entries.len().saturating_sub(start);
    let taken: Vec<Resource> = entries.into_iter().skip(start).take(limit).collect();
    let next = (rest > limit)
        .then(|| taken.last().map(|r| r.uri.clone().into_bytes()))
        .flatten();
    Page {
        resources: taken.into_iter().map(Listed::from).collect(),
        next,
        cache: None,
    }
}

impl Provider for PostgresProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        let mut base = String::from(PREFIX);
        push_segment(&mut base, self.inner.name.as_bytes());
        vec![
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{{pk}}"),
                format!("{}-rows", self.inner.name),
            )
            .with_title(format!("Rows of PostgreSQL database {}", self.inner.name))
            .with_description("A row by its primary key (ctid without one; position in views)")
            .with_mime_type(JSON_MIME_TYPE),
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{SCHEMA_SEGMENT}"),
                format!("{}-schemas", self.inner.name),
            )
            .with_title(format!("Table schemas of {}", self.inner.name))
            .with_mime_type(JSON_MIME_TYPE),
        ]
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let s = &self.inner;
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
            return Ok(page_of(entries, req.after, limit));
        };
        match s
            .target(parent)
            .ok_or_else(|| ResourceError::not_found(parent))?
        {
            Target::Database { .. } => {
                let entries = cat
                    .schemas
                    .iter()
                    .map(|(n, rels)| s.namespace_resource(n, rels.len()))
                    .collect();
                Ok(page_of(entries, req.after, limit))
            }
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat
                    .schemas
                    .get(&path[0])
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let entries = rels.values().map(|r| s.relation_resource(r)).collect();
                Ok(page_of(entries, req.after, limit))
            }
            Target::Relation { path, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let mut resources = Vec::new();
                let after = match req.after {
                    None => {
                        resources.push(Listed::from(s.schema_contents(rel).resource));
                        None
                    }
                    Some(bytes) => Some(
                        decode_key_position(bytes)
                            .ok_or_else(|| ResourceError::InvalidParams("bad cursor".into()))?,
                    ),
                };
                let room = limit.saturating_sub(resources.len()).max(1);
                let (keys, more) = s.row_page(parent, rel, after.as_deref(), room).await?;
                let path = rel.path();
                let next = if more {
                    keys.last().and_then(|k| encode_key_position(k))
                } else {
                    None
                };
                for key in &keys {
                    resources.push(Listed::from(
                        Resource::new(row_uri(&s.name, &path, key), key_name(key))
                            .with_mime_type(JSON_MIME_TYPE)
                            .document(),
                    ));
                }
                Ok(Page {
                    resources,
                    next,
                    cache: None,
                })
            }
            Target::Schema { .. } | Target::Row { .. } => {
                Err(ResourceError::not_a_collection(parent))
            }
        }
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let s = &self.inner;
        let cat = s.catalog();
        let missing = || ResourceError::not_found(uri);
        match s.target(uri).ok_or_else(missing)? {
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
        let s = &self.inner;
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
        let contents = match s.target(uri).ok_or_else(missing)? {
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

    fn offers_completion(&self) -> bool {
        true
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let s = &self.inner;
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
                let Some((col, _, _)) = rel.key_columns().into_iter().next() else {
                    return Ok(Completion::empty());
                };
                let pattern = format!(
                    "{}%",
                    req.value
                        .replace('\\', "\\\\")
                        .replace('%', "\\%")
                        .replace('_', "\\_")
                );
                let sql = format!(
                    "SELECT DISTINCT {col}::text AS k FROM {} WHERE {col}::text LIKE $1 ORDER BY k LIMIT $2",
                    rel.quoted
                );
                let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
                let rows = s
                    .query(&s.uri, &sql, &[Param::Text(pattern), Param::Int(fetch)])
                    .await?;
                let mut values: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
                let more = values.len() > limit;
                values.truncate(limit);
                let mut c = Completion::from_matches(values);
                if more {
                    c.has_more = Some(true);
                }
                Ok(c)
            }
            _ => Ok(Completion::empty()),
        }
    }

    fn offers_subscriptions(&self) -> bool {
        self.inner.config.watch
    }

    fn publishes_list_changes(&self) -> bool {
        self.inner.config.watch
    }

    fn attach(&self, feed: ChangeFeed) {
        if !self.inner.config.watch {
            return;
        }
        let inner = Arc::downgrade(&self.inner);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(poll(inner, feed));
            return;
        }
        // Built before any runtime exists (as `rsrc serve` does): poll from a thread of
        // its own; its connections live on that thread's runtime.
        let started = std::thread::Builder::new()
            .name(format!("rsrc-postgres-watch-{}", self.inner.name))
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt.block_on(poll(inner, feed)),
                    Err(e) => tracing::warn!(error = %e, "no change watcher: changes will not be notified"),
                }
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "no change watcher: changes will not be notified");
        }
    }

    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.metadata(ctx, uri).await?;
        self.inner.remember(uri).await;
        Ok(())
    }
}

/// Polls the cluster's snapshot horizon; ends when the provider is dropped.
async fn poll(inner: Weak<Inner>, feed: ChangeFeed) {
    const SQL: &str = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text";
    let mut last: Option<String> = None;
    let mut failing = false;
    loop {
        let interval = match inner.upgrade() {
            Some(s) => s.config.poll_interval,
            None => return,
        };
        tokio::time::sleep(interval).await;
        let Some(s) = inner.upgrade() else { return };
        let now = s
            .query(&s.uri, SQL, &[])
            .await
            .ok()
            .and_then(|rows| rows.first().map(|r| r.get::<_, String>(0)));
        match now {
            Some(v) => {
                failing = false;
                if last.as_ref().is_some_and(|l| *l != v) {
                    s.changed(&feed).await;
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
