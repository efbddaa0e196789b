//! Rows and relations as documents: a row as a JSON object and as CSV, a relation's
//! schema document. The formats are specified in the module docs of [`crate::db`].
//!
//! Invariant: the output is always valid (UTF-8, and JSON where JSON is promised),
//! whatever bytes the database holds: text that is not UTF-8 is base64, never replaced.

use std::io::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::model::{Cell, KeyKind, RelationInfo, real_text};
use super::uri::relation_uri;

/// Appends a JSON string.
fn json_str(out: &mut Vec<u8>, s: &str) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Appends standard base64 of `bytes`.
fn base64(out: &mut Vec<u8>, bytes: &[u8]) {
    let start = out.len();
    out.resize(
        start + base64::encoded_len(bytes.len(), true).unwrap_or(0),
        0,
    );
    let written = STANDARD.encode_slice(bytes, &mut out[start..]).unwrap_or(0);
    out.truncate(start + written);
}

fn json_cell(out: &mut Vec<u8>, cell: Cell<'_>) {
    match cell {
        Cell::Null => out.extend_from_slice(b"null"),
        Cell::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        // serde_json writes non-finite numbers as null.
        Cell::Real(f) => {
            let _ = serde_json::to_writer(&mut *out, &f);
        }
        Cell::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(s) => json_str(out, s),
            Err(_) => {
                out.extend_from_slice(br#"{"base64":""#);
                base64(out, bytes);
                out.extend_from_slice(br#""}"#);
            }
        },
        Cell::Blob(bytes) => {
            out.push(b'"');
            base64(out, bytes);
            out.push(b'"');
        }
        Cell::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Cell::Json(s) => out.extend_from_slice(s.as_bytes()),
    }
}

fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A row as a JSON object: one member per column, in column order.
pub fn row_json<N: AsRef<str>>(columns: &[N], cells: &[Cell<'_>]) -> String {
    let mut out = Vec::with_capacity(
        16 + cells.iter().map(|c| c.stored_len() + 8).sum::<usize>()
            + columns.iter().map(|c| c.as_ref().len() + 4).sum::<usize>(),
    );
    out.push(b'{');
    for (i, (name, cell)) in columns.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(&mut out, name.as_ref());
        out.push(b':');
        json_cell(&mut out, *cell);
    }
    out.push(b'}');
    into_string(out)
}

fn csv_field(out: &mut Vec<u8>, field: &[u8]) {
    if field
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        out.push(b'"');
        for &b in field {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(field);
    }
}

fn csv_cell(out: &mut Vec<u8>, cell: Cell<'_>) {
    match cell {
        Cell::Null => {}
        Cell::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Cell::Real(f) => out.extend_from_slice(real_text(f).as_bytes()),
        Cell::Text(bytes) if std::str::from_utf8(bytes).is_ok() => csv_field(out, bytes),
        Cell::Text(bytes) | Cell::Blob(bytes) => base64(out, bytes),
        Cell::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Cell::Json(s) => csv_field(out, s.as_bytes()),
    }
}

/// A row as CSV (RFC 4180): the header line and the row's line, each ending in CRLF.
pub fn row_csv<N: AsRef<str>>(columns: &[N], cells: &[Cell<'_>]) -> String {
    let mut out = Vec::with_capacity(
        8 + cells.iter().map(|c| c.stored_len() + 2).sum::<usize>()
            + columns.iter().map(|c| c.as_ref().len() + 1).sum::<usize>(),
    );
    for (i, name) in columns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        csv_field(&mut out, name.as_ref().as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        csv_cell(&mut out, *cell);
    }
    out.extend_from_slice(b"\r\n");
    into_string(out)
}

/// A relation's schema document (JSON):
///
/// ```json
/// {"uri": "db://shop/books", "database": "shop", "name": "books", "type": "table",
///  "key": {"kind": "primaryKey", "columns": ["id"]},
///  "rowUriTemplate": "db://shop/books/{pk}",
///  "columns": [{"name": "id", "type": "INTEGER", "notNull": false, "default": null,
///               "primaryKey": 1, "generated": false}, …],
///  "withoutRowid": false, "strict": false,
///  "definition": "CREATE TABLE books (…)"}
/// ```
///
/// `key.kind` is `primaryKey` (with `columns`), `rowid` (with `column`, the name the row
/// id goes by) or `position` (rows addressed by position). A backend with namespaces adds
/// `"schema"` after `"database"`; backend flags come before `definition`.
pub fn schema_json(db: &str, rel: &RelationInfo) -> String {
    let mut out = Vec::with_capacity(256 + rel.columns.len() * 96);
    let path = rel.path();
    out.extend_from_slice(b"{\"uri\":");
    json_str(&mut out, &relation_uri(db, &path));
    out.extend_from_slice(b",\"database\":");
    json_str(&mut out, db);
    if let Some(ns) = &rel.namespace {
        out.extend_from_slice(b",\"schema\":");
        json_str(&mut out, ns);
    }
    out.extend_from_slice(b",\"name\":");
    json_str(&mut out, &rel.name);
    out.extend_from_slice(b",\"type\":");
    json_str(&mut out, rel.kind.as_str());
    out.extend_from_slice(b",\"key\":{\"kind\":");
    match &rel.key {
        KeyKind::PrimaryKey(_) => {
            out.extend_from_slice(b"\"primaryKey\",\"columns\":[");
            for (i, name) in rel.key_names().iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_str(&mut out, name);
            }
            out.push(b']');
        }
        KeyKind::RowId(name) => {
            out.extend_from_slice(b"\"rowid\",\"column\":");
            json_str(&mut out, name);
        }
        KeyKind::Position => out.extend_from_slice(b"\"position\""),
    }
    out.extend_from_slice(b"},\"rowUriTemplate\":");
    // The relation's own URI with `{pk}` appended: the row template with its names filled.
    let mut template = relation_uri(db, &path);
    template.push_str("/{pk}");
    json_str(&mut out, &template);
    out.extend_from_slice(b",\"columns\":[");
    for (i, c) in rel.columns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        json_str(&mut out, &c.name);
        out.extend_from_slice(b",\"type\":");
        json_str(&mut out, &c.declared_type);
        let _ = write!(out, ",\"notNull\":{},\"default\":", c.not_null);
        match &c.default {
            Some(d) => json_str(&mut out, d),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"primaryKey\":");
        match c.primary_key {
            Some(p) => {
                let _ = write!(out, "{p}");
            }
            None => out.extend_from_slice(b"null"),
        }
        let _ = write!(out, ",\"generated\":{}}}", c.generated);
    }
    out.push(b']');
    for (flag, value) in &rel.flags {
        out.push(b',');
        json_str(&mut out, flag);
        let _ = write!(out, ":{value}");
    }
    out.extend_from_slice(b",\"definition\":");
    match &rel.definition {
        Some(d) => json_str(&mut out, d),
        None => out.extend_from_slice(b"null"),
    }
    out.push(b'}');
    into_string(out)
}

