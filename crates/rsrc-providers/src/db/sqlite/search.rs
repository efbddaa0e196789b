//! Searching SQLite databases (`Provider::search`): each database, then each of its
//! tables and views, then the rows of each keyed relation by key, in that order, matched
//! with the engine's rule (every word in the name, title, URI or description).
//!
//! Invariants: one call examines at most [`SCAN`] rows, fetched in key order in batches;
//! a position resumes exactly where the call stopped (the database, the relation, the
//! last row key examined); rows of views addressed by position are not searched (their
//! "keys" are numbers that say nothing).

use rsrc::protocol::Resource;
use rsrc::{ListEntry, SearchRequest};
use rusqlite::Connection;

use super::catalog::Catalog;
use super::conn::OpError;
use super::database::Database;
use super::resources::{database_resource, relation_resource};
use super::rows;
use crate::db::model::{KeyValue, decode_key_position, encode_key_position};
use crate::db::resources::row_entry;

/// Most rows one search call examines, over every database.
pub(super) const SCAN: usize = 50_000;
/// Row keys fetched per statement.
const BATCH: usize = 4096;

/// Where a search stands within one database.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stage {
    /// Before the database's own resource.
    Database,
    /// Before the relation at this index.
    Relation(usize),
    /// In the rows of the relation at this index, after this key (from the first row
    /// without one).
    Rows(usize, Option<Vec<KeyValue>>),
}

/// The position of `stage` in the database at `db`: a tag, the database's index, the
/// relation's and the key's position. `None` when the key is too large for a position.
pub(super) fn encode(db: usize, stage: &Stage) -> Option<Vec<u8>> {
    let db = u16::try_from(db).ok()?.to_be_bytes();
    let relation = |tag: u8, i: usize| -> Option<Vec<u8>> {
        let mut out = vec![tag];
        out.extend(db);
        out.extend(u32::try_from(i).ok()?.to_be_bytes());
        Some(out)
    };
    match stage {
        Stage::Database => Some([[0].as_slice(), &db].concat()),
        Stage::Relation(i) => relation(1, *i),
        Stage::Rows(i, key) => {
            let mut out = relation(2, *i)?;
            if let Some(key) = key {
                out.extend(encode_key_position(key)?);
            }
            (out.len() <= rsrc::MAX_POSITION_BYTES).then_some(out)
        }
    }
}

/// The inverse of [`encode`]; `None` for bytes it never makes.
pub(super) fn decode(bytes: &[u8]) -> Option<(usize, Stage)> {
    let (&tag, rest) = bytes.split_first()?;
    let db = usize::from(u16::from_be_bytes(rest.get(..2)?.try_into().ok()?));
    let rest = &rest[2..];
    if tag == 0 {
        return rest.is_empty().then_some((db, Stage::Database));
    }
    let i = usize::try_from(u32::from_be_bytes(rest.get(..4)?.try_into().ok()?)).ok()?;
    let rest = &rest[4..];
    match tag {
        1 if rest.is_empty() => Some((db, Stage::Relation(i))),
        2 if rest.is_empty() => Some((db, Stage::Rows(i, None))),
        2 => Some((db, Stage::Rows(i, Some(decode_key_position(rest)?)))),
        _ => None,
    }
}

/// What one database gave a search call.
pub(super) struct Found {
    /// The matches, at most the limit.
    pub(super) hits: Vec<ListEntry>,
    /// Where to go on in this database; `None` when it is done.
    pub(super) next: Option<Stage>,
    /// Rows examined.
    pub(super) examined: usize,
}

/// Searches `db` from `stage` for at most `limit` matches, examining at most `scan` rows.
pub(super) fn within(
    db: &Database,
    conn: &Connection,
    cat: &Catalog,
    words: &[String],
    mut stage: Stage,
    limit: usize,
    scan: usize,
) -> Result<Found, OpError> {
    let search = SearchRequest::new(words, None, limit);
    let mut found = Found {
        hits: Vec::new(),
        next: None,
        examined: 0,
    };
    let keep = |r: Resource, hits: &mut Vec<ListEntry>| {
        if search.matches_resource(&r) {
            hits.push(r.into());
        }
    };
    loop {
        if found.hits.len() >= limit {
            found.next = Some(stage);
            return Ok(found);
        }
        stage = match stage {
            Stage::Database => {
                keep(database_resource(db, cat), &mut found.hits);
                Stage::Relation(0)
            }
            Stage::Relation(i) => {
                let Some(rel) = cat.relations.get(i) else {
                    return Ok(found);
                };
                keep(relation_resource(&db.name, rel), &mut found.hits);
                Stage::Rows(i, None)
            }
            Stage::Rows(i, after) => {
                let Some(rel) = cat.relations.get(i).filter(|r| !r.is_positional()) else {
                    stage = Stage::Relation(i + 1);
                    continue;
                };
                if found.examined >= scan {
                    found.next = Some(Stage::Rows(i, after));
                    return Ok(found);
                }
                let batch = BATCH.min(scan - found.examined);
                let (keys, more) = rows::list_keys(conn, rel, after.as_deref(), batch)?;
                let path = [rel.name()];
                let mut last = None;
                for key in keys {
                    found.examined += 1;
                    let row = row_entry(&db.name, &path, &key);
                    keep(row, &mut found.hits);
                    last = Some(key);
                    if found.hits.len() >= limit {
                        break;
                    }
                }
                match last {
                    Some(key) if more || found.hits.len() >= limit => Stage::Rows(i, Some(key)),
                    _ => Stage::Relation(i + 1),
                }
            }
        };
        // A position that cannot hold its key skips the rest of that relation.
        if let Stage::Rows(i, _) = stage
            && encode(0, &stage).is_none()
        {
            tracing::debug!(database = %db.name, "a key too large for a position: the rest of its relation is not searched");
            stage = Stage::Relation(i + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Stage, decode, encode};
    use crate::db::model::KeyValue;

    #[test]
    fn positions_round_trip_and_garbage_is_refused() {
        for (db, stage) in [
            (0, Stage::Database),
            (3, Stage::Relation(7)),
            (1, Stage::Rows(2, None)),
            (
                65_535,
                Stage::Rows(
                    9,
                    Some(vec![KeyValue::Text(b"a,b".to_vec()), KeyValue::Integer(-1)]),
                ),
            ),
        ] {
            let bytes = encode(db, &stage).unwrap();
            assert_eq!(decode(&bytes), Some((db, stage)));
        }
        assert_eq!(encode(65_536, &Stage::Database), None);
        assert_eq!(
            encode(
                0,
                &Stage::Rows(0, Some(vec![KeyValue::Blob(vec![0; 9000])]))
            ),
            None
        );
        for garbage in [
            &[][..],
            &[0, 0],
            &[0, 0, 0, 1],
            &[1, 0, 0, 0],
            &[9, 0, 0, 0, 0, 0, 0],
        ] {
            assert_eq!(decode(garbage), None, "{garbage:?}");
        }
    }
}
