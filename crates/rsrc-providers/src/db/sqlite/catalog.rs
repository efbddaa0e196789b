//! What one SQLite database holds: its tables and views, their columns and keys, read from
//! `pragma_table_list` and `pragma_table_xinfo`, with the SQL fragments that address them.
//!
//! Invariant: the only identifiers ever placed in SQL text are names read from this
//! catalog, quoted as identifiers (`"` doubled); every value is a bound parameter.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::Arc;

use rusqlite::Connection;

use crate::db::model::{ColumnInfo, KeyKind, KeyValue, RelationInfo, RelationKind, ValueClass};

/// `name` as an SQL identifier.
pub(super) fn quote(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    s.push_str(&name.replace('"', "\"\""));
    s.push('"');
    s
}

/// A table or view, with the SQL that addresses it.
#[derive(Debug)]
pub(super) struct Relation {
    pub(super) info: RelationInfo,
    /// The column names, for rendering.
    pub(super) column_names: Vec<String>,
    /// `FROM` target: the quoted name.
    pub(super) from: String,
    /// The key's SQL expressions (quoted names), none for positions.
    pub(super) key_sql: Vec<String>,
    /// What each key column holds.
    pub(super) key_classes: Vec<ValueClass>,
    /// The key columns, then every column: `"k", "a", "b"`.
    pub(super) select: String,
    /// The `ORDER BY` terms: the key, or every column by number for positions.
    pub(super) order: String,
    /// `k1 IS NOT NULL AND …` when some key column may hold NULL (such rows have no
    /// address), else `1`.
    pub(super) addressable: String,
    /// A hash of the definition and columns (the database's fingerprint is made of these).
    pub(super) fingerprint: u64,
}

impl Relation {
    pub(super) fn name(&self) -> &str {
        &self.info.name
    }

    pub(super) fn is_positional(&self) -> bool {
        self.info.key == KeyKind::Position
    }

    /// `k > ?` or `(k1, k2) > (?, ?)`: the rows after a listing position.
    pub(super) fn after_condition(&self) -> String {
        if self.key_sql.len() == 1 {
            format!("{} > ?", self.key_sql[0])
        } else {
            let marks = vec!["?"; self.key_sql.len()].join(", ");
            format!("({}) > ({marks})", self.key_sql.join(", "))
        }
    }

    /// The condition selecting the row with `values` (one segment per key column), and
    /// its parameters; `None` when a value cannot be in its column (a non-integer for an
    /// integer key), which is a missing row.
    pub(super) fn key_condition(&self, values: &[&[u8]]) -> Option<(String, Vec<KeyValue>)> {
        let mut sql = String::new();
        let mut params = Vec::new();
        for (i, (expr, bytes)) in self.key_sql.iter().zip(values).enumerate() {
            let candidates = candidates(self.key_classes[i], bytes);
            if candidates.is_empty() {
                return None;
            }
            if i > 0 {
                sql.push_str(" AND ");
            }
            sql.push_str(expr);
            if candidates.len() == 1 {
                sql.push_str(" = ?");
            } else {
                sql.push_str(" IN (");
                sql.push_str(&vec!["?"; candidates.len()].join(", "));
                sql.push(')');
            }
            params.extend(candidates);
        }
        Some((sql, params))
    }
}

/// `bytes` as a canonical decimal integer (`42`, `-7`; not `+1`, `01` or ` 1`).
pub(super) fn canonical_integer(bytes: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(bytes).ok()?;
    let i: i64 = s.parse().ok()?;
    (i.to_string() == s).then_some(i)
}

/// The values a key segment may stand for in a column of this class. An integer-only
/// column takes a canonical integer or nothing. Others take the segment as text and as a
/// blob, and as a number when it reads as one; SQLite's affinity rules make a numeric
/// column compare text like `'42'` as the number 42.
fn candidates(class: ValueClass, bytes: &[u8]) -> Vec<KeyValue> {
    let int = canonical_integer(bytes);
    match class {
        ValueClass::Integer => int.map(KeyValue::Integer).into_iter().collect(),
        ValueClass::Text => vec![
            KeyValue::Text(bytes.to_vec()),
            KeyValue::Blob(bytes.to_vec()),
        ],
        ValueClass::Numeric | ValueClass::Any => {
            let mut v = Vec::with_capacity(3);
            if let Some(i) = int {
                v.push(KeyValue::Integer(i));
            } else if let Some(f) = std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|f| f.is_finite())
            {
                v.push(KeyValue::Real(f));
            }
            v.push(KeyValue::Text(bytes.to_vec()));
            v.push(KeyValue::Blob(bytes.to_vec()));
            v
        }
    }
}