#[cfg(test)]
mod tests {
    use super::super::model::{ColumnInfo, RelationKind, ValueClass};
    use super::*;

    #[test]
    fn a_row_is_an_object_in_column_order_with_every_type() {
        let cols = ["z", "a", "r", "t", "bad", "b", "inf"];
        let cells = [
            Cell::Null,
            Cell::Integer(-7),
            Cell::Real(1.5),
            Cell::Text("é\"\n".as_bytes()),
            Cell::Text(b"\xff\xfe"),
            Cell::Blob(&[0, 1, 2]),
            Cell::Real(f64::INFINITY),
        ];
        let json = row_json(&cols, &cells);
        assert_eq!(
            json,
            r#"{"z":null,"a":-7,"r":1.5,"t":"é\"\n","bad":{"base64":"//4="},"b":"AAEC","inf":null}"#
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["a"], -7);
    }

    #[test]
    fn csv_quotes_what_rfc_4180_says() {
        let csv = row_csv(
            &["id", "a,b", "q"],
            &[Cell::Integer(1), Cell::Text(b"x\"y"), Cell::Null],
        );
        assert_eq!(csv, "id,\"a,b\",q\r\n1,\"x\"\"y\",\r\n");
    }

    #[test]
    fn the_schema_document_is_json() {
        let rel = RelationInfo {
            namespace: None,
            name: "t\"".into(),
            kind: RelationKind::Table,
            columns: vec![ColumnInfo {
                name: "id".into(),
                declared_type: "INTEGER".into(),
                class: ValueClass::Integer,
                not_null: true,
                default: Some("0".into()),
                primary_key: Some(1),
                generated: false,
            }],
            key: KeyKind::PrimaryKey(vec![0]),
            definition: Some("CREATE TABLE \"t\"\"\"(id INTEGER PRIMARY KEY)".into()),
            flags: vec![("withoutRowid", false)],
        };
        let v: serde_json::Value = serde_json::from_str(&schema_json("d", &rel)).unwrap();
        assert_eq!(v["uri"], "db://d/t%22");
        assert_eq!(v["rowUriTemplate"], "db://d/t%22/{pk}");
        assert_eq!(v["key"]["columns"][0], "id");
        assert_eq!(v["columns"][0]["primaryKey"], 1);
        assert_eq!(v["withoutRowid"], false);
    }
}
