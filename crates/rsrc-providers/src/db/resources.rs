//! The resources of a database as the client sees them, built the same way by every
//! backend: a database and a relation (collections), a relation's schema document and a
//! row (documents, a row with its CSV alternative), and the listing of a relation — its
//! schema document, then its rows in key order.
//!
//! A backend says only what differs: how it describes a database, in which order it
//! numbers the rows of a relation without a key, whether a listed schema document carries
//! its size.
//!
//! Invariants:
//! - Every URI written here is built by the encoders of [`crate::db`], so it parses back
//!   to the resource it names.
//! - A relation's listing holds each row once, in key order, while rows come and go (a
//!   keyset walk: its position is the last key listed); its schema document comes first,
//!   once.

use rsrc::protocol::{CacheHint, Resource, ResourceContents};
use rsrc::{Filter, Page};

use super::model::{KeyKind, KeyValue, RelationInfo, decode_key_position, encode_key_position};
use super::render::schema_json;
use super::uri::{
    COLLECTION_MIME_TYPE, CSV_MIME_TYPE, JSON_MIME_TYPE, SCHEMA_SEGMENT, database_uri, key_name,
    relation_uri, row_uri, schema_uri,
};

/// `s` when `n` is not 1.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `count` `noun`s: `1 table`, `2 views`.
pub(crate) fn counted(count: usize, noun: &str) -> String {
    format!("{count} {noun}{}", plural(count))
}

/// A database: the collection of what it holds, described by its backend.
pub(crate) fn database_resource(name: &str, description: String) -> Resource {
    Resource::new(database_uri(name), name)
        .with_description(description)
        .with_mime_type(COLLECTION_MIME_TYPE)
        .collection()
}

/// A relation of database `db`: the collection of its schema document and rows.
/// `position_order` says how rows without a key are ordered ("all columns").
pub(crate) fn relation_resource(db: &str, info: &RelationInfo, position_order: &str) -> Resource {
    let addressed = match &info.key {
        KeyKind::PrimaryKey(_) => format!("rows by primary key ({})", info.key_names().join(", ")),
        KeyKind::RowId(name) => format!("no primary key: rows by {name}"),
        KeyKind::Position => format!("rows by position when sorted by {position_order}"),
    };
    Resource::new(relation_uri(db, &info.path()), info.name.clone())
        .with_description(format!(
            "{}, {}; {addressed}",
            info.kind.as_str(),
            counted(info.columns.len(), "column")
        ))
        .with_mime_type(COLLECTION_MIME_TYPE)
        .collection()
}

/// A relation's schema document, with its size when known.
pub(crate) fn schema_resource(db: &str, info: &RelationInfo, size: Option<usize>) -> Resource {
    let mut r = Resource::new(schema_uri(db, &info.path()), SCHEMA_SEGMENT)
        .with_title(format!("Schema of {}", info.name))
        .with_mime_type(JSON_MIME_TYPE)
        .document();
    if let Some(size) = size {
        r = r.with_size(size as u64);
    }
    r
}

/// A relation's schema document, with its content.
pub(crate) fn schema_contents(db: &str, info: &RelationInfo) -> ResourceContents {
    let json = schema_json(db, info);
    ResourceContents::text(schema_resource(db, info, Some(json.len())), json)
}

/// A row as listings and searches show it: URI, name (the key as text), type (`path` is
/// the relation's, [`RelationInfo::path`]).
pub(crate) fn row_entry(db: &str, path: &[&str], key: &[KeyValue]) -> Resource {
    Resource::new(row_uri(db, path, key), key_name(key))
        .with_mime_type(JSON_MIME_TYPE)
        .document()
}

/// A row's metadata in one of its formats (`size` bytes of it).
pub(crate) fn row_resource(uri: String, key: &[KeyValue], mime: &str, size: usize) -> Resource {
    Resource::new(uri, key_name(key))
        .with_mime_type(mime)
        .with_size(size as u64)
        .document()
}

