//! The resources of the SQLite provider as the client sees them: databases, tables and
//! views as collections, rows and schema documents as documents, and the default listing
//! (the catalog of every database, never its rows).
//!
//! Invariant: every URI written here is built by the shared encoders of [`crate::db`], so
//! it parses back to the resource it names.

use std::sync::Arc;

use rsrc::protocol::{CacheHint, Resource, ResourceContents};
use rsrc::{Listed, Page, ResourceError};

use super::Database;
use super::catalog::{Catalog, Relation};
use super::conn::Budget;
use super::ops::RowOut;
use crate::db::{
    COLLECTION_MIME_TYPE, CSV_MIME_TYPE, JSON_MIME_TYPE, KeyKind, KeyValue, PREFIX, RelationKind,
    SCHEMA_SEGMENT, key_name, relation_uri, schema_json, schema_uri,
};

/// A database: a collection of its tables and views.
pub(super) fn database_resource(db: &Database, cat: &Catalog) -> Resource {
    let (tables, views) = cat.counts();
    Resource::new(db.uri.clone(), db.name.clone())
        .with_description(format!(
            "SQLite database: {tables} table{}, {views} view{}",
            if tables == 1 { "" } else { "s" },
            if views == 1 { "" } else { "s" }
        ))
        .with_mime_type(COLLECTION_MIME_TYPE)
        .collection()
}

/// A table or view: a collection of its schema document and rows.
pub(super) fn relation_resource(db: &str, rel: &Relation) -> Resource {
    let info = &rel.info;
    let addressed = match &info.key {
        KeyKind::PrimaryKey(_) => format!("rows by primary key ({})", info.key_names().join(", ")),
        KeyKind::RowId(name) => format!("no primary key: rows by {name}"),
        KeyKind::Position => "rows by position when sorted by all columns".to_owned(),
    };
    let kind = match info.kind {
        RelationKind::Table => "table",
        RelationKind::View => "view",
        RelationKind::Virtual | RelationKind::MaterializedView => info.kind.as_str(),
    };
    Resource::new(relation_uri(db, &[rel.name()]), rel.name())
        .with_description(format!(
            "{kind}, {} column{}; {addressed}",
            info.columns.len(),
            if info.columns.len() == 1 { "" } else { "s" }
        ))
        .with_mime_type(COLLECTION_MIME_TYPE)
        .collection()
}

/// A relation's schema document (its size when known).
pub(super) fn schema_resource(db: &str, rel: &Relation, size: Option<usize>) -> Resource {
    let mut r = Resource::new(schema_uri(db, &[rel.name()]), SCHEMA_SEGMENT)
        .with_title(format!("Schema of {}", rel.name()))
        .with_mime_type(JSON_MIME_TYPE)
        .document();
    if let Some(size) = size {
        r = r.with_size(size as u64);
    }
    r
}

/// A relation's schema document, with its content.
pub(super) fn schema_contents(db: &str, rel: &Relation) -> ResourceContents {
    let json = schema_json(db, &rel.info);
    ResourceContents::text(schema_resource(db, rel, Some(json.len())), json)
}

/// A row's metadata for one of its formats.
pub(super) fn row_resource(uri: String, key: &[KeyValue], mime: &str, size: usize) -> Resource {
    Resource::new(uri, key_name(key))
        .with_mime_type(mime)
        .with_size(size as u64)
        .document()
}

/// The entries of a read row: its JSON, then its CSV.
pub(super) fn row_contents(uri: &str, row: RowOut) -> Vec<ResourceContents> {
    let mut out = vec![ResourceContents::text(
        row_resource(uri.to_owned(), &row.key, JSON_MIME_TYPE, row.json.len()),
        row.json,
    )];
    if let Some(csv) = row.csv {
        out.push(ResourceContents::text(
            row_resource(uri.to_owned(), &row.key, CSV_MIME_TYPE, csv.len()),
            csv,
        ));
    }
    out
}

/// A position in the default listing: after database `db`'s entry (`stage` 0), after
/// relation `name` (1) or after its schema document (2).
pub(super) fn default_position(db: usize, stage: u8, name: &str) -> Vec<u8> {
    let mut v = u16::try_from(db).unwrap_or(u16::MAX).to_be_bytes().to_vec();
    v.push(stage);
    v.extend_from_slice(name.as_bytes());
    v
}

pub(super) fn parse_default_position(bytes: &[u8]) -> Option<(usize, u8, String)> {
    let (&[hi, lo, stage], name) = bytes.split_first_chunk::<3>()?;
    Some((
        usize::from(u16::from_be_bytes([hi, lo])),
        stage,
        String::from_utf8(name.to_vec()).ok()?,
    ))
}

/// A page of the default listing: each database, its relations and their schema documents.
pub(super) fn list_default(
    dbs: &[Arc<Database>],
    budget: &Arc<Budget>,
    after: Option<&[u8]>,
    limit: usize,
    cache: Option<CacheHint>,
) -> Result<Page, ResourceError> {
    let (mut index, mut resume) = match after {
        None => (0, None),
        Some(bytes) => {
            let (i, stage, name) = parse_default_position(bytes)
                .ok_or_else(|| ResourceError::internal("bad position"))?;
            (i, Some((stage, name)))
        }
    };
    let mut resources: Vec<Listed> = Vec::with_capacity(limit.min(1024));
    let mut last: Option<Vec<u8>> = None;
    while index < dbs.len() {
        let db = &dbs[index];
        let cat = db
            .run(budget, |_, cat| Ok(Arc::clone(cat)))
            .map_err(|e| e.into_resource_error(PREFIX, db.pool.limits()))?;
        let mut entries: Vec<(u8, usize)> = Vec::new();
        let start = match &resume {
            None => {
                entries.push((0, 0));
                0
            }
            Some((0, _)) => 0,
            Some((1, name)) => match cat.get(name) {
                Some(_) => {
                    entries.push((2, cat.after(name) - 1));
                    cat.after(name)
                }
                None => cat.after(name),
            },
            Some((_, name)) => cat.after(name),
        };
        for i in start..cat.relations.len() {
            entries.push((1, i));
            entries.push((2, i));
        }
        for (stage, i) in entries {
            if resources.len() == limit {
                return Ok(Page {
                    resources,
                    next: last,
                    cache,
                });
            }
            let (resource, name) = match stage {
                0 => (database_resource(db, &cat), ""),
                1 => {
                    let rel = &cat.relations[i];
                    (relation_resource(&db.name, rel), rel.name())
                }
                _ => {
                    let rel = &cat.relations[i];
                    (schema_resource(&db.name, rel, None), rel.name())
                }
            };
            resources.push(resource.into());
            last = Some(default_position(index, stage, name));
        }
        index += 1;
        resume = None;
    }
    Ok(Page {
        resources,
        next: None,
        cache,
    })
}

/// The schema documents of a database's relations, whole, within `budget` bytes.
pub(super) fn schema_documents(db: &Database, cat: &Catalog, budget: u64) -> Vec<ResourceContents> {
    let mut used = 0u64;
    let mut out = Vec::new();
    for rel in &cat.relations {
        let entry = schema_contents(&db.name, rel);
        let size = entry.body.len() as u64;
        if used + size <= budget {
            used += size;
            out.push(entry);
        }
    }
    out
}
