//! Shared fixtures of the SQLite tests: real database files built with rusqlite, served
//! by the SQLite provider through the engine, spoken to by a raw-JSON peer.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use rsrc::Server;
use rsrc_providers::db::PREFIX;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider};
use rsrc_testkit::Peer;
use serde_json::Value;

/// The shop: every kind of table the provider distinguishes.
pub const SHOP: &str = r#"
CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL, born INTEGER);
INSERT INTO authors VALUES (1, 'Ursula', 1929), (2, 'Italo', 1923), (3, 'Wisława', 1923);

CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    author_id INTEGER REFERENCES authors(id),
    title TEXT,
    price REAL,
    cover BLOB
);
INSERT INTO books VALUES
    (1, 1, 'The Dispossessed', 9.5, x'00ff10'),
    (2, 2, 'Invisible Cities', 12.25, NULL),
    (3, 2, 'Mr "Palomar", with, commas', 7.0, x''),
    (4, 3, CAST(x'ff41fe' AS TEXT), NULL, NULL);

CREATE TABLE tags (book_id INTEGER, tag TEXT, PRIMARY KEY (book_id, tag)) WITHOUT ROWID;
INSERT INTO tags VALUES (1, 'anarchy'), (1, 'sf'), (2, 'cities'), (2, 'a,b'), (3, '$schema');

CREATE TABLE log (at TEXT, message TEXT);
INSERT INTO log VALUES ('09:00', 'opened'), ('09:05', 'sold 1'), ('17:00', 'closed');

CREATE TABLE kv (k TEXT PRIMARY KEY, v);
INSERT INTO kv VALUES ('$schema', 1), ('a/b', 2), ('100%', 3), ('apple', 4), ('banana', 5),
    ('x"; DROP TABLE x;--', 6);

CREATE TABLE x (id INTEGER PRIMARY KEY);
INSERT INTO x VALUES (1);

CREATE VIEW cheap_books AS SELECT title, price FROM books WHERE price < 10;
"#;

/// Creates `dir/file` (a new database) and runs `sql` in it.
pub fn create_db(dir: &Path, file: &str, sql: &str) -> PathBuf {
    let path = dir.join(file);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    path
}

/// The shop, as `dir/shop.db`.
pub fn shop(dir: &Path) -> PathBuf {
    create_db(dir, "shop.db", SHOP)
}

pub use crate::common::peer_for;

pub fn server_for(provider: SqliteProvider, page_size: usize) -> Server {
    crate::common::server_at(PREFIX, provider, page_size)
}

/// A server over the database at `path` (default settings), and a peer connected to it.
pub async fn serve(path: &Path) -> (Server, Peer) {
    serve_with(path, SqliteConfig::default(), 1000).await
}

pub async fn serve_with(path: &Path, config: SqliteConfig, page_size: usize) -> (Server, Peer) {
    let server = server_for(SqliteProvider::open(path, config).unwrap(), page_size);
    let peer = peer_for(&server).await;
    (server, peer)
}

/// A connection that may write, as another process would.
pub fn writer(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

/// The `contents` of a `resources/read` answer.
pub fn contents(resp: &Value) -> &Vec<Value> {
    resp["result"]["contents"]
        .as_array()
        .unwrap_or_else(|| panic!("no contents: {resp}"))
}

/// The JSON a text entry holds.
pub fn text_json(entry: &Value) -> Value {
    serde_json::from_str(entry["text"].as_str().unwrap()).unwrap()
}
