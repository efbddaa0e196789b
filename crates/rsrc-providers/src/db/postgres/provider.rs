//! The PostgreSQL provider itself: [`PostgresProvider`], the handle an `rsrc::Server`
//! mounts at `db://NAME`, and its `rsrc::Provider` face. Invariant: it only calls down —
//! every answer is read from the served database (`database.rs`) by the statements of
//! `rows.rs` and `search.rs`, under the pool's read-only, time-limited connections.

use std::sync::Arc;

use rsrc::protocol::{Completion, Resource, ResourceContents, ResourceTemplate};
use rsrc::{
    ChangeFeed, CompleteRequest, ListEntry, ListRequest, Page, Provider, ProviderCapabilities,
    ReadOutput, RequestContext, ResourceError, SearchRequest, keyset,
};

use super::config::{PostgresConfig, PostgresError};
use super::database::Database;
use super::watch;
use crate::db::resources::{RelationPosition, relation_page};
use crate::db::uri::{
    JSON_MIME_TYPE, PREFIX, RowKey, SCHEMA_SEGMENT, Target, push_segment, row_uri,
};
use crate::kit::watch::{DigestWatched, Subscribed};

/// A PostgreSQL database as resources. Cheap to clone.
#[derive(Clone)]
pub struct PostgresProvider {
    pub(super) db: Arc<Database>,
}

impl std::fmt::Debug for PostgresProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresProvider")
            .field("name", &self.db.name)
            .finish_non_exhaustive()
    }
}

impl PostgresProvider {
    /// Connects to `url` (`postgres://user@host:port/db` or a libpq key/value string),
    /// checks that the server answers and loads the catalog. `name` is the `{db}` of the
    /// URIs; `None` takes the database's name from the URL (or the user's, as libpq does).
    pub async fn connect(
        name: Option<String>,
        url: &str,
        config: PostgresConfig,
    ) -> Result<PostgresProvider, PostgresError> {
        let db = Database::connect(name, url, config).await?;
        Ok(PostgresProvider { db })
    }

    /// The `{db}` of this database's URIs.
    pub fn name(&self) -> &str {
        &self.db.name
    }

    /// The mount prefix: `db://NAME`.
    pub fn prefix(&self) -> &str {
        &self.db.uri
    }
}

/// A page of a URI-ordered, in-memory listing under `filter`, keyset-paginated on the URI
/// of the last entry (examined, under a filter).
fn page_of(mut entries: Vec<Resource>, req: &ListRequest<'_>, limit: usize) -> Page {
    entries.sort_by(|a, b| a.uri.cmp(&b.uri));
    let after = req.after.and_then(|a| std::str::from_utf8(a).ok());
    let rest = keyset::after(&entries, after, |r| r.uri.as_str());
    let page = rsrc::filter::page(
        req.filter,
        rest,
        limit,
        |f, r| f.matches_resource(r),
        |r| r.uri.clone().into_bytes(),
    );
    Page {
        resources: page
            .items
            .into_iter()
            .cloned()
            .map(ListEntry::from)
            .collect(),
        next: page.next,
        cache: None,
    }
}

impl DigestWatched for PostgresProvider {
    fn watches(&self) -> bool {
        self.db.config.watch
    }

    fn tables(&self) -> impl Iterator<Item = &Subscribed> {
        std::iter::once(&self.db.subscribed)
    }
}

