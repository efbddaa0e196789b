//! Searching a PostgreSQL database (`Provider::search`): first its catalog (the database,
//! its schemas, tables and views) in URI order, then the rows of each keyed relation by
//! key, relation by relation in (schema, name) order, matched with the engine's rule
//! (every word in the name, title, URI or description).
//!
//! Invariants: one call examines at most [`SCAN`] rows, fetched in key order in batches
//! (each an index range scan, like a listing page); a position resumes exactly where the
//! call stopped, and names its relation rather than an index, so a relation created or
//! dropped between calls moves nothing; rows of relations addressed by position are not
//! searched (their "keys" are numbers that say nothing, and each batch would sort the
//! relation).

use rsrc::{ListEntry, Page, ResourceError, SearchRequest};

use super::database::Database;
use crate::db::model::{KeyKind, KeyValue, decode_key_position, encode_key_position};
use crate::db::resources::row_entry;
use crate::db::uri::relation_uri;

/// Most rows one search call examines.
const SCAN: usize = 50_000;
/// Row keys fetched per statement.
const BATCH: usize = 4096;

/// Where a search stands.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// In the catalog, after the entry with this URI (from the first without one).
    Catalog(Option<String>),
    /// In the rows of relation (schema, name), after this key (from the first without).
    Rows(String, String, Option<Vec<KeyValue>>),
    /// At the first relation after (schema, name).
    Past(String, String),
}

fn push_name(out: &mut Vec<u8>, name: &str) -> Option<()> {
    out.extend(u16::try_from(name.len()).ok()?.to_be_bytes());
    out.extend(name.as_bytes());
    Some(())
}

fn take_name(bytes: &mut &[u8]) -> Option<String> {
    let len = usize::from(u16::from_be_bytes(bytes.get(..2)?.try_into().ok()?));
    let name = std::str::from_utf8(bytes.get(2..2 + len)?).ok()?.to_owned();
    *bytes = &bytes[2 + len..];
    Some(name)
}

/// The position of `stage`; `None` when it does not fit in one.
fn encode(stage: &Stage) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match stage {
        Stage::Catalog(after) => {
            out.push(0);
            out.extend(after.as_deref().unwrap_or_default().as_bytes());
        }
        Stage::Rows(schema, name, after) => {
            out.push(1);
            push_name(&mut out, schema)?;
            push_name(&mut out, name)?;
            if let Some(key) = after {
                out.extend(encode_key_position(key)?);
            }
        }
        Stage::Past(schema, name) => {
            out.push(2);
            push_name(&mut out, schema)?;
            push_name(&mut out, name)?;
        }
    }
    (out.len() <= rsrc::MAX_POSITION_BYTES).then_some(out)
}

/// The inverse of [`encode`]; `None` for bytes it never makes.
fn decode(bytes: &[u8]) -> Option<Stage> {
    let (&tag, mut rest) = bytes.split_first()?;
    if tag == 0 {
        let after = std::str::from_utf8(rest).ok()?;
        return Some(Stage::Catalog(
            (!after.is_empty()).then(|| after.to_owned()),
        ));
    }
    let schema = take_name(&mut rest)?;
    let name = take_name(&mut rest)?;
    match tag {
        1 if rest.is_empty() => Some(Stage::Rows(schema, name, None)),
        1 => Some(Stage::Rows(schema, name, Some(decode_key_position(rest)?))),
        2 if rest.is_empty() => Some(Stage::Past(schema, name)),
        _ => None,
    }
}

