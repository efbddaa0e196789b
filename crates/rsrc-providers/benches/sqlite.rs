//! The SQLite provider through the engine, in process: `resources/read` of single rows
//! (one at a time, and 64 in flight), and a full keyset listing of a 100,000-row table,
//! each request decoded, dispatched, served and its reply encoded as on a connection.
//!
//! Run: `cargo bench -p rsrc-providers --features sqlite --bench sqlite`.

mod common;

use common::ROWS;
use criterion::{Criterion, criterion_group, criterion_main};
use rsrc::{Server, ServerConfig};
use rsrc_providers::db::PREFIX;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider};

fn database(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("bench.db");
    let conn = rusqlite::Connection::open(&path).expect("create the database");
    conn.execute_batch(&format!(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL,
                             stock INTEGER, note TEXT);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {ROWS})
         INSERT INTO items
         SELECT x, 'item ' || x, x * 0.25, x % 97,
                printf('a \"note\" for item %d, with some text to make it ~100 bytes long', x)
         FROM c;"
    ))
    .expect("fill the database");
    path
}

fn server(path: &std::path::Path) -> Server {
    let config = SqliteConfig {
        watch: false,
        ..SqliteConfig::default()
    };
    Server::builder("bench", "0")
        .mount(PREFIX, SqliteProvider::open(path, config).expect("open"))
        .config(ServerConfig {
            page_size: 1000,
            ..ServerConfig::default()
        })
        .build()
        .expect("build")
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(&database(dir.path()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    common::measure(c, "sqlite", &rt, &server, "db://bench/items");
}

criterion_group!(benches, bench);
criterion_main!(benches);
