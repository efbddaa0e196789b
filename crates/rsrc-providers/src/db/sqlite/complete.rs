//! Completing a row key on one connection, on a blocking thread: a view's positions, an
//! integer or text key through the key's index, any other key by a bounded scan.
//!
//! Invariant: completion examines a bounded number of keys (index ranges, or at most
//! `scan` keys in key order) and returns at most [`Completion::MAX_VALUES`] values.

use rsrc::protocol::Completion;
use rusqlite::{Connection, params_from_iter};

use super::catalog::Relation;
use super::conn::OpError;
use super::values::key_values;
use crate::db::model::{KeyValue, ValueClass};
use crate::db::uri::key_name;

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
