//! The one way a statement reaches PostgreSQL: on a pooled connection, preceded by
//! [`RESET`] in the same round trip.
//!
//! Invariant: no code of the provider holds a connection any other way. A [`Session`]'s
//! client is private to this module and its only method sends `RESET` before the
//! statement, so the start-up settings (read-only, the statement time limit, the
//! configured `search_path`) hold for every statement, whatever a view's function changed
//! in the one before (see `rows.rs`, "Session settings").

use deadpool_postgres::{Object, Pool, PoolError};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Error, Row};

/// Restores a connection's start-up settings and releases session locks.
const RESET: &str = "RESET ALL; SELECT pg_advisory_unlock_all()";

/// A pooled connection whose every statement starts from the start-up settings.
pub(super) struct Session {
    client: Object,
}

impl Session {
    /// A connection from `pool`.
    pub(super) async fn open(pool: &Pool) -> Result<Session, PoolError> {
        Ok(Session {
            client: pool.get().await?,
        })
    }

    /// Runs `sql` in one round trip (parse, bind and execute sent together, every
    /// parameter typed up front), after `RESET`: both go out before either answer comes
    /// back (tokio-postgres pipelines the requests of one connection), and the server runs
    /// them in order.
    pub(super) async fn query(
        &self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, Error> {
        use tracing::Instrument as _;
        // A statement of a request is its child; the poller's own are not traced.
        let span = rsrc::observe::child_span(|| {
            tracing::info_span!(
                target: "rsrc::postgres",
                "postgresql",
                otel.kind = "client",
                db.system.name = "postgresql",
            )
        });
        let (reset, rows) = async {
            tokio::join!(
                self.client.batch_execute(RESET),
                self.client.query_typed(sql, params)
            )
        }
        .instrument(span)
        .await;
        reset?;
        rows
    }
}
