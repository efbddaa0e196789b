//! The backend-neutral description of a database's relations and values: what the
//! catalog says about a table or view ([`RelationInfo`]), one stored value borrowed from
//! a result row ([`Cell`]), an owned key value ([`KeyValue`]) and the keyset position
//! built from key values.
//!
//! Invariant: [`decode_key_position`] inverts [`encode_key_position`] exactly (types and
//! bits included), and never panics on any input; positions are at most
//! [`rsrc::MAX_POSITION_BYTES`].

use rsrc::MAX_POSITION_BYTES;

/// One stored value, borrowed from a result row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// SQL NULL.
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text: UTF-8 normally, but the bytes are passed as stored.
    Text(&'a [u8]),
    /// Bytes.
    Blob(&'a [u8]),
    /// A boolean (backends with a boolean type).
    Bool(bool),
    /// A JSON value, as valid JSON text (backends with a JSON type). Written as is.
    Json(&'a str),
}

impl Cell<'_> {
    /// The bytes this value occupies, roughly as stored (what a row size limit counts).
    pub fn stored_len(&self) -> usize {
        match self {
            Cell::Null | Cell::Bool(_) => 1,
            Cell::Integer(_) | Cell::Real(_) => 8,
            Cell::Text(b) | Cell::Blob(b) => b.len(),
            Cell::Json(s) => s.len(),
        }
    }
}

/// An owned key value: what a row's URI and a listing position are made of.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyValue {
    /// SQL NULL (rows whose key holds one are not addressable; see the backend).
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, as stored.
    Text(Vec<u8>),
    /// Bytes.
    Blob(Vec<u8>),
}

impl KeyValue {
    /// The value as it appears (before percent-encoding) in a URI: integers in decimal,
    /// reals in their shortest round-trip form, text and blobs as their bytes; NULL is
    /// empty.
    pub fn text(&self) -> Vec<u8> {
        match self {
            KeyValue::Null => Vec::new(),
            KeyValue::Integer(i) => i.to_string().into_bytes(),
            KeyValue::Real(f) => real_text(*f).into_bytes(),
            KeyValue::Text(b) | KeyValue::Blob(b) => b.clone(),
        }
    }
}

impl From<Cell<'_>> for KeyValue {
    fn from(c: Cell<'_>) -> Self {
        match c {
            Cell::Null => KeyValue::Null,
            Cell::Integer(i) => KeyValue::Integer(i),
            Cell::Real(f) => KeyValue::Real(f),
            Cell::Text(b) => KeyValue::Text(b.to_vec()),
            Cell::Blob(b) => KeyValue::Blob(b.to_vec()),
            Cell::Bool(b) => KeyValue::Integer(i64::from(b)),
            Cell::Json(s) => KeyValue::Text(s.as_bytes().to_vec()),
        }
    }
}

/// A real as text: the shortest form that reads back to the same bits (`1.0`, `0.1`,
/// `1e+300`); `inf`, `-inf` and `NaN` for the non-finite ones.
pub(crate) fn real_text(f: f64) -> String {
    if f.is_finite() {
        serde_json::to_string(&f).unwrap_or_else(|_| format!("{f:?}"))
    } else if f.is_nan() {
        "NaN".to_owned()
    } else if f > 0.0 {
        "inf".to_owned()
    } else {
        "-inf".to_owned()
    }
}

const POSITION_VERSION: u8 = 1;

/// Encodes key values as a listing position (type-tagged, exact), or `None` if that takes
/// more than [`MAX_POSITION_BYTES`] (a key of several kilobytes).
pub fn encode_key_position(key: &[KeyValue]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(16);
    out.push(POSITION_VERSION);
    for v in key {
        match v {
            KeyValue::Null => out.push(0),
            KeyValue::Integer(i) => {
                out.push(1);
                out.extend(i.to_be_bytes());
            }
            KeyValue::Real(f) => {
                out.push(2);
                out.extend(f.to_bits().to_be_bytes());
            }
            KeyValue::Text(b) | KeyValue::Blob(b) => {
                out.push(if matches!(v, KeyValue::Text(_)) { 3 } else { 4 });
                out.extend(u32::try_from(b.len()).ok()?.to_be_bytes());
                out.extend_from_slice(b);
            }
        }
        if out.len() > MAX_POSITION_BYTES {
            return None;
        }
    }
    Some(out)
}

/// Decodes a position made by [`encode_key_position`]; `None` if it is not one.
pub fn decode_key_position(mut bytes: &[u8]) -> Option<Vec<KeyValue>> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if bytes.len() < n {
            return None;
        }
        let (head, tail) = bytes.split_at(n);
        *bytes = tail;
        Some(head)
    }
    fn eight(bytes: &mut &[u8]) -> Option<[u8; 8]> {
        take(bytes, 8)?.try_into().ok()
    }
    if take(&mut bytes, 1)? != [POSITION_VERSION] {
        return None;
    }
    let mut key = Vec::new();
    while let Some(&[tag]) = take(&mut bytes, 1) {
        key.push(match tag {
            0 => KeyValue::Null,
            1 => KeyValue::Integer(i64::from_be_bytes(eight(&mut bytes)?)),
            2 => KeyValue::Real(f64::from_bits(u64::from_be_bytes(eight(&mut bytes)?))),
            3 | 4 => {
                let len: [u8; 4] = take(&mut bytes, 4)?.try_into().ok()?;
                let len = usize::try_from(u32::from_be_bytes(len)).ok()?;
                let data = take(&mut bytes, len)?.to_vec();
                if tag == 3 {
                    KeyValue::Text(data)
                } else {
                    KeyValue::Blob(data)
                }
            }
            _ => return None,
        });
    }
    Some(key)
}

