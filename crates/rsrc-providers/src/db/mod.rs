//! Databases as resources: the model shared by every database backend (SQLite in
//! [`sqlite`]; PostgreSQL reuses this module with one more URI level).
//!
//! # URIs
//!
//! | URI | resource |
//! |---|---|
//! | `db://{db}` | a database: a collection of its tables and views |
//! | `db://{db}/{table}` | a table or view: a collection of its rows |
//! | `db://{db}/{table}/{pk}` | one row: a document |
//! | `db://{db}/{table}/$schema` | the table's or view's schema: a document |
//!
//! A backend with namespaces inside a database (PostgreSQL schemas) has one more level:
//! `db://{db}/{schema}/{table}/{pk}`. The helpers here take the relation's *path* (the
//! names between the database and the key: `[table]` or `[schema, table]`), so one parser
//! and one encoder serve both layouts ([`parse`] is told how many levels to expect).
//!
//! - **Segments** are split on `/` first and percent-decoded exactly once afterwards, so an
//!   encoded `/` (`%2F`) is part of a name or value, never a separator, and `..` or `%00`
//!   are just names that no catalog holds. Empty segments are refused.
//! - **The schema document** is the raw segment `$schema`. RFC 6570 simple expansion of
//!   `{pk}` always percent-encodes `$`, so no row's URI is ever `…/$schema`: a key whose
//!   text is `$schema` is `…/%24schema`. (The check is made on the raw segment, before
//!   decoding.)
//! - **Keys.** A row's segment is its primary key. Every byte but RFC 3986's unreserved
//!   characters (`A-Z a-z 0-9 - . _ ~`) is percent-encoded, exactly as RFC 6570 simple
//!   expansion writes a value, so the URIs served are the ones a client builds from the
//!   template. A composite key is its values in key order, each encoded, joined by a raw
//!   `,` (a `,` inside a value is `%2C`). For a one-column key the whole segment, decoded,
//!   is the value (a raw `,` is then just a character). A composite key given as one
//!   encoded value (`1%2C2`, which is what a template expansion of the string `"1,2"`
//!   gives) is also accepted: decoded once, then split on `,` when that gives exactly the
//!   key's number of values.
//! - **Key values as text**: integers in decimal, reals in their shortest round-trip form
//!   (`1.5`, `1.0`, `1e+300`), text and blobs as their bytes.
//! - Tables without a declared key are keyed by their rowid (or the backend's equivalent);
//!   relations without any key (views) are keyed by a position (see the backend's docs).
//!
//! # Formats
//!
//! A row is a JSON object (`application/json`) with one member per column, in column
//! order ([`row_json`]):
//!
//! | stored | JSON |
//! |---|---|
//! | NULL | `null` |
//! | integer | number |
//! | real | number; non-finite values (±∞, NaN) are `null` |
//! | text | string; text that is not valid UTF-8 is `{"base64": "…"}` (its bytes, standard base64), so nothing is lost |
//! | blob | string: the bytes in standard base64 (the schema document says which columns are blobs) |
//! | boolean (PostgreSQL) | `true` / `false` |
//! | JSON (PostgreSQL) | the value itself |
//!
//! Reading a row also returns a second entry with the same URI, a format alternative:
//! `text/csv` ([`row_csv`], RFC 4180): a header line with the column names and the row's
//! line, both ending in CRLF, fields quoted when they hold `,`, `"`, CR or LF. NULL is an
//! empty field; blobs and non-UTF-8 text are base64; reals as in JSON (non-finite ones as
//! `inf`, `-inf`, `NaN`).
//!
//! The schema document ([`schema_json`], `application/json`) names the relation, its
//! kind, its key, its columns (declared type, nullability, default, key position,
//! generated) and its definition (`CREATE …` statement).
//!
//! Every entry carries SEP-2093 metadata: `name`, `mimeType`, `size` (the bytes of that
//! entry) and `resourceType`. Collections (databases, tables, views) are
//! `inode/directory`, as every collection of this project is.
//!
//! # Listings
//!
//! Rows are listed in key order with a keyset position: the last row's key values,
//! type-tagged ([`encode_key_position`]), at most [`rsrc::MAX_POSITION_BYTES`]. A page
//! therefore costs one index range scan whatever its offset, and pages stay correct while
//! rows come and go: a row is listed once, in key order, unless it is deleted (or
//! inserted behind the position) during the walk.
//!
//! Invariants every backend keeps:
//! - Identifiers from a URI are only ever compared with the catalog; only catalog names,
//!   quoted as identifiers, reach SQL text, and every value is a bound parameter. A URI
//!   naming anything the catalog does not hold answers exactly like a missing resource.
//! - A URI this module encodes parses back to the same target, and keys whose values
//!   differ as text never encode to the same segment ([`key_segment`]). (Values that
//!   print alike, such as the integer `42` and the text `42` in a column that holds both,
//!   share a segment; the backend documents which one such a URI reads.)

