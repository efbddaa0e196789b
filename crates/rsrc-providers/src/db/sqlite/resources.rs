//! The SQLite provider's own resources: how a database is described, the default listing
//! (the catalog of every database, never its rows) and a database read as its schema
//! documents. Relations, rows and schema documents are built by the shared builders of
//! [`crate::db::resources`].
//!
//! Invariant: every URI written here is built by the shared encoders of [`crate::db`], so
//! it parses back to the resource it names.

use std::sync::Arc;

use rsrc::protocol::{CacheHint, Resource, ResourceContents};
use rsrc::{Filter, ListEntry, Page, ResourceError};

use super::catalog::{Catalog, Relation};
use super::conn::Budget;
use super::database::Database;
use crate::db::resources::{self, counted, schema_contents, schema_resource};
use crate::db::uri::PREFIX;

/// How the rows of a relation without a key are ordered (see the module docs of
/// [`super`]).
const POSITION_ORDER: &str = "all columns";

/// A database: a collection of its tables and views.
pub(super) fn database_resource(db: &Database, cat: &Catalog) -> Resource {
    let (tables, views) = cat.counts();
    resources::database_resource(
        &db.name,
        format!(
            "SQLite database: {}, {}",
            counted(tables, "table"),
            counted(views, "view")
        ),
    )
}

/// A table or view: a collection of its schema document and rows.
pub(super) fn relation_resource(db: &str, rel: &Relation) -> Resource {
    resources::relation_resource(db, &rel.info, POSITION_ORDER)
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

/// A page of the default listing: each database, its relations and their schema documents
/// (those matching `filter`, at most [`Filter::scan`] examined).
pub(super) fn list_default(
    dbs: &[Arc<Database>],
    budget: &Arc<Budget>,
    (after, limit, filter): (Option<&[u8]>, usize, Option<&Filter>),
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
    let mut resources: Vec<ListEntry> = Vec::with_capacity(limit.min(1024));
    // The position of the last entry examined (listed, or passed over by the filter).
    let mut last: Option<Vec<u8>> = None;
    let scan = filter.map_or(usize::MAX, Filter::scan);
    let mut examined = 0;
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
            let full = resources.len() >= limit;
            if (full && filter.is_none()) || examined == scan {
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
                    (schema_resource(&db.name, &rel.info, None), rel.name())
                }
            };
            let position = default_position(index, stage, name);
            if let Some(f) = filter {
                examined += 1;
                if !f.matches_resource(&resource) {
                    last = Some(position);
                    continue;
                }
                if full {
                    return Ok(Page {
                        resources,
                        next: last,
                        cache,
                    });
                }
            }
            resources.push(resource.into());
            last = Some(position);
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
        let entry = schema_contents(&db.name, &rel.info);
        let size = entry.body.len() as u64;
        if used + size <= budget {
            used += size;
            out.push(entry);
        }
    }
    out
}
