//! The served part of a PostgreSQL database's catalog: which relations there are, their
//! columns, keys and how each column is selected and decoded.
//!
//! Invariant: every name here comes from `pg_class` / `pg_attribute` / `pg_index`; only
//! these names, quoted by [`quote`], ever reach SQL text.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use deadpool_postgres::Pool;
use tokio_postgres::types::Type;

use super::statement::Session;
use crate::db::model::{ColumnInfo, KeyKind, RelationInfo, RelationKind, ValueClass};

/// How a column's values are selected and decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PgKind {
    Int,
    Float,
    Bool,
    Json,
    Bytes,
    Text,
}

impl PgKind {
    pub(super) fn of(type_name: &str) -> PgKind {
        match type_name {
            "int2" | "int4" | "int8" | "oid" => PgKind::Int,
            "float4" | "float8" => PgKind::Float,
            "bool" => PgKind::Bool,
            "json" | "jsonb" => PgKind::Json,
            "bytea" => PgKind::Bytes,
            _ => PgKind::Text,
        }
    }

    /// The select expression for column `col` (quoted).
    pub(super) fn select(self, col: &str) -> String {
        match self {
            PgKind::Int => format!("{col}::int8"),
            PgKind::Float => format!("{col}::float8"),
            PgKind::Bool | PgKind::Bytes => col.to_owned(),
            PgKind::Json | PgKind::Text => format!("{col}::text"),
        }
    }
}

/// One relation, as the catalog describes it.
#[derive(Debug)]
pub(super) struct Relation {
    pub(super) info: RelationInfo,
    /// Per column: how it is selected.
    pub(super) kinds: Vec<PgKind>,
    /// Per column: its type as `format_type` writes it (for casts of bound key values).
    pub(super) types: Vec<String>,
    /// The quoted `"schema"."name"`.
    pub(super) quoted: String,
}

impl Relation {
    pub(super) fn path(&self) -> [&str; 2] {
        [
            self.info.namespace.as_deref().unwrap_or_default(),
            self.info.name.as_str(),
        ]
    }

    pub(super) fn select_list(&self) -> String {
        let cols: Vec<String> = self
            .info
            .columns
            .iter()
            .zip(&self.kinds)
            .map(|(c, k)| k.select(&quote(&c.name)))
            .collect();
        if cols.is_empty() {
            "NULL".to_owned()
        } else {
            cols.join(", ")
        }
    }

    /// Key columns, quoted, with their kinds and types (`ctid` for row-id tables).
    pub(super) fn key_columns(&self) -> Vec<(String, PgKind, String)> {
        match &self.info.key {
            KeyKind::PrimaryKey(cols) => cols
                .iter()
                .map(|&i| {
                    (
                        quote(&self.info.columns[i].name),
                        self.kinds[i],
                        self.types[i].clone(),
                    )
                })
                .collect(),
            KeyKind::RowId(_) => vec![("ctid".to_owned(), PgKind::Text, "tid".to_owned())],
            KeyKind::Position => Vec::new(),
        }
    }
}

/// The served part of the catalog: schema → relation name → relation.
#[derive(Debug, Default)]
pub(super) struct Catalog {
    pub(super) schemas: BTreeMap<String, BTreeMap<String, Arc<Relation>>>,
    pub(super) fingerprint: u64,
}

impl Catalog {
    pub(super) fn relation(&self, path: &[String]) -> Option<&Arc<Relation>> {
        match path {
            [schema, name] => self.schemas.get(schema)?.get(name),
            _ => None,
        }
    }
}

pub(super) fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

const CATALOG_SQL: &str = "
SELECT c.oid, n.nspname::text, c.relname::text, c.relkind::text,
       CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
  AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
ORDER BY 2, 3";

const COLUMNS_SQL: &str = "
SELECT a.attrelid, a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attgenerated <> '', t.typname::text, a.attnum
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum";

const KEYS_SQL: &str = "
SELECT i.indrelid, i.indkey::int2[] FROM pg_index i
WHERE i.indisprimary AND i.indrelid = ANY($1)";