/// SQLite's type affinity of a declared type (the five rules of "Datatypes In SQLite").
fn affinity_class(declared: &str) -> ValueClass {
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        ValueClass::Numeric
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        ValueClass::Text
    } else if t.contains("BLOB") || t.is_empty() {
        ValueClass::Any
    } else {
        ValueClass::Numeric
    }
}

/// The tables and views of one database.
#[derive(Debug, Default)]
pub(super) struct Catalog {
    /// `PRAGMA schema_version` when this was read.
    pub(super) schema_version: i64,
    /// By name, in byte order.
    pub(super) relations: Vec<Arc<Relation>>,
}

impl Catalog {
    pub(super) fn get(&self, name: &str) -> Option<&Arc<Relation>> {
        self.relations
            .binary_search_by(|r| r.name().cmp(name))
            .ok()
            .map(|i| &self.relations[i])
    }

    /// The index of the first relation whose name sorts after `name`.
    pub(super) fn after(&self, name: &str) -> usize {
        self.relations.partition_point(|r| r.name() <= name)
    }

    pub(super) fn counts(&self) -> (usize, usize) {
        let views = self
            .relations
            .iter()
            .filter(|r| r.info.kind == RelationKind::View)
            .count();
        (self.relations.len() - views, views)
    }

    /// A hash of every relation's name and definition.
    pub(super) fn fingerprint(&self) -> u64 {
        let mut h = DefaultHasher::new();
        for r in &self.relations {
            r.fingerprint.hash(&mut h);
        }
        h.finish()
    }
}

pub(super) fn schema_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA schema_version")?
        .query_row([], |r| r.get(0))
}

/// Reads the catalog. Internal tables (`sqlite_…`) and the shadow tables of virtual tables
/// are left out; a relation whose columns cannot be read (a view over a dropped table, a
/// virtual table whose module is not compiled in) is left out and logged.
pub(super) fn load(conn: &Connection) -> rusqlite::Result<Catalog> {
    let version = schema_version(conn)?;
    let mut listed: Vec<(String, String, bool, bool, Option<String>)> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT l.name, l.type, l.wr, l.strict, s.sql \
             FROM pragma_table_list AS l \
             LEFT JOIN sqlite_schema AS s ON s.name = l.name AND s.type IN ('table', 'view') \
             WHERE l.schema = 'main' AND l.type IN ('table', 'view', 'virtual') \
             AND l.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            listed.push((
                row.get(0)?,
                row.get(1)?,
                row.get::<_, i64>(2)? != 0,
                row.get::<_, i64>(3)? != 0,
                row.get(4)?,
            ));
        }
    }
    let mut relations = Vec::with_capacity(listed.len());
    for (name, kind, without_rowid, strict, sql) in listed {
        match relation(conn, name.clone(), &kind, without_rowid, strict, sql) {
            Ok(r) => relations.push(Arc::new(r)),
            Err(e) => tracing::debug!(relation = %name, error = %e, "not served"),
        }
    }
    relations.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(Catalog {
        schema_version: version,
        relations,
    })
}

