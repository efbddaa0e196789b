//! The served PostgreSQL database: its name and URI, its connection pool, the served part
//! of its catalog as last read, the settings and the subscribed URIs — the state the
//! provider (`provider.rs`), the statements (`rows.rs`, `search.rs`) and the watcher
//! (`watch.rs`) take — and how a URI names something of it.
//!
//! Invariant: every connection of the pool runs its statements in read-only transactions
//! under the statement timeout, whatever a view or function tries; a URI naming another
//! database, or nothing, is refused like a missing resource.

use std::sync::{Arc, PoisonError, RwLock};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rsrc::ResourceError;
use rsrc::protocol::{Resource, ResourceContents};
use tokio_postgres::NoTls;

use super::catalog::{self, Catalog, Relation};
use super::config::{PostgresConfig, PostgresError};
use crate::db::resources::{self, counted, schema_contents};
use crate::db::uri::{COLLECTION_MIME_TYPE, Target, database_uri, parse, relation_uri};
use crate::kit::refusal::refused;
use crate::kit::source_name::is_segment_name;
use crate::kit::watch::Subscribed;

/// How the rows of a relation without a key are ordered (see "Keys" in the module docs).
pub(super) const POSITION_ORDER: &str = "the row's text";

/// The served database: its name and URI, its connection pool, the served part of its
/// catalog as last read, the settings, and the subscribed URIs with their digests.
pub(super) struct Database {
    pub(super) name: String,
    /// `db://{name}`.
    pub(super) uri: String,
    pub(super) pool: Pool,
    catalog: RwLock<Arc<Catalog>>,
    pub(super) config: PostgresConfig,
    /// Subscribed URIs and their last digests, for the change watcher.
    pub(super) subscribed: Subscribed,
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl Database {
    /// Connects to `url` under `name`, checks that the server answers and loads the
    /// catalog (see [`PostgresProvider::connect`](super::PostgresProvider::connect)).
    pub(super) async fn connect(
        name: Option<String>,
        url: &str,
        config: PostgresConfig,
    ) -> Result<Arc<Database>, PostgresError> {
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
        db.replace_catalog(catalog);
        // The connection just used belongs to the caller's runtime, which may be a
        // short-lived one: start serving with an empty pool.
        db.pool.retain(|_, _| false);
        Ok(db)
    }

    pub(super) fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&read(&self.catalog))
    }

    /// Serves `catalog` from now on (read again after a change).
    pub(super) fn replace_catalog(&self, catalog: Catalog) {
        *write(&self.catalog) = Arc::new(catalog);
    }

    /// Parses `uri` for this database; what names nothing of it is refused.
    pub(super) fn target(&self, uri: &str) -> Result<Target, ResourceError> {
        parse_pg(uri)
            .filter(|t| t.db() == self.name)
            .ok_or_else(|| refused(uri, "not a URI of this database"))
    }

    pub(super) fn database_resource(&self, cat: &Catalog) -> Resource {
        resources::database_resource(
            &self.name,
            format!(
                "PostgreSQL database: {}",
                counted(cat.schemas.len(), "schema")
            ),
        )
    }

    pub(super) fn namespace_resource(&self, schema: &str, count: usize) -> Resource {
        Resource::new(relation_uri(&self.name, &[schema]), schema)
            .with_description(format!("schema: {}", counted(count, "relation")))
            .with_mime_type(COLLECTION_MIME_TYPE)
            .collection()
    }

    pub(super) fn relation_resource(&self, rel: &Relation) -> Resource {
        resources::relation_resource(&self.name, &rel.info, POSITION_ORDER)
    }

    pub(super) fn schema_contents(&self, rel: &Relation) -> ResourceContents {
        schema_contents(&self.name, &rel.info)
    }
}

/// Parses a PostgreSQL `db://` URI: the database, a schema (`db://d/s`), or the
/// two-level relation layout.
pub(super) fn parse_pg(uri: &str) -> Option<Target> {
    if let Some(t) = parse(uri, 2) {
        return Some(t);
    }
    // `db://{db}/{schema}`: a namespace, which the shared parser leaves to backends.
    match parse(uri, 1)? {
        Target::Relation { db, path } => Some(Target::Relation { db, path }),
        _ => None,
    }
}