/// The entries of a read row: its JSON, then its CSV when there is one.
pub(crate) fn row_contents(
    uri: &str,
    key: &[KeyValue],
    json: String,
    csv: Option<String>,
) -> Vec<ResourceContents> {
    let mut out = vec![ResourceContents::text(
        row_resource(uri.to_owned(), key, JSON_MIME_TYPE, json.len()),
        json,
    )];
    if let Some(csv) = csv {
        out.push(ResourceContents::text(
            row_resource(uri.to_owned(), key, CSV_MIME_TYPE, csv.len()),
            csv,
        ));
    }
    out
}

/// A position in a relation's listing: after its schema document (`[0]`), or after a
/// row's key (`[1]` and the key's type-tagged position).
const AFTER_SCHEMA: u8 = 0;
const AFTER_ROW: u8 = 1;

/// Where a page of a relation's listing starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RelationPosition {
    /// At the start: the schema document first.
    Start,
    /// After the schema document: the first rows.
    AfterSchema,
    /// After the row with this key.
    AfterRow(Vec<KeyValue>),
}

impl RelationPosition {
    /// Reads a listing position; `None` when the bytes are not one.
    pub(crate) fn decode(after: Option<&[u8]>) -> Option<RelationPosition> {
        match after {
            None => Some(RelationPosition::Start),
            Some([AFTER_SCHEMA]) => Some(RelationPosition::AfterSchema),
            Some([AFTER_ROW, key @ ..]) => decode_key_position(key).map(RelationPosition::AfterRow),
            Some(_) => None,
        }
    }

    /// The key the rows of the page follow.
    pub(crate) fn after_key(&self) -> Option<&[KeyValue]> {
        match self {
            RelationPosition::AfterRow(key) => Some(key),
            _ => None,
        }
    }

    /// How many rows a page of `limit` entries (at least 1) holds from here: the schema
    /// document takes the first entry of the first page.
    pub(crate) fn rows_wanted(&self, limit: usize) -> usize {
        match self {
            RelationPosition::Start => limit.max(1) - 1,
            _ => limit.max(1),
        }
    }

    /// How many rows to fetch for a page of `limit` entries under `filter`: a filtered
    /// page examines up to [`Filter::scan`] entries, however few it keeps.
    pub(crate) fn rows_to_fetch(&self, limit: usize, filter: Option<&Filter>) -> usize {
        self.rows_wanted(filter.map_or(limit, Filter::scan))
    }
}