impl Provider for PostgresProvider {
    fn templates(&self) -> Vec<ResourceTemplate> {
        let mut base = String::from(PREFIX);
        push_segment(&mut base, self.db.name.as_bytes());
        vec![
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{{pk}}"),
                format!("{}-rows", self.db.name),
            )
            .with_title(format!("Rows of PostgreSQL database {}", self.db.name))
            .with_description("A row by its primary key (ctid without one; position in views)")
            .with_mime_type(JSON_MIME_TYPE),
            ResourceTemplate::new(
                format!("{base}/{{schema}}/{{table}}/{SCHEMA_SEGMENT}"),
                format!("{}-schemas", self.db.name),
            )
            .with_title(format!("Table schemas of {}", self.db.name))
            .with_mime_type(JSON_MIME_TYPE),
        ]
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let limit = req.limit.max(1);
        let Some(parent) = req.parent else {
            // The catalog: the database, its schemas, relations and schema documents.
            let mut entries = vec![s.database_resource(&cat)];
            for (schema, rels) in &cat.schemas {
                entries.push(s.namespace_resource(schema, rels.len()));
                for rel in rels.values() {
                    entries.push(s.relation_resource(rel));
                    entries.push(s.schema_contents(rel).resource);
                }
            }
            return Ok(page_of(entries, &req, limit));
        };
        match s.target(parent)? {
            Target::Database { .. } => {
                let entries = cat
                    .schemas
                    .iter()
                    .map(|(n, rels)| s.namespace_resource(n, rels.len()))
                    .collect();
                Ok(page_of(entries, &req, limit))
            }
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat
                    .schemas
                    .get(&path[0])
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let entries = rels.values().map(|r| s.relation_resource(r)).collect();
                Ok(page_of(entries, &req, limit))
            }
            Target::Relation { path, .. } => {
                let rel = cat
                    .relation(&path)
                    .ok_or_else(|| ResourceError::not_found(parent))?;
                let from = RelationPosition::decode(req.after)
                    .ok_or_else(|| ResourceError::bad_position(parent))?;
                let (keys, more) = match from.rows_to_fetch(limit, req.filter) {
                    0 => (Vec::new(), true),
                    want => s.row_page(parent, rel, from.after_key(), want).await?,
                };
                let schema = s.schema_contents(rel).resource;
                relation_page(
                    (&s.name, &rel.info),
                    &from,
                    schema,
                    (&keys, more),
                    (limit, req.filter),
                    None,
                )
                .ok_or_else(
                    || {
                        ResourceError::invalid(
                            parent,
                            format!(
                                "{parent}: a row's primary key is too large to continue the listing after it"
                            ),
                        )
                    },
                )
            }
            Target::Schema { .. } | Target::Row { .. } => {
                Err(ResourceError::not_a_collection(parent))
            }
        }
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let missing = || ResourceError::not_found(uri);
        match s.target(uri)? {
            Target::Database { .. } => Ok(s.database_resource(&cat)),
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat.schemas.get(&path[0]).ok_or_else(missing)?;
                Ok(s.namespace_resource(&path[0], rels.len()))
            }
            Target::Relation { path, .. } => {
                Ok(s.relation_resource(cat.relation(&path).ok_or_else(missing)?))
            }
            Target::Schema { path, .. } => Ok(s
                .schema_contents(cat.relation(&path).ok_or_else(missing)?)
                .resource),
            Target::Row { path, key, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                let mut entries = s.read_row(uri, rel, &key).await?;
                Ok(entries.swap_remove(0).resource)
            }
        }
    }

    async fn read(&self, _ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let missing = || ResourceError::not_found(uri);
        let budget = s.config.collection_budget;
        let within = |docs: Vec<ResourceContents>| {
            let mut used = 0;
            docs.into_iter()
                .take_while(|d| {
                    used += d.body.len();
                    used <= budget
                })
                .collect::<Vec<_>>()
        };
        let contents = match s.target(uri)? {
            Target::Database { .. } => within(
                cat.schemas
                    .values()
                    .flat_map(|rels| rels.values().map(|r| s.schema_contents(r)))
                    .collect(),
            ),
            Target::Relation { path, .. } if path.len() == 1 => {
                let rels = cat.schemas.get(&path[0]).ok_or_else(missing)?;
                within(rels.values().map(|r| s.schema_contents(r)).collect())
            }
            Target::Relation { path, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                let mut docs = vec![s.schema_contents(rel)];
                let (keys, _) = s
                    .row_page(uri, rel, None, s.config.collection_max_rows)
                    .await?;
                let mut used = docs[0].body.len();
                for key in keys {
                    let row_uri = row_uri(&s.name, &rel.path(), &key);
                    let segment = row_uri.rsplit('/').next().unwrap_or_default();
                    let mut entries = match s
                        .read_row(&row_uri, rel, &RowKey::from_segment(segment))
                        .await
                    {
                        Ok(e) => e,
                        Err(ResourceError::NotFound { .. }) => continue,
                        Err(e) => return Err(e),
                    };
                    entries.truncate(1);
                    used += entries[0].body.len();
                    if used > budget {
                        break;
                    }
                    docs.extend(entries);
                }
                docs
            }
            Target::Schema { path, .. } => {
                vec![s.schema_contents(cat.relation(&path).ok_or_else(missing)?)]
            }
            Target::Row { path, key, .. } => {
                let rel = cat.relation(&path).ok_or_else(missing)?;
                s.read_row(uri, rel, &key).await?
            }
        };
        Ok(contents.into())
    }

    async fn complete(
        &self,
        _ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        let s = &self.db;
        let cat = s.catalog();
        let limit = s.config.completion_limit;
        let prefixed = |names: &mut dyn Iterator<Item = &String>| {
            Completion::from_matches(
                names
                    .filter(|n| n.starts_with(req.value))
                    .take(limit)
                    .cloned()
                    .collect(),
            )
        };
        let schema = req.context.get("schema");
        match req.argument {
            "schema" => Ok(prefixed(&mut cat.schemas.keys())),
            "table" => match schema.and_then(|n| cat.schemas.get(n)) {
                Some(rels) => Ok(prefixed(&mut rels.keys())),
                None => Ok(prefixed(&mut cat.schemas.values().flat_map(|r| r.keys()))),
            },
            "pk" => {
                let (Some(schema), Some(table)) = (schema, req.context.get("table")) else {
                    return Ok(Completion::empty());
                };
                let Some(rel) = cat.relation(&[schema.clone(), table.clone()]) else {
                    return Ok(Completion::empty());
                };
                s.complete_keys(rel, req.value, limit).await
            }
            _ => Ok(Completion::empty()),
        }
    }

    /// The catalog by name, then rows by key (see [`search`]), resumable across calls.
    async fn search(
        &self,
        _ctx: &RequestContext,
        req: SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        self.db
            .search(req.words, req.after, req.limit)
            .await
            .map(Some)
    }

    fn capabilities(&self) -> ProviderCapabilities {
        self.watched_capabilities()
    }

    /// Its watcher digests subscribed resources only ([`DigestWatched`]).
    fn hears_every_change(&self) -> bool {
        self.hears_unsubscribed_changes()
    }

    fn armed(&self) -> bool {
        self.watchers_armed()
    }

    fn attach(&self, feed: ChangeFeed) {
        if !self.db.config.watch {
            return;
        }
        watch::start(&self.db, &feed);
    }

    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.metadata(ctx, uri).await?;
        self.db.remember(uri).await;
        Ok(())
    }
}