mod model;
#[cfg(feature = "postgres")]
pub mod postgres;
mod render;
pub(crate) mod resources;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use model::{
    Cell, ColumnInfo, KeyKind, KeyValue, RelationInfo, RelationKind, ValueClass,
    decode_key_position, encode_key_position,
};
pub use render::{row_csv, row_json, schema_json};

use crate::kit::segment::{decode, push_expanded};

/// The error of a statement stopped by its time limit: the same words from every backend.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn timed_out(uri: &str, limit: std::time::Duration) -> rsrc::ResourceError {
    rsrc::ResourceError::timeout(
        uri,
        format!(
            "{uri}: the query was stopped after the time limit of {} ms",
            limit.as_millis()
        ),
    )
}

/// The URI prefix of every database resource.
pub const PREFIX: &str = "db://";

/// The last segment of a relation's schema document.
pub const SCHEMA_SEGMENT: &str = "$schema";

/// The MIME type of databases, tables and views (collections).
pub const COLLECTION_MIME_TYPE: &str = rsrc::protocol::DIRECTORY_MIME_TYPE;

/// The MIME type of a row and of a schema document.
pub const JSON_MIME_TYPE: &str = "application/json";

/// The MIME type of a row's CSV alternative.
pub const CSV_MIME_TYPE: &str = "text/csv";

/// Appends `bytes` to `out` as one percent-encoded URI segment: everything but RFC 3986's
/// unreserved characters is encoded, as RFC 6570 simple expansion writes a value.
pub fn push_segment(out: &mut String, bytes: &[u8]) {
    push_expanded(out, bytes);
}

/// `db://{db}`.
pub fn database_uri(db: &str) -> String {
    let mut s = String::from(PREFIX);
    push_segment(&mut s, db.as_bytes());
    s
}

/// `db://{db}/{path…}`: a table's or view's URI.
pub fn relation_uri<S: AsRef<str>>(db: &str, path: &[S]) -> String {
    let mut s = database_uri(db);
    for name in path {
        s.push('/');
        push_segment(&mut s, name.as_ref().as_bytes());
    }
    s
}

/// `db://{db}/{path…}/$schema`.
pub fn schema_uri<S: AsRef<str>>(db: &str, path: &[S]) -> String {
    let mut s = relation_uri(db, path);
    s.push('/');
    s.push_str(SCHEMA_SEGMENT);
    s
}

/// A row's key as one URI segment: each value's text percent-encoded, joined by `,`.
pub fn key_segment(key: &[KeyValue]) -> String {
    let mut s = String::new();
    for (i, v) in key.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_segment(&mut s, &v.text());
    }
    s
}

/// `db://{db}/{path…}/{key}`.
pub fn row_uri<S: AsRef<str>>(db: &str, path: &[S], key: &[KeyValue]) -> String {
    let mut s = relation_uri(db, path);
    s.push('/');
    s.push_str(&key_segment(key));
    s
}

/// A row's display name: its key values as text, joined by `,` (bytes that are not UTF-8
/// replaced).
pub fn key_name(key: &[KeyValue]) -> String {
    let mut s = String::new();
    for (i, v) in key.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&String::from_utf8_lossy(&v.text()));
    }
    s
}

/// The row template for relations at `levels` names below the database, with these
/// variable names: `row_template(&["table"])` is `db://{db}/{table}/{pk}`.
pub fn row_template(level_names: &[&str]) -> String {
    let mut s = format!("{PREFIX}{{db}}");
    for name in level_names {
        s.push_str("/{");
        s.push_str(name);
        s.push('}');
    }
    s.push_str("/{pk}");
    s
}

/// The schema template for relations at `levels` names below the database:
/// `schema_template(&["table"])` is `db://{db}/{table}/$schema`.
pub fn schema_template(level_names: &[&str]) -> String {
    let mut s = row_template(level_names);
    s.truncate(s.len() - "{pk}".len());
    s.push_str(SCHEMA_SEGMENT);
    s
}

/// A row's key segment, as it came in a URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowKey {
    /// The raw segment split on `,`, each part decoded.
    parts: Vec<Vec<u8>>,
    /// The whole segment decoded.
    whole: Vec<u8>,
}

impl RowKey {
    /// Parses a raw (still encoded) key segment.
    pub fn from_segment(raw: &str) -> RowKey {
        RowKey {
            parts: raw.split(',').map(decode).collect(),
            whole: decode(raw),
        }
    }

    /// The key's values for a key of `arity` columns, or `None` when the segment does not
    /// hold that many (see the module docs: one column takes the whole segment; several
    /// take the raw `,`-separated parts, or the decoded segment split on `,`).
    pub fn values(&self, arity: usize) -> Option<Vec<&[u8]>> {
        match arity {
            0 => None,
            1 => Some(vec![self.whole.as_slice()]),
            n if self.parts.len() == n => Some(self.parts.iter().map(Vec::as_slice).collect()),
            n if self.parts.len() == 1 => {
                let split: Vec<&[u8]> = self.whole.split(|&b| b == b',').collect();
                (split.len() == n).then_some(split)
            }
            _ => None,
        }
    }

    /// The whole segment, decoded.
    pub fn whole(&self) -> &[u8] {
        &self.whole
    }
}

