//! SQLite values to and from the shared forms ([`crate::db`]): a key bound as a parameter,
//! a result column read as a [`Cell`] or a key value, and the size rule on what is read.
//!
//! Invariant: a row's cells are refused ([`OpError::TooLarge`]) as soon as their stored
//! size passes the row limit, before more is decoded.

use rusqlite::Row;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};

use super::conn::OpError;
use crate::db::model::{Cell, KeyValue};

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

/// One result value as a cell.
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
pub(super) fn cells<'r>(
    row: &'r Row<'_>,
    from: usize,
    n: usize,
    max: u64,
) -> Result<Vec<Cell<'r>>, OpError> {
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

/// The first `n` columns of `row` as key values.
pub(super) fn key_values(row: &Row<'_>, n: usize) -> rusqlite::Result<Vec<KeyValue>> {
    (0..n)
        .map(|i| row.get_ref(i).map(|v| KeyValue::from(cell(v))))
        .collect()
}

/// Whether `e` says a row or value is over the size limit.
pub(super) fn too_large(e: &OpError) -> bool {
    match e {
        OpError::TooLarge(_) => true,
        OpError::Sql(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig),
        _ => false,
    }
}
