//! How rows are read from PostgreSQL: every statement of the provider, the key values
//! bound into them, and the decoding of a result row into the shared JSON and CSV forms.
//!
//! Invariant: identifiers in the SQL come only from the catalog (quoted there) and every
//! value from a URI or cursor is a bound parameter, typed up front.
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
//! # Session settings
//!
//! A function reached through a view can change session settings that would persist on
//! the pooled connection (`set_config('default_transaction_read_only', 'off', false)`, a
//! `statement_timeout`, the `search_path`, a session advisory lock). So every statement
//! is preceded by `RESET` (`statement.rs`, the one way statements are sent), which
//! restores the start-up settings (read-only, time limits,
//! the configured `search_path`): sent together with the statement, it costs no round
//! trip, only the server's work (a point read took 290 µs with it and 237 µs without, in
//! one run; resetting when a connection leaves the pool instead, a round trip more, took
//! 359 µs).

use std::time::Duration;

use rsrc::ResourceError;
use rsrc::protocol::{Completion, ResourceContents};
use tokio_postgres::Row;
use tokio_postgres::types::{ToSql, Type};

use super::catalog::{PgKind, Relation};
use super::database::Database;
use super::statement::Session;
use crate::db::model::{Cell, KeyKind, KeyValue};
use crate::db::render::{row_csv, row_json};
use crate::db::resources::row_contents;
use crate::db::uri::RowKey;

/// What went wrong talking to PostgreSQL, for one URI; `limit` is the statement time
/// limit the connection runs under.
fn pg_error(uri: &str, e: &tokio_postgres::Error, limit: Duration) -> ResourceError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        // Data exceptions (a key the type cannot hold) and a relation dropped since the
        // catalog was read: nothing is there.
        if code.starts_with("22") || code == "42P01" || code == "42703" {
            return ResourceError::not_found(uri);
        }
        // query_canceled: the statement timeout (nothing else cancels our statements).
        if code == "57014" {
            return crate::db::timeout::timed_out(uri, limit);
        }
        return ResourceError::internal(format!("PostgreSQL: {}", db.message()));
    }
    if e.is_closed() {
        tracing::warn!(%uri, error = %e, "PostgreSQL connection lost");
        return ResourceError::unavailable(
            uri,
            format!("{uri}: the connection to the database was lost; try again"),
        );
    }
    ResourceError::internal(format!("PostgreSQL: {e}"))
}

fn pool_error(uri: &str, e: &deadpool_postgres::PoolError) -> ResourceError {
    tracing::warn!(%uri, error = %e, "no connection to PostgreSQL");
    ResourceError::unavailable(
        uri,
        format!("{uri}: the database cannot be reached now; try again"),
    )
}

impl Database {
    /// Runs `sql` on a pooled connection in one round trip (parse, bind and execute sent
    /// together, every parameter typed up front); errors are reported against `uri`.
    pub(super) async fn query(
        &self,
        uri: &str,
        sql: &str,
        params: &[Param],
    ) -> Result<Vec<Row>, ResourceError> {
        let session = Session::open(&self.pool)
            .await
            .map_err(|e| pool_error(uri, &e))?;
        let typed: Vec<(&(dyn ToSql + Sync), Type)> = params.iter().map(Param::typed).collect();
        session
            .query(sql, &typed)
            .await
            .map_err(|e| pg_error(uri, &e, self.config.statement_timeout))
    }

    /// Decodes one result row into cells (borrowing `row`) and the key values.
    fn render(
        &self,
        uri: &str,
        rel: &Relation,
        row: &Row,
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
            return Err(ResourceError::too_large(
                uri.to_owned(),
                stored as u64,
                self.config.max_row_bytes as u64,
            ));
        }
        let names: Vec<&str> = rel.info.columns.iter().map(|c| c.name.as_str()).collect();
        let json = row_json(&names, &cells);
        let csv = row_csv(&names, &cells);
        Ok(row_contents(uri, key, json, Some(csv)))
    }

    /// Reads the row `key` of `rel`: its JSON and CSV, or not found.
    pub(super) async fn read_row(
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
    pub(super) async fn row_page(
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
                Some(_) => return Err(ResourceError::bad_position("")),
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
                                .map_err(|_| ResourceError::bad_position(""))?;
                            params.push(Param::Text(s));
                            rhs.push(format!("${n}::text::{ty}"));
                        }
                        _ => return Err(ResourceError::bad_position("")),
                    }
                }
                format!("({order}) > ({})", rhs.join(", "))
            }
            Some(_) => return Err(ResourceError::bad_position("")),
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

    /// Up to `limit` values of `rel`'s first key column that start with `prefix`.
    pub(super) async fn complete_keys(
        &self,
        rel: &Relation,
        prefix: &str,
        limit: usize,
    ) -> Result<Completion, ResourceError> {
        let Some((col, _, _)) = rel.key_columns().into_iter().next() else {
            return Ok(Completion::empty());
        };
        let pattern = format!(
            "{}%",
            prefix
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let sql = format!(
            "SELECT DISTINCT {col}::text AS k FROM {} WHERE {col}::text LIKE $1 ORDER BY k LIMIT $2",
            rel.quoted
        );
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let rows = self
            .query(&self.uri, &sql, &[Param::Text(pattern), Param::Int(fetch)])
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
}

/// The decimal integer `bytes` spells canonically (`42`, `-7`; not `042`, `+1`, ` 1`).
fn canonical_int(bytes: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(bytes).ok()?;
    let n: i64 = s.parse().ok()?;
    (n.to_string() == s).then_some(n)
}

/// A bound parameter: every value this provider sends is an `int8` or a `text` (cast in
/// the SQL to the column's type), so each goes out with its type and needs no prepare.
pub(super) enum Param {
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
