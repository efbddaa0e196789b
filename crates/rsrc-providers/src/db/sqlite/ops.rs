//! The work done on one connection, on a blocking thread: reading a row, a page of keys,
//! a table's first rows, key completion and change digests.
//!
//! Invariants:
//! - Every statement is built from catalog fragments ([`Relation`]) and binds every value.
//! - Memory is bounded by what is asked: a listing reads `limit + 1` keys through the
//!   key's index, a row at most the row limit, completion and digests a bounded number
//!   of keys or rows.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use rsrc::protocol::Completion;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Row, params_from_iter};

use super::catalog::{Relation, canonical_integer};
use super::conn::OpError;
use crate::db::{Cell, KeyValue, RowKey, ValueClass, key_name, key_segment, row_csv, row_json};

impl ToSql for KeyValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            KeyValue::Null => ValueRef::Null,
            KeyValue::Integer(i) => ValueRef::Integer(*i),
            KeyValue::Real(f) => ValueRef::Real(*f),
            KeyValue::Text(b) => ValueRef::Text(b),
            KeyValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn cell(v: ValueRef<'_>) -> Cell<'_> {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Integer(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(b) => Cell::Text(b),
        ValueRef::Blob(b) => Cell::Blob(b),
    }
}

/// The cells of columns `from..from + n` of `row`, refused past `max` bytes.
fn cells<'r>(row: &'r Row<'_>, from: usize, n: usize, max: u64) -> Result<Vec<Cell<'r>>, OpError> {
    let mut out = Vec::with_capacity(n);
    let mut size = 0u64;
    for i in from..from + n {
        let c = cell(row.get_ref(i)?);
        size += c.stored_len() as u64;
        if size > max {
            return Err(OpError::TooLarge(size));
        }
        out.push(c);
    }
    Ok(out)
}

fn key_values(row: &Row<'_>, n: usize) -> rusqlite::Result<Vec<KeyValue>> {
    (0..n)
        .map(|i| row.get_ref(i).map(|v| KeyValue::from(cell(v))))
        .collect()
}

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

/// Whether `e` says a row or value is over the size limit.
fn too_large(e: &OpError) -> bool {
    match e {
        OpError::TooLarge(_) => true,
        OpError::Sql(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig),
        _ => false,
    }
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

/// The most completion values returned.
const MAX_COMPLETIONS: usize = Completion::MAX_VALUES;

/// Key values whose text starts with `prefix`, in key order, at most 100; `scan` bounds
/// how many keys are examined when no index range can find them.
pub(super) fn complete_key(
    conn: &Connection,
    rel: &Relation,
    prefix: &str,
    scan: usize,
) -> Result<Completion, OpError> {
    let mut found: Vec<String> = Vec::new();
    let mut more = false;
    if rel.is_positional() {
        let cap = i64::try_from(scan).unwrap_or(i64::MAX);
        let sql = format!("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT ?)", rel.from);
        let count: i64 = conn.prepare_cached(&sql)?.query_row([cap], |r| r.get(0))?;
        for n in 1..=count {
            let s = n.to_string();
            if s.starts_with(prefix) {
                if found.len() == MAX_COMPLETIONS {
                    more = true;
                    break;
                }
                found.push(s);
            }
        }
    } else if rel.key_sql.len() == 1
        && rel.key_classes[0] != ValueClass::Text
        && integer_prefix(prefix).is_some()
    {
        more = complete_integer(conn, rel, prefix, &mut found)?;
    } else if rel.key_sql.len() == 1
        && !prefix.is_empty()
        && rel.key_classes[0] != ValueClass::Integer
    {
        more = complete_text(conn, rel, prefix, &mut found)?;
    } else {
        more = complete_scan(conn, rel, prefix, scan, &mut found)?;
    }
    Ok(Completion {
        values: found,
        total: None,
        has_more: Some(more),
    })
}

/// `Some((negative, digits))` when `prefix` can begin a decimal integer.
fn integer_prefix(prefix: &str) -> Option<(bool, &str)> {
    let (negative, digits) = match prefix.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, prefix),
    };
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then_some((negative, digits))
}

/// Adds the matches of `rows` to `found`; `true` once a match beyond the limit is seen.
fn take_matches(
    rows: &mut rusqlite::Rows<'_>,
    prefix: &str,
    found: &mut Vec<String>,
) -> Result<bool, OpError> {
    while let Some(row) = rows.next()? {
        let key = key_values(row, 1)?;
        let Ok(text) = String::from_utf8(key[0].text()) else {
            continue;
        };
        if text.starts_with(prefix) {
            if found.len() == MAX_COMPLETIONS {
                return Ok(true);
            }
            found.push(text);
        }
    }
    Ok(false)
}

