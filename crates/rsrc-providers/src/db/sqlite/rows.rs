//! Reading rows on one connection, on a blocking thread: a row by its key, a page of
//! keys, a table's first rows.
//!
//! Invariants:
//! - Every statement is built from catalog fragments ([`Relation`]) and binds every value.
//! - Memory is bounded by what is asked: a listing reads `limit + 1` keys through the
//!   key's index, a row at most the row limit, a table's first rows at most their count.

use rusqlite::{Connection, params_from_iter};

use super::catalog::{Relation, canonical_integer};
use super::conn::OpError;
use super::values::{cells, key_values, too_large};
use crate::db::model::KeyValue;
use crate::db::render::{row_csv, row_json};
use crate::db::uri::{RowKey, key_segment};

/// A row, rendered.
#[derive(Debug)]
pub(super) struct RowOut {
    /// Its key as stored (its position for a view).
    pub(super) key: Vec<KeyValue>,
    pub(super) json: String,
    pub(super) csv: Option<String>,
}

/// A view's row position in a segment: a canonical integer ≥ 1.
fn position(key: &RowKey) -> Option<i64> {
    canonical_integer(key.whole()).filter(|&n| n >= 1)
}

/// The row `key` names, or `None`.
pub(super) fn read_row(
    conn: &Connection,
    rel: &Relation,
    key: &RowKey,
    max: u64,
    csv: bool,
) -> Result<Option<RowOut>, OpError> {
    let (sql, params, key_len) = if rel.is_positional() {
        let Some(n) = position(key) else {
            return Ok(None);
        };
        (
            format!(
                "SELECT {} FROM {} ORDER BY {} LIMIT 1 OFFSET ?",
                rel.select, rel.from, rel.order
            ),
            vec![KeyValue::Integer(n - 1)],
            0,
        )
    } else {
        let Some(values) = key.values(rel.info.key_arity()) else {
            return Ok(None);
        };
        let Some((condition, params)) = rel.key_condition(&values) else {
            return Ok(None);
        };
        (
            format!(
                "SELECT {} FROM {} WHERE {condition} ORDER BY {} LIMIT 1",
                rel.select, rel.from, rel.order
            ),
            params,
            rel.key_sql.len(),
        )
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let key = if rel.is_positional() {
        vec![KeyValue::Integer(position(key).unwrap_or(1))]
    } else {
        key_values(row, key_len)?
    };
    let cells = cells(row, key_len, rel.column_names.len(), max)?;
    Ok(Some(RowOut {
        key,
        json: row_json(&rel.column_names, &cells),
        csv: csv.then(|| row_csv(&rel.column_names, &cells)),
    }))
}

/// The keys of up to `limit` rows after `after` (a position from a previous page), in key
/// order, and whether more follow.
pub(super) fn list_keys(
    conn: &Connection,
    rel: &Relation,
    after: Option<&[KeyValue]>,
    limit: usize,
) -> Result<(Vec<Vec<KeyValue>>, bool), OpError> {
    let fetch = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
    if rel.is_positional() {
        let start = match after {
            None => 0,
            Some([KeyValue::Integer(n)]) if *n >= 0 => *n,
            Some(_) => return Err(OpError::Internal("bad position".into())),
        };
        let sql = format!(
            "SELECT count(*) FROM (SELECT 1 FROM {} LIMIT ? OFFSET ?)",
            rel.from
        );
        let count: i64 = conn
            .prepare_cached(&sql)?
            .query_row([fetch, start], |r| r.get(0))?;
        let shown = count.min(i64::try_from(limit).unwrap_or(i64::MAX));
        let keys = (1..=shown)
            .map(|i| vec![KeyValue::Integer(start + i)])
            .collect();
        return Ok((keys, count > shown));
    }
    let arity = rel.key_sql.len();
    let mut params: Vec<KeyValue> = Vec::with_capacity(arity + 1);
    let sql = match after {
        None => format!(
            "SELECT {} FROM {} WHERE {} ORDER BY {} LIMIT ?",
            rel.key_sql.join(", "),
            rel.from,
            rel.addressable,
            rel.order
        ),
        Some(values) if values.len() == arity => {
            params.extend_from_slice(values);
            format!(
                "SELECT {} FROM {} WHERE {} AND {} ORDER BY {} LIMIT ?",
                rel.key_sql.join(", "),
                rel.from,
                rel.addressable,
                rel.after_condition(),
                rel.order
            )
        }
        Some(_) => return Err(OpError::Internal("bad position".into())),
    };
    params.push(KeyValue::Integer(fetch));
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    let mut keys = Vec::with_capacity(limit.min(4096));
    while let Some(row) = rows.next()? {
        if keys.len() == limit {
            return Ok((keys, true));
        }
        keys.push(key_values(row, arity)?);
    }
    Ok((keys, false))
}

/// The first `max_rows` rows in key order, rendered as JSON; rows over `max` bytes are
/// skipped. A keyed relation's rows are read one by one (a point lookup each), so that one
/// oversized row does not end the scan; a view's are read in one pass, which stops at an
/// oversized row.
pub(super) fn first_rows(
    conn: &Connection,
    rel: &Relation,
    max_rows: usize,
    max: u64,
) -> Result<Vec<RowOut>, OpError> {
    let mut out = Vec::new();
    if !rel.is_positional() {
        let (keys, _) = list_keys(conn, rel, None, max_rows)?;
        for key in keys {
            let segment = RowKey::from_segment(&key_segment(&key));
            match read_row(conn, rel, &segment, max, false) {
                Ok(Some(row)) => out.push(row),
                Ok(None) => {}
                Err(e) if too_large(&e) => {}
                Err(e) => return Err(e),
            }
        }
        return Ok(out);
    }
    let sql = format!(
        "SELECT {} FROM {} ORDER BY {} LIMIT ?",
        rel.select, rel.from, rel.order
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([i64::try_from(max_rows).unwrap_or(i64::MAX)])?;
    let mut ordinal = 0i64;
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) => {
                let e = OpError::Sql(e);
                if too_large(&e) {
                    break;
                }
                return Err(e);
            }
        };
        ordinal += 1;
        match cells(row, 0, rel.column_names.len(), max) {
            Ok(cells) => out.push(RowOut {
                key: vec![KeyValue::Integer(ordinal)],
                json: row_json(&rel.column_names, &cells),
                csv: None,
            }),
            Err(e) if too_large(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