/// The page of a relation's listing starting at `from`: `schema` (its schema document as
/// listed) at the start, then the rows `keys` (fetched after
/// [`RelationPosition::after_key`], at most [`RelationPosition::rows_to_fetch`]); `more`
/// says whether rows follow them. Under `filter` only the matching ones, at most `limit`
/// (the rows fetched are what the page examines). `None` when a key is too large to be a
/// position.
pub(crate) fn relation_page(
    (db, info): (&str, &RelationInfo),
    from: &RelationPosition,
    schema: Resource,
    (keys, more): (&[Vec<KeyValue>], bool),
    (limit, filter): (usize, Option<&Filter>),
    cache: Option<CacheHint>,
) -> Option<Page> {
    let path = info.path();
    // The entries in listing order, each with how it is listed; the schema document's
    // position is `None`, a row's its key.
    let schema = (*from == RelationPosition::Start).then_some((None, schema));
    let rows = keys
        .iter()
        .map(|key| (Some(key.as_slice()), row_entry(db, &path, key)));
    let position = |key: Option<&[KeyValue]>| -> Option<Vec<u8>> {
        match key {
            None => Some(vec![AFTER_SCHEMA]),
            Some(key) => {
                let mut v = vec![AFTER_ROW];
                v.extend(encode_key_position(key)?);
                Some(v)
            }
        }
    };
    let mut last = None;
    let entries = schema.into_iter().chain(rows).inspect(|e| last = Some(e.0));
    let page = rsrc::filter::page(
        filter,
        entries,
        limit,
        |f, (_, r)| f.matches_resource(r),
        |(key, _)| position(*key),
    );
    let next = match (page.next, last) {
        (Some(next), _) => Some(next?),
        // Every entry drawn: the page goes on after the last one when rows follow.
        (None, Some(key)) if more => Some(position(key)?),
        (None, _) => None,
    };
    Some(Page {
        resources: page.items.into_iter().map(|(_, r)| r.into()).collect(),
        next,
        cache,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::model::{ColumnInfo, RelationKind, ValueClass};

    fn info() -> RelationInfo {
        RelationInfo {
            name: "books".into(),
            namespace: None,
            kind: RelationKind::Table,
            columns: vec![ColumnInfo {
                name: "id".into(),
                declared_type: "INTEGER".into(),
                class: ValueClass::Integer,
                not_null: true,
                default: None,
                primary_key: Some(1),
                generated: false,
            }],
            key: KeyKind::PrimaryKey(vec![0]),
            definition: None,
            flags: Vec::new(),
        }
    }

    #[test]
    fn a_relation_is_described_by_its_kind_columns_and_key() {
        let r = relation_resource("shop", &info(), "all columns");
        assert_eq!(r.uri, "db://shop/books");
        assert_eq!(
            r.description.as_deref(),
            Some("table, 1 column; rows by primary key (id)")
        );
        assert_eq!(counted(2, "view"), "2 views");
    }

    #[test]
    fn a_relation_listing_walks_its_schema_then_its_rows() {
        let info = info();
        let schema = schema_resource("shop", &info, None);
        let start = RelationPosition::decode(None).unwrap();
        assert_eq!(start.rows_wanted(1), 0);
        let first = relation_page(
            ("shop", &info),
            &start,
            schema.clone(),
            (&[], true),
            (1, None),
            None,
        )
        .unwrap();
        assert_eq!(first.resources.len(), 1);
        let next = RelationPosition::decode(first.next.as_deref()).unwrap();
        assert_eq!(next, RelationPosition::AfterSchema);
        assert_eq!(next.rows_wanted(2), 2);
        let keys = [vec![KeyValue::Integer(1)], vec![KeyValue::Integer(2)]];
        let second = relation_page(
            ("shop", &info),
            &next,
            schema,
            (&keys, true),
            (2, None),
            None,
        )
        .unwrap();
        assert_eq!(second.resources.len(), 2);
        let after = RelationPosition::decode(second.next.as_deref()).unwrap();
        assert_eq!(after.after_key(), Some(&[KeyValue::Integer(2)][..]));
        assert_eq!(RelationPosition::decode(Some(&[7])), None);
    }

    #[test]
    fn a_filtered_relation_listing_keeps_matching_rows_and_goes_on_after_the_last_examined() {
        use rsrc::protocol::resources::ListFilter;
        let info = info();
        let schema = schema_resource("shop", &info, None);
        let filter = Filter::new(&ListFilter {
            name_patterns: Some(vec!["*2".into()]),
            uri_patterns: None,
        })
        .unwrap()
        .unwrap();
        let keys: Vec<Vec<KeyValue>> = (1..=5).map(|i| vec![KeyValue::Integer(i)]).collect();
        let start = RelationPosition::Start;
        let page = relation_page(
            ("shop", &info),
            &start,
            schema,
            (&keys, true),
            (10, Some(&filter)),
            None,
        )
        .unwrap();
        let names: Vec<String> = page
            .resources
            .iter()
            .map(|r| r.to_resource().unwrap().name.clone())
            .collect();
        assert_eq!(names, ["2"], "the schema document and other rows pass");
        let next = RelationPosition::decode(page.next.as_deref()).unwrap();
        assert_eq!(next.after_key(), Some(&[KeyValue::Integer(5)][..]));
    }
}