/// Integers whose decimal form starts with the typed digits: for each length, the range
/// `[d·10^k, (d+1)·10^k)` (mirrored for negatives), read through the key's index.
fn complete_integer(
    conn: &Connection,
    rel: &Relation,
    prefix: &str,
    found: &mut Vec<String>,
) -> Result<bool, OpError> {
    let key = &rel.key_sql[0];
    let fetch = i64::try_from(MAX_COMPLETIONS + 1).unwrap_or(i64::MAX);
    let Some((negative, digits)) = integer_prefix(prefix) else {
        return Ok(false);
    };
    if digits.is_empty() {
        let sql = if negative {
            format!(
                "SELECT {key} FROM {} WHERE {key} < 0 ORDER BY {key} DESC LIMIT ?",
                rel.from
            )
        } else {
            format!(
                "SELECT {key} FROM {} WHERE {} ORDER BY {} LIMIT ?",
                rel.from, rel.addressable, rel.order
            )
        };
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([fetch])?;
        return take_matches(&mut rows, prefix, found);
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Ok(false);
    }
    let Ok(d) = digits.parse::<i128>() else {
        return Ok(false);
    };
    let sql_pos = format!(
        "SELECT {key} FROM {} WHERE {key} BETWEEN ? AND ? ORDER BY {key} LIMIT ?",
        rel.from
    );
    let sql_neg = format!(
        "SELECT {key} FROM {} WHERE {key} BETWEEN ? AND ? ORDER BY {key} DESC LIMIT ?",
        rel.from
    );
    let mut scale: i128 = 1;
    loop {
        let lo = d * scale;
        let hi = (d + 1) * scale - 1;
        if lo > i128::from(i64::MAX) {
            return Ok(false);
        }
        let hi = hi.min(i128::from(i64::MAX));
        let (a, b, sql) = if negative {
            (-hi, -lo, &sql_neg)
        } else {
            (lo, hi, &sql_pos)
        };
        let (Ok(a), Ok(b)) = (i64::try_from(a), i64::try_from(b)) else {
            return Ok(false);
        };
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query([a, b, fetch])?;
        if take_matches(&mut rows, prefix, found)? {
            return Ok(true);
        }
        if d == 0 {
            // Only 0 itself starts with "0".
            return Ok(false);
        }
        scale *= 10;
    }
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut s = prefix.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xFF {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

/// Text keys starting with `prefix`: the range `[prefix, successor)` of the key's index.
fn complete_text(
    conn: &Connection,
    rel: &Relation,
    prefix: &str,
    found: &mut Vec<String>,
) -> Result<bool, OpError> {
    let key = &rel.key_sql[0];
    let fetch = KeyValue::Integer(i64::try_from(MAX_COMPLETIONS + 1).unwrap_or(i64::MAX));
    let low = KeyValue::Text(prefix.as_bytes().to_vec());
    let (sql, params) = match successor(prefix.as_bytes()) {
        Some(high) => (
            format!(
                "SELECT {key} FROM {} WHERE {key} >= ? AND {key} < ? ORDER BY {key} LIMIT ?",
                rel.from
            ),
            vec![low, KeyValue::Text(high), fetch],
        ),
        None => (
            format!(
                "SELECT {key} FROM {} WHERE {key} >= ? ORDER BY {key} LIMIT ?",
                rel.from
            ),
            vec![low, fetch],
        ),
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    take_matches(&mut rows, prefix, found)
}

/// Any key: the first `scan` keys in key order, filtered by their text.
fn complete_scan(
    conn: &Connection,
    rel: &Relation,
    prefix: &str,
    scan: usize,
    found: &mut Vec<String>,
) -> Result<bool, OpError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {} ORDER BY {} LIMIT ?",
        rel.key_sql.join(", "),
        rel.from,
        rel.addressable,
        rel.order
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([i64::try_from(scan).unwrap_or(i64::MAX)])?;
    while let Some(row) = rows.next()? {
        let key = key_values(row, rel.key_sql.len())?;
        // A composite key whose values hold `,` has no string form that survives a
        // template expansion; text that is not UTF-8 has none at all.
        let ambiguous = key.len() > 1 && key.iter().any(|v| v.text().contains(&b','));
        let text = key_name(&key);
        if text.starts_with(prefix) && !ambiguous && !text.contains('\u{FFFD}') {
            if found.len() == MAX_COMPLETIONS {
                return Ok(true);
            }
            found.push(text);
        }
    }
    Ok(false)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successors_bound_every_string_with_the_prefix() {
        assert_eq!(successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(successor(b"\xff\xff"), None);
    }

    #[test]
    fn integer_prefixes_are_digits_with_an_optional_sign() {
        assert_eq!(integer_prefix("12"), Some((false, "12")));
        assert_eq!(integer_prefix("-"), Some((true, "")));
        assert_eq!(integer_prefix(""), Some((false, "")));
        assert_eq!(integer_prefix("1a"), None);
    }
}
