//! The PostgreSQL backend: one database served as `db://` resources in the layout of
//! [`crate::db`], with the database's schemas as one more collection level:
//!
//! | URI | resource |
//! |---|---|
//! | `db://{db}` | the database: a collection of its schemas |
//! | `db://{db}/{schema}` | a schema: a collection of its tables, views, materialized views and foreign tables |
//! | `db://{db}/{schema}/{table}` | a relation: a collection of its `$schema` document and rows |
//! | `db://{db}/{schema}/{table}/{pk}` | a row: JSON, and CSV as a format alternative |
//! | `db://{db}/{schema}/{table}/$schema` | the relation's schema document |
//!
//! `{db}` is the name the provider was given (`NAME=postgres://…`; by default the
//! database's own name), written literally in its templates
//! `db://NAME/{schema}/{table}/{pk}` and `db://NAME/{schema}/{table}/$schema`, so several
//! databases (and SQLite's `db://{db}/{table}/{pk}`) never share a template. The provider
//! is mounted at `db://NAME`; it answers only for exactly that database name.
//!
//! # Keys
//!
//! A table's primary key; a table without one is addressed by its `ctid` (the row's
//! physical position, `(page,item)`: it changes when the row is updated or the table
//! rewritten, so such URIs are only as stable as the rows). Views, materialized views and
//! foreign tables have no key: their rows are addressed by their 1-based position when
//! sorted by the whole row's text (`ORDER BY t::text`), deterministic for given data, and
//! reading position *n* sorts the relation (the statement timeout bounds it). Key values
//! are compared in the column's own type: an integer key takes only a canonical decimal
//! integer, any other is bound as text and cast to the column's catalog type
//! (`$1::text::uuid`), so an index on the key serves the lookup; a value the type cannot
//! hold (`not-a-uuid`) is a missing row.
//!
//! # Values
//!
//! Integers (`int2/4/8`, `oid`) are JSON numbers, `float4/8` numbers (non-finite: `null`),
//! `bool` booleans, `json`/`jsonb` the value itself, `bytea` base64, and everything else
//! (numeric, dates and times, uuid, arrays, …) PostgreSQL's own text form as a string
//! (`numeric` as a string keeps its precision).
//!
//! # Safety and limits
//!
//! Every connection of the pool (deadpool-postgres, at most `pool_size`) starts with
//! `default_transaction_read_only=on` and `statement_timeout`, so every statement runs in
//! a read-only transaction under a time limit whatever a view or function tries;
//! identifiers come only from the catalog (`pg_class`, `pg_attribute`, `pg_index`),
//! quoted, and every value is a bound parameter. Only relations the role may `SELECT`
//! from are served; the system schemas (`pg_catalog`, `information_schema`, `pg_toast`,
//! temporary schemas) never are. Rows larger than `max_row_bytes` are refused. The
//! connection is not encrypted (no TLS): use it on loopback or a trusted network.
//!
//! # Layout
//!
//! This file is a facade. `provider.rs` is the provider ([`PostgresProvider`]), the
//! handle that calls down; `database.rs` the served database (pool, catalog,
//! subscriptions) and how a URI names something of it, the state the rules take;
//! `config.rs` the settings and the error. The rules: `catalog.rs` what is served,
//! `rows.rs` every statement and how rows are decoded, `search.rs` searching by name and
//! key, `watch.rs` change notifications; beneath them `statement.rs`.

mod catalog;
mod config;
mod database;
mod provider;
mod rows;
mod search;
mod statement;
mod watch;

pub use config::{PostgresConfig, PostgresError};
pub use provider::PostgresProvider;