impl Database {
    /// A page of the search for `words` from `after` (see the module docs).
    pub(super) async fn search(
        &self,
        words: &[String],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Page, ResourceError> {
        let bad = || ResourceError::bad_position("");
        let stage = match after {
            None => Stage::Catalog(None),
            Some(bytes) => decode(bytes).ok_or_else(bad)?,
        };
        let search = SearchRequest::new(words, None, limit);
        let limit = limit.max(1);
        let cat = self.catalog();
        let mut hits: Vec<ListEntry> = Vec::new();
        let page = |hits, next: Option<Stage>| -> Result<Page, ResourceError> {
            let next = match next {
                Some(stage) => {
                    Some(encode(&stage).ok_or_else(|| ResourceError::internal("search position"))?)
                }
                None => None,
            };
            Ok(Page {
                resources: hits,
                next,
                cache: None,
            })
        };

        let (from, mut resume) = match stage {
            Stage::Catalog(after) => {
                let mut entries = vec![self.database_resource(&cat)];
                for (schema, rels) in &cat.schemas {
                    entries.push(self.namespace_resource(schema, rels.len()));
                    entries.extend(rels.values().map(|r| self.relation_resource(r)));
                }
                entries.sort_by(|a, b| a.uri.cmp(&b.uri));
                let start = after.map_or(0, |last| entries.partition_point(|r| r.uri <= last));
                let mut kept = None;
                for r in entries.into_iter().skip(start) {
                    if hits.len() >= limit {
                        // After the last one kept: the next call starts at this one.
                        return page(hits, Some(Stage::Catalog(kept)));
                    }
                    if search.matches_resource(&r) {
                        kept = Some(r.uri.clone());
                        hits.push(r.into());
                    }
                }
                (None, None)
            }
            Stage::Rows(schema, name, key) => (Some((schema, name, true)), key),
            Stage::Past(schema, name) => (Some((schema, name, false)), None),
        };

        // Collected first: the iterator's closures would be held across the awaits.
        let relations: Vec<_> = cat
            .schemas
            .values()
            .flat_map(|rels| rels.values().cloned())
            .filter(|rel| match &from {
                None => true,
                Some((s, n, inclusive)) => {
                    let here = rel.path();
                    let there = [s.as_str(), n.as_str()];
                    if *inclusive {
                        here >= there
                    } else {
                        here > there
                    }
                }
            })
            .collect();
        let mut examined = 0;
        for rel in relations {
            let [schema, name] = rel.path();
            // A resumed key applies only to the relation it was taken in.
            let mut after = match &from {
                Some((s, n, true)) if s == schema && n == name => resume.take(),
                _ => None,
            };
            if rel.info.key == KeyKind::Position {
                continue;
            }
            let path = [schema, name];
            let uri = relation_uri(&self.name, &path);
            loop {
                if hits.len() >= limit || examined >= SCAN {
                    let here = Stage::Rows(schema.to_owned(), name.to_owned(), after);
                    if encode(&here).is_some() {
                        return page(hits, Some(here));
                    }
                    // A key too large for a position: the rest of its relation is skipped.
                    tracing::debug!(%uri, "a key too large for a position: the rest of the relation is not searched");
                    return page(hits, Some(Stage::Past(schema.to_owned(), name.to_owned())));
                }
                let batch = BATCH.min(SCAN - examined);
                let (keys, more) = self.row_page(&uri, &rel, after.as_deref(), batch).await?;
                for key in keys {
                    examined += 1;
                    let row = row_entry(&self.name, &path, &key);
                    if search.matches_resource(&row) {
                        hits.push(row.into());
                    }
                    after = Some(key);
                    if hits.len() >= limit {
                        break;
                    }
                }
                if !more && hits.len() < limit {
                    break;
                }
            }
        }
        page(hits, None)
    }
}

#[cfg(test)]
mod tests {
    use super::{Stage, decode, encode};
    use crate::db::model::KeyValue;

    #[test]
    fn positions_round_trip_and_garbage_is_refused() {
        let s = |v: &str| v.to_owned();
        for stage in [
            Stage::Catalog(None),
            Stage::Catalog(Some(s("db://shop/app"))),
            Stage::Rows(s("app"), s("orders"), None),
            Stage::Rows(
                s("public"),
                s("a \"b\""),
                Some(vec![KeyValue::Integer(-1), KeyValue::Text(b"x,y".to_vec())]),
            ),
            Stage::Past(s("app"), s("")),
        ] {
            let bytes = encode(&stage).unwrap();
            assert_eq!(decode(&bytes), Some(stage));
        }
        assert_eq!(
            encode(&Stage::Rows(
                s("a"),
                s("b"),
                Some(vec![KeyValue::Text(vec![b'k'; 9000])])
            )),
            None
        );
        for garbage in [
            &[][..],
            &[0, 0xff],
            &[1, 0, 5, b'a'],
            &[2, 0, 1, b'a', 0, 1, b'b', 7],
            &[9, 0, 0, 0, 0],
        ] {
            assert_eq!(decode(garbage), None, "{garbage:?}");
        }
    }
}