/// What a `db://` URI names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `db://{db}`.
    Database {
        /// The database's name, decoded.
        db: String,
    },
    /// `db://{db}/{path…}`: a table or view.
    Relation {
        /// The database's name.
        db: String,
        /// The names below the database (`[table]`, or `[schema, table]`).
        path: Vec<String>,
    },
    /// `db://{db}/{path…}/$schema`.
    Schema {
        /// The database's name.
        db: String,
        /// The relation's path.
        path: Vec<String>,
    },
    /// `db://{db}/{path…}/{key}`.
    Row {
        /// The database's name.
        db: String,
        /// The relation's path.
        path: Vec<String>,
        /// The key segment.
        key: RowKey,
    },
}

impl Target {
    /// The database's name.
    pub fn db(&self) -> &str {
        match self {
            Target::Database { db }
            | Target::Relation { db, .. }
            | Target::Schema { db, .. }
            | Target::Row { db, .. } => db,
        }
    }
}

/// Parses a `db://` URI for a backend whose relations sit `levels` names below the
/// database (1 for SQLite, 2 for PostgreSQL). `None` for anything that cannot name a
/// resource: another scheme, empty segments, names that are not UTF-8 after decoding,
/// too many or too few segments. What the names mean is for the catalog to say.
pub fn parse(uri: &str, levels: usize) -> Option<Target> {
    let rest = uri.strip_prefix(PREFIX)?;
    let raw: Vec<&str> = rest.split('/').collect();
    if raw.iter().any(|s| s.is_empty()) || raw.len() > levels + 2 {
        return None;
    }
    let name = |s: &str| String::from_utf8(decode(s)).ok();
    let db = name(raw[0])?;
    if raw.len() == 1 {
        return Some(Target::Database { db });
    }
    // A database with fewer levels given is not a resource (`db://{db}/{schema}` in a
    // two-level layout would be a namespace; backends with namespaces may serve it by
    // parsing with fewer levels themselves).
    if raw.len() < levels + 1 {
        return None;
    }
    let path = raw[1..=levels]
        .iter()
        .map(|s| name(s))
        .collect::<Option<Vec<String>>>()?;
    match raw.get(levels + 1) {
        None => Some(Target::Relation { db, path }),
        Some(&SCHEMA_SEGMENT) => Some(Target::Schema { db, path }),
        Some(key) => Some(Target::Row {
            db,
            path,
            key: RowKey::from_segment(key),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_through_parse() {
        let key = [
            KeyValue::Text(b"a,b/c$".to_vec()),
            KeyValue::Integer(-4),
            KeyValue::Blob(vec![0, 255]),
        ];
        let uri = row_uri("my db", &["t/1"], &key);
        assert_eq!(uri, "db://my%20db/t%2F1/a%2Cb%2Fc%24,-4,%00%FF");
        let Some(Target::Row { db, path, key: k }) = parse(&uri, 1) else {
            panic!("not a row: {uri}");
        };
        assert_eq!(db, "my db");
        assert_eq!(path, ["t/1"]);
        assert_eq!(
            k.values(3).unwrap(),
            [&b"a,b/c$"[..], &b"-4"[..], &[0u8, 255][..]]
        );
        assert_eq!(
            parse("db://x/t/$schema", 1),
            Some(Target::Schema {
                db: "x".into(),
                path: vec!["t".into()]
            })
        );
        let dollar = row_uri("x", &["t"], &[KeyValue::Text(b"$schema".to_vec())]);
        assert_eq!(dollar, "db://x/t/%24schema");
        assert!(matches!(parse(&dollar, 1), Some(Target::Row { .. })));
    }

    #[test]
    fn malformed_uris_name_nothing() {
        for uri in [
            "db://",
            "db:///t",
            "db://x//1",
            "db://x/t/",
            "db://x/t/1/2",
            "file:///x",
            "db://%FF",
        ] {
            assert_eq!(parse(uri, 1), None, "{uri}");
        }
        assert_eq!(parse("db://x/s", 2), None);
        assert!(matches!(parse("db://x/s/t/1", 2), Some(Target::Row { .. })));
    }

    #[test]
    fn composite_keys_accept_the_raw_and_the_encoded_comma() {
        let raw = RowKey::from_segment("1,a%2Cb");
        assert_eq!(raw.values(2).unwrap(), [&b"1"[..], &b"a,b"[..]]);
        assert_eq!(raw.values(1).unwrap(), [&b"1,a,b"[..]]);
        assert_eq!(raw.values(3), None);
        let encoded = RowKey::from_segment("1%2C2");
        assert_eq!(encoded.values(2).unwrap(), [&b"1"[..], &b"2"[..]]);
        assert_eq!(encoded.values(3), None);
    }

    #[test]
    fn templates_have_one_level_per_name() {
        assert_eq!(row_template(&["table"]), "db://{db}/{table}/{pk}");
        assert_eq!(
            schema_template(&["schema", "table"]),
            "db://{db}/{schema}/{table}/$schema"
        );
    }
}
