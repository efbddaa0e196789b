//! What names a database resource: the `db://` URIs (encoders and the one parser), the
//! URI templates, and the MIME types of databases, relations, rows and schema documents.
//! The rules are in the module docs of [`crate::db`].
//!
//! Invariant: a URI this module encodes parses back to the same target, and keys whose
//! values differ as text never encode to the same segment ([`key_segment`]).

use super::model::KeyValue;
use crate::kit::segment::{decode, push_expanded};

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
