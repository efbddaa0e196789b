//! The SQLite backend: one or more SQLite databases served as `db://` resources, in the
//! layout of [`crate::db`] (`db://{db}`, `db://{db}/{table}`, `db://{db}/{table}/{pk}`,
//! `db://{db}/{table}/$schema`).
//!
//! Each database has a name (`NAME=sqlite:PATH` on the command line; by default the
//! file's stem), so one provider and one template, `db://{db}/{table}/{pk}`, cover all of
//! them.
//!
//! # What is served
//!
//! - **Relations**: every table, view and virtual table of the `main` schema, except
//!   SQLite's own (`sqlite_…`) and the shadow tables behind virtual tables.
//! - **Keys**: a table's primary key; for a table without one, its rowid (under the first
//!   of `rowid`, `_rowid_`, `oid` that no column shadows); a `WITHOUT ROWID` table always
//!   has its primary key. A primary-key value is bound by what its column can hold: a
//!   rowid, an `INTEGER PRIMARY KEY` or a STRICT table's `INTEGER` column takes only a
//!   canonical integer (`42`, not `042` or `4x`: anything else is a missing row); other
//!   columns take the segment as text, as a blob and, when it reads as one, as a number,
//!   compared under the column's own affinity and collation. If values that print alike
//!   (the integer 42 and the text `42` in an untyped column) are both keys, the URI reads
//!   the first in key order.
//! - **Views** have no key: a view's rows are addressed by their 1-based position when
//!   the view's rows are sorted by all their columns (`ORDER BY 1, 2, …`). This is
//!   deterministic for given data, but positions shift when the data changes, and reading
//!   position *n* sorts the view (views are meant to be small; the statement time limit
//!   bounds the rest). A table whose rowid is shadowed by columns named `rowid`, `_rowid_`
//!   and `oid` is addressed the same way.
//! - **NULL keys**: a rowid table's non-integer primary key may hold NULL (an old SQLite
//!   quirk); such rows have no address and are left out of listings and reads.
//!
//! # Listings and reads
//!
//! - The default listing (`resources/list` without `uri`) holds each database, each of its
//!   tables and views, and each one's `$schema` document: the catalog, never the rows
//!   (listing every row of every table would be unbounded).
//! - A database's listing holds its tables and views; a table's or view's listing holds
//!   its `$schema` document, then its rows in key order, keyset-paginated (a view's by
//!   position, counted with `LIMIT`/`OFFSET`). Row entries carry URI, name (the key as
//!   text), type and kind; their size is in `resources/metadata` and reads.
//! - Reading a row returns its JSON and, as a format alternative, its CSV. Reading a table
//!   or view returns its schema document and its first rows (JSON), whole documents only,
//!   within the collection budget; reading a database returns its relations' schema
//!   documents within the same budget.
//!
//! # Safety and limits
//!
//! Databases are opened read-only (`conn.rs`); identifiers come only from the catalog
//! (`catalog.rs`) and every value is bound. A value or row over `max_row_bytes` is
//! refused (`TooLarge`); a request that keeps SQLite busy past `statement_timeout` is
//! stopped; a database locked by a writer past `busy_timeout` answers an error saying
//! so. All SQLite work runs on blocking threads, never on the async runtime.
//!
//! # Changes
//!
//! A thread per database (`watch.rs`) polls `PRAGMA data_version` every `poll_interval`.
//! When another connection has committed, it publishes `list_changed` and an update of
//! each subscribed URI of that database whose digest changed: a row's or schema
//! document's digest is a hash of its JSON; a table's or view's is the hash of all its rows
//! when it has at most `exact_digest_rows` of them, else of its row count and first and
//! last keys (then a change inside a large table that keeps both goes unnoticed by the
//! table's subscribers, though not by its rows'); a database's is a hash of its catalog.
//! A schema change reloads the catalog (checked on every request with
//! `PRAGMA schema_version`, so answers never wait for the poll).
//!
//! # Layout
//!
//! This file is a facade. `provider.rs` is the provider ([`SqliteProvider`]), the handle
//! that calls down; `database.rs` one served database (its connections, catalog and
//! subscriptions), the state the rules take; `config.rs` the settings and the databases
//! to serve; `error.rs` the build error. The rules: `resources.rs` the listings and
//! collections, `rows.rs` rows, `search.rs` search, `complete.rs` completion, `digest.rs`
//! the digests the watcher compares, `watch.rs` the watcher; beneath them `catalog.rs`,
//! `conn.rs` (connections and the time budget) and `values.rs`.

mod catalog;
mod complete;
mod config;
mod conn;
mod database;
mod digest;
mod error;
mod provider;
mod resources;
mod rows;
mod search;
mod values;
mod watch;

pub use config::{SqliteConfig, SqliteSource, default_name};
pub use error::SqliteError;
pub use provider::SqliteProvider;