/// Reads the served part of the catalog through `pool`.
pub(super) async fn load(pool: &Pool) -> Result<Catalog, String> {
    // The catalog is read with the start-up settings (`format_type` depends on the
    // `search_path`), whatever an earlier statement's view changed: `Session` resets them.
    let session = Session::open(pool).await.map_err(|e| e.to_string())?;
    let rels = session
        .query(CATALOG_SQL, &[])
        .await
        .map_err(|e| e.to_string())?;
    let oids: Vec<u32> = rels.iter().map(|r| r.get(0)).collect();
    let cols = session
        .query(COLUMNS_SQL, &[(&oids, Type::OID_ARRAY)])
        .await
        .map_err(|e| e.to_string())?;
    let keys = session
        .query(KEYS_SQL, &[(&oids, Type::OID_ARRAY)])
        .await
        .map_err(|e| e.to_string())?;
    let mut columns: HashMap<u32, Vec<(i16, ColumnInfo, PgKind, String)>> = HashMap::new();
    for c in &cols {
        let oid: u32 = c.get(0);
        let type_name: String = c.get(6);
        let kind = PgKind::of(&type_name);
        let declared: String = c.get(2);
        let info = ColumnInfo {
            name: c.get(1),
            declared_type: declared.clone(),
            class: if kind == PgKind::Int {
                ValueClass::Integer
            } else {
                ValueClass::Text
            },
            not_null: c.get(3),
            default: c.get(4),
            primary_key: None,
            generated: c.get(5),
        };
        columns
            .entry(oid)
            .or_default()
            .push((c.get(7), info, kind, declared));
    }
    let keys: HashMap<u32, Vec<i16>> = keys.iter().map(|k| (k.get(0), k.get(1))).collect();
    let mut catalog = Catalog::default();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for r in &rels {
        let oid: u32 = r.get(0);
        let schema: String = r.get(1);
        let name: String = r.get(2);
        let relkind: String = r.get(3);
        let cols = columns.remove(&oid).unwrap_or_default();
        let kind = match relkind.as_str() {
            "v" => RelationKind::View,
            "m" => RelationKind::MaterializedView,
            "f" => RelationKind::Virtual,
            _ => RelationKind::Table,
        };
        let mut infos: Vec<ColumnInfo> = Vec::with_capacity(cols.len());
        let mut kinds = Vec::with_capacity(cols.len());
        let mut types = Vec::with_capacity(cols.len());
        let mut attnums = Vec::with_capacity(cols.len());
        for (attnum, info, k, t) in cols {
            attnums.push(attnum);
            infos.push(info);
            kinds.push(k);
            types.push(t);
        }
        let key = match (kind, keys.get(&oid)) {
            (RelationKind::Table, Some(attrs)) => {
                let idx: Option<Vec<usize>> = attrs
                    .iter()
                    .map(|a| attnums.iter().position(|n| n == a))
                    .collect();
                match idx {
                    Some(idx) if !idx.is_empty() => {
                        for (pos, &i) in idx.iter().enumerate() {
                            infos[i].primary_key = u32::try_from(pos + 1).ok();
                        }
                        KeyKind::PrimaryKey(idx)
                    }
                    _ => KeyKind::RowId("ctid".into()),
                }
            }
            (RelationKind::Table, None) => KeyKind::RowId("ctid".into()),
            _ => KeyKind::Position,
        };
        (&schema, &name, &relkind, format!("{key:?}")).hash(&mut hasher);
        for c in &infos {
            (&c.name, &c.declared_type, c.not_null, &c.default).hash(&mut hasher);
        }
        let quoted = format!("{}.{}", quote(&schema), quote(&name));
        let rel = Relation {
            info: RelationInfo {
                namespace: Some(schema.clone()),
                name: name.clone(),
                kind,
                columns: infos,
                key,
                definition: r.get(4),
                flags: Vec::new(),
            },
            kinds,
            types,
            quoted,
        };
        catalog
            .schemas
            .entry(schema)
            .or_default()
            .insert(name, Arc::new(rel));
    }
    catalog.fingerprint = hasher.finish();
    Ok(catalog)
}