fn relation(
    conn: &Connection,
    name: String,
    kind: &str,
    without_rowid: bool,
    strict: bool,
    sql: Option<String>,
) -> rusqlite::Result<Relation> {
    let kind = match kind {
        "view" => RelationKind::View,
        "virtual" => RelationKind::Virtual,
        _ => RelationKind::Table,
    };
    let mut columns = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?1)",
        )?;
        let mut rows = stmt.query([&name])?;
        while let Some(row) = rows.next()? {
            let hidden: i64 = row.get(5)?;
            if hidden == 1 {
                // A virtual table's hidden column: not part of `SELECT *`.
                continue;
            }
            let declared: String = row.get::<_, Option<String>>(1)?.unwrap_or_default();
            let pk: i64 = row.get(4)?;
            let class =
                if strict && matches!(declared.to_ascii_uppercase().as_str(), "INT" | "INTEGER") {
                    ValueClass::Integer
                } else {
                    affinity_class(&declared)
                };
            columns.push(ColumnInfo {
                name: row.get(0)?,
                declared_type: declared,
                class,
                not_null: row.get::<_, i64>(2)? != 0,
                default: row.get(3)?,
                primary_key: u32::try_from(pk).ok().filter(|&p| p > 0),
                generated: hidden >= 2,
            });
        }
    }
    if columns.is_empty() {
        return Err(rusqlite::Error::InvalidQuery);
    }
    let mut pk: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].primary_key.is_some())
        .collect();
    pk.sort_by_key(|&i| columns[i].primary_key);
    let key = if kind == RelationKind::View {
        KeyKind::Position
    } else if !pk.is_empty() {
        KeyKind::PrimaryKey(pk.clone())
    } else if let Some(alias) = ["rowid", "_rowid_", "oid"]
        .into_iter()
        .find(|a| !columns.iter().any(|c| c.name.eq_ignore_ascii_case(a)))
    {
        KeyKind::RowId(alias.to_owned())
    } else {
        KeyKind::Position
    };
    // `INTEGER PRIMARY KEY` of a rowid table is the rowid: integers only, never NULL.
    let rowid_alias = !without_rowid
        && kind == RelationKind::Table
        && pk.len() == 1
        && columns[pk[0]].declared_type.eq_ignore_ascii_case("INTEGER");
    if rowid_alias {
        columns[pk[0]].class = ValueClass::Integer;
    }
    let (key_sql, key_classes, nullable): (Vec<String>, Vec<ValueClass>, Vec<bool>) = match &key {
        KeyKind::PrimaryKey(cols) => cols
            .iter()
            .map(|&i| {
                let c = &columns[i];
                // Only a rowid table's non-integer primary key can hold NULL.
                let nullable = !without_rowid && !rowid_alias && !c.not_null;
                (quote(&c.name), c.class, nullable)
            })
            .fold(
                (Vec::new(), Vec::new(), Vec::new()),
                |mut acc, (s, c, n)| {
                    acc.0.push(s);
                    acc.1.push(c);
                    acc.2.push(n);
                    acc
                },
            ),
        KeyKind::RowId(alias) => (vec![quote(alias)], vec![ValueClass::Integer], vec![false]),
        KeyKind::Position => (Vec::new(), Vec::new(), Vec::new()),
    };
    let column_names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let quoted_columns: Vec<String> = column_names.iter().map(|n| quote(n)).collect();
    let select = key_sql
        .iter()
        .chain(&quoted_columns)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let order = if key == KeyKind::Position {
        (1..=columns.len())
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        key_sql.join(", ")
    };
    let nullable_keys: Vec<String> = key_sql
        .iter()
        .zip(&nullable)
        .filter(|(_, n)| **n)
        .map(|(k, _)| format!("{k} IS NOT NULL"))
        .collect();
    let addressable = if nullable_keys.is_empty() {
        "1".to_owned()
    } else {
        nullable_keys.join(" AND ")
    };
    let mut flags = Vec::new();
    if kind == RelationKind::Table {
        flags.push(("withoutRowid", without_rowid));
        flags.push(("strict", strict));
    }
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    sql.hash(&mut h);
    column_names.hash(&mut h);
    Ok(Relation {
        from: quote(&name),
        info: RelationInfo {
            namespace: None,
            name,
            kind,
            columns,
            key,
            definition: sql,
            flags,
        },
        column_names,
        key_sql,
        key_classes,
        select,
        order,
        addressable,
        fingerprint: h.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_with_doubled_quotes() {
        assert_eq!(
            quote("users\"; DROP TABLE x;--"),
            "\"users\"\"; DROP TABLE x;--\""
        );
    }

    #[test]
    fn integer_keys_take_canonical_integers_only() {
        assert_eq!(canonical_integer(b"42"), Some(42));
        assert_eq!(canonical_integer(b"-7"), Some(-7));
        for bad in [
            &b"+1"[..],
            b"01",
            b" 1",
            b"1.0",
            b"",
            b"99999999999999999999",
        ] {
            assert_eq!(canonical_integer(bad), None);
        }
        assert!(candidates(ValueClass::Integer, b"abc").is_empty());
        assert_eq!(candidates(ValueClass::Any, b"1.5").len(), 3);
    }

    #[test]
    fn affinities_follow_sqlite_rules() {
        assert_eq!(affinity_class("BIGINT"), ValueClass::Numeric);
        assert_eq!(affinity_class("VARCHAR(10)"), ValueClass::Text);
        assert_eq!(affinity_class(""), ValueClass::Any);
        assert_eq!(affinity_class("DOUBLE"), ValueClass::Numeric);
        assert_eq!(affinity_class("DATE"), ValueClass::Numeric);
    }
}