/// What kind of relation a table-like resource is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelationKind {
    /// A table.
    Table,
    /// A view.
    View,
    /// A virtual table (SQLite) or foreign table (PostgreSQL).
    Virtual,
    /// A materialized view (PostgreSQL).
    MaterializedView,
}

impl RelationKind {
    /// The kind as the schema document writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
            RelationKind::Virtual => "virtual table",
            RelationKind::MaterializedView => "materialized view",
        }
    }
}

/// How a key segment is bound when a row is looked up: what the column can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueClass {
    /// Only integers (a rowid, SQLite's `INTEGER PRIMARY KEY`, PostgreSQL integer types):
    /// anything but a canonical decimal integer is a missing row.
    Integer,
    /// Numbers normally, anything possibly (SQLite INTEGER/REAL/NUMERIC affinity).
    Numeric,
    /// Text normally (SQLite TEXT affinity).
    Text,
    /// Anything (SQLite BLOB or no affinity).
    Any,
}

/// One column of a relation.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnInfo {
    /// The column's name.
    pub name: String,
    /// Its declared type, as written (may be empty).
    pub declared_type: String,
    /// What it holds, for binding key values.
    pub class: ValueClass,
    /// Whether NULL is refused.
    pub not_null: bool,
    /// The default value's SQL text.
    pub default: Option<String>,
    /// The column's 1-based position in the primary key.
    pub primary_key: Option<u32>,
    /// Whether it is computed (a generated column).
    pub generated: bool,
}

/// How rows of a relation are addressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// By the primary key: these column indexes, in key order.
    PrimaryKey(Vec<usize>),
    /// By the row id, under this name (SQLite `rowid`, `_rowid_` or `oid`).
    RowId(String),
    /// By the row's 1-based position in a deterministic order (views).
    Position,
}

/// What the catalog says about one table or view.
#[derive(Clone, Debug, PartialEq)]
pub struct RelationInfo {
    /// The namespace (PostgreSQL schema), if the backend has them.
    pub namespace: Option<String>,
    /// The relation's name.
    pub name: String,
    /// Table, view, …
    pub kind: RelationKind,
    /// The columns, in order.
    pub columns: Vec<ColumnInfo>,
    /// How rows are addressed.
    pub key: KeyKind,
    /// The definition (`CREATE …` statement), if known.
    pub definition: Option<String>,
    /// Backend-specific flags written into the schema document (e.g. `withoutRowid`).
    pub flags: Vec<(&'static str, bool)>,
}

impl RelationInfo {
    /// The names between the database and a row: `[name]` or `[namespace, name]`.
    pub fn path(&self) -> Vec<&str> {
        match &self.namespace {
            Some(ns) => vec![ns.as_str(), self.name.as_str()],
            None => vec![self.name.as_str()],
        }
    }

    /// The key's column names (the row-id name for [`KeyKind::RowId`], none for
    /// [`KeyKind::Position`]).
    pub fn key_names(&self) -> Vec<&str> {
        match &self.key {
            KeyKind::PrimaryKey(cols) => cols
                .iter()
                .filter_map(|&i| self.columns.get(i).map(|c| c.name.as_str()))
                .collect(),
            KeyKind::RowId(name) => vec![name.as_str()],
            KeyKind::Position => Vec::new(),
        }
    }

    /// How many values a row's key has (1 for a row id or a position).
    pub fn key_arity(&self) -> usize {
        match &self.key {
            KeyKind::PrimaryKey(cols) => cols.len(),
            KeyKind::RowId(_) | KeyKind::Position => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_exactly() {
        let key = vec![
            KeyValue::Null,
            KeyValue::Integer(i64::MIN),
            KeyValue::Real(-0.0),
            KeyValue::Text(b"\xff text".to_vec()),
            KeyValue::Blob(vec![]),
        ];
        let pos = encode_key_position(&key).unwrap();
        let back = decode_key_position(&pos).unwrap();
        assert_eq!(back.len(), key.len());
        assert!(matches!(back[2], KeyValue::Real(f) if f.to_bits() == (-0.0f64).to_bits()));
        assert_eq!(back[3], key[3]);
        assert!(encode_key_position(&[KeyValue::Text(vec![b'x'; MAX_POSITION_BYTES])]).is_none());
    }

    #[test]
    fn garbage_positions_are_refused_without_panicking() {
        for bad in [
            &b""[..],
            &[0],
            &[1, 1, 0],
            &[1, 3, 0, 0, 0, 9, b'x'],
            &[1, 9],
            &[1, 3, 255, 255, 255, 255],
        ] {
            assert_eq!(decode_key_position(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn reals_print_in_their_shortest_round_trip_form() {
        assert_eq!(real_text(1.0), "1.0");
        assert_eq!(real_text(0.1), "0.1");
        assert_eq!(real_text(1e300), "1e+300");
        assert_eq!(real_text(f64::NEG_INFINITY), "-inf");
        for f in [0.1, 1.0 / 3.0, 1e-300, 123_456_789.123] {
            assert_eq!(real_text(f).parse::<f64>().unwrap().to_bits(), f.to_bits());
        }
    }
}
