//! Change digests of a SQLite database's resources, computed on one connection: what the
//! change watcher compares to tell a subscriber that its resource changed.
//!
//! Invariant: a digest reads a bounded number of rows (a relation's whole content only
//! up to `exact_rows` rows, else its count and its first and last keys); a missing
//! resource has the one digest [`MISSING`].

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use rusqlite::Connection;

use super::catalog::Relation;
use super::conn::OpError;
use super::values::{cells, key_values, too_large};
use crate::db::model::Cell;
use crate::db::uri::key_name;

/// The digest of a missing resource.
pub(super) const MISSING: u64 = 0x6d69_7373_696e_6721;

pub(super) fn hash_str(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

fn hash_cells(cells: &[Cell<'_>], h: &mut DefaultHasher) {
    for c in cells {
        match c {
            Cell::Null => 0u8.hash(h),
            Cell::Integer(i) => (1u8, i).hash(h),
            Cell::Real(f) => (2u8, f.to_bits()).hash(h),
            Cell::Text(b) => (3u8, b).hash(h),
            Cell::Blob(b) => (4u8, b).hash(h),
            Cell::Bool(b) => (5u8, b).hash(h),
            Cell::Json(s) => (6u8, s).hash(h),
        }
    }
}

/// A table's or view's digest: every row's content when it has at most `exact_rows` rows,
/// else its row count and first and last keys (a change inside a large table that keeps
/// both is not seen; its rows' own subscriptions see it).
pub(super) fn relation_digest(
    conn: &Connection,
    rel: &Relation,
    exact_rows: u64,
    max: u64,
) -> Result<u64, OpError> {
    let mut h = DefaultHasher::new();
    rel.fingerprint.hash(&mut h);
    let sql = format!(
        "SELECT count(*) FROM {} WHERE {}",
        rel.from, rel.addressable
    );
    let count: i64 = conn.prepare_cached(&sql)?.query_row([], |r| r.get(0))?;
    count.hash(&mut h);
    if u64::try_from(count).unwrap_or(u64::MAX) <= exact_rows {
        let sql = format!(
            "SELECT {} FROM {} WHERE {} ORDER BY {} LIMIT ?",
            rel.select, rel.from, rel.addressable, rel.order
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([i64::try_from(exact_rows).unwrap_or(i64::MAX)])?;
        let width = rel.key_sql.len() + rel.column_names.len();
        loop {
            match rows.next() {
                Ok(Some(row)) => match cells(row, 0, width, max) {
                    Ok(cells) => hash_cells(&cells, &mut h),
                    Err(e) if too_large(&e) => "too large".hash(&mut h),
                    Err(e) => return Err(e),
                },
                Ok(None) => break,
                // A value over the limit ends the scan: what was seen is the digest.
                Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig) => {
                    "too large".hash(&mut h);
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
    } else if !rel.is_positional() {
        let desc = rel
            .key_sql
            .iter()
            .map(|k| format!("{k} DESC"))
            .collect::<Vec<_>>()
            .join(", ");
        for order in [&rel.order, &desc] {
            let sql = format!(
                "SELECT {} FROM {} WHERE {} ORDER BY {order} LIMIT 1",
                rel.key_sql.join(", "),
                rel.from,
                rel.addressable
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query([])?;
            if let Some(row) = rows.next()? {
                key_name(&key_values(row, rel.key_sql.len())?).hash(&mut h);
            }
        }
    }
    Ok(h.finish())
}
