//! Databases as resources: the model shared by every database backend (SQLite in
//! [`sqlite`]; PostgreSQL reuses this module with one more URI level).
//!
//! # URIs
//!
//! | URI | resource |
//! |---|---|
//! | `db://{db}` | a database: a collection of its tables and views |
//! | `db://{db}/{table}` | a table or view: a collection of its rows |
//! | `db://{db}/{table}/{pk}` | one row: a document |
//! | `db://{db}/{table}/$schema` | the table's or view's schema: a document |
//!
//! A backend with namespaces inside a database (PostgreSQL schemas) has one more level:
//! `db://{db}/{schema}/{table}/{pk}`. The helpers here take the relation's *path* (the
//! names between the database and the key: `[table]` or `[schema, table]`), so one parser
//! and one encoder serve both layouts ([`parse`] is told how many levels to expect).
//!
//! - **Segments** are split on `/` first and percent-decoded exactly once afterwards, so an
//!   encoded `/` (`%2F`) is part of a name or value, never a separator, and `..` or `%00`
//!   are just names that no catalog holds. Empty segments are refused.
//! - **The schema document** is the raw segment `$schema`. RFC 6570 simple expansion of
//!   `{pk}` always percent-encodes `$`, so no row's URI is ever `…/$schema`: a key whose
//!   text is `$schema` is `…/%24schema`. (The check is made on the raw segment, before
//!   decoding.)
//! - **Keys.** A row's segment is its primary key. Every byte but RFC 3986's unreserved
//!   characters (`A-Z a-z 0-9 - . _ ~`) is percent-encoded, exactly as RFC 6570 simple
//!   expansion writes a value, so the URIs served are the ones a client builds from the
//!   template. A composite key is its values in key order, each encoded, joined by a raw
//!   `,` (a `,` inside a value is `%2C`). For a one-column key the whole segment, decoded,
//!   is the value (a raw `,` is then just a character). A composite key given as one
//!   encoded value (`1%2C2`, which is what a template expansion of the string `"1,2"`
//!   gives) is also accepted: decoded once, then split on `,` when that gives exactly the
//!   key's number of values.
//! - **Key values as text**: integers in decimal, reals in their shortest round-trip form
//!   (`1.5`, `1.0`, `1e+300`), text and blobs as their bytes.
//! - Tables without a declared key are keyed by their rowid (or the backend's equivalent);
//!   relations without any key (views) are keyed by a position (see the backend's docs).
//!
//! # Formats
//!
//! A row is a JSON object (`application/json`) with one member per column, in column
//! order ([`row_json`]):
//!
//! | stored | JSON |
//! |---|---|
//! | NULL | `null` |
//! | integer | number |
//! | real | number; non-finite values (±∞, NaN) are `null` |
//! | text | string; text that is not valid UTF-8 is `{"base64": "…"}` (its bytes, standard base64), so nothing is lost |
//! | blob | string: the bytes in standard base64 (the schema document says which columns are blobs) |
//! | boolean (PostgreSQL) | `true` / `false` |
//! | JSON (PostgreSQL) | the value itself |
//!
//! Reading a row also returns a second entry with the same URI, a format alternative:
//! `text/csv` ([`row_csv`], RFC 4180): a header line with the column names and the row's
//! line, both ending in CRLF, fields quoted when they hold `,`, `"`, CR or LF. NULL is an
//! empty field; blobs and non-UTF-8 text are base64; reals as in JSON (non-finite ones as
//! `inf`, `-inf`, `NaN`).
//!
//! The schema document ([`schema_json`], `application/json`) names the relation, its
//! kind, its key, its columns (declared type, nullability, default, key position,
//! generated) and its definition (`CREATE …` statement).
//!
//! Every entry carries SEP-2093 metadata: `name`, `mimeType`, `size` (the bytes of that
//! entry) and `resourceType`. Collections (databases, tables, views) are
//! `inode/directory`, as every collection of this project is.
//!
//! # Listings
//!
//! Rows are listed in key order with a keyset position: the last row's key values,
//! type-tagged ([`encode_key_position`]), at most [`rsrc::MAX_POSITION_BYTES`]. A page
//! therefore costs one index range scan whatever its offset, and pages stay correct while
//! rows come and go: a row is listed once, in key order, unless it is deleted (or
//! inserted behind the position) during the walk.
//!
//! Invariants every backend keeps:
//! - Identifiers from a URI are only ever compared with the catalog; only catalog names,
//!   quoted as identifiers, reach SQL text, and every value is a bound parameter. A URI
//!   naming anything the catalog does not hold answers exactly like a missing resource.
//! - A URI this module encodes parses back to the same target, and keys whose values
//!   differ as text never encode to the same segment ([`key_segment`]). (Values that
//!   print alike, such as the integer `42` and the text `42` in a column that holds both,
//!   share a segment; the backend documents which one such a URI reads.)
//!
//! # Layout
//!
//! This file is a facade. `uri.rs` holds the URIs, templates and MIME types; `model.rs`
//! the backend-neutral description of relations and values; `render.rs` the formats;
//! `resources.rs` the resources every backend builds alike; `timeout.rs` the error of a
//! statement stopped by its time limit. The backends are `sqlite` and `postgres`.

mod model;
#[cfg(feature = "postgres")]
pub mod postgres;
mod render;
pub(crate) mod resources;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod timeout;
mod uri;

pub use model::{
    Cell, ColumnInfo, KeyKind, KeyValue, RelationInfo, RelationKind, ValueClass,
    decode_key_position, encode_key_position,
};
pub use render::{row_csv, row_json, schema_json};
pub use uri::{
    COLLECTION_MIME_TYPE, CSV_MIME_TYPE, JSON_MIME_TYPE, PREFIX, RowKey, SCHEMA_SEGMENT, Target,
    database_uri, key_name, key_segment, parse, push_segment, relation_uri, row_template, row_uri,
    schema_template, schema_uri,
};
