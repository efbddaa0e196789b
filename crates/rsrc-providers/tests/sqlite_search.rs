//! The SQLite provider answers `search_resources` (the tools bridge) itself: databases,
//! tables and views by name, and rows by key, in key order across pages and across calls
//! that each examine a bounded number of rows.
#![cfg(feature = "sqlite")]

mod common;
#[path = "common/sqlite.rs"]
mod db;

use rsrc::protocol::ProtocolVersion;
use rsrc::{Server, ToolsConfig};
use rsrc_providers::db::PREFIX;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};

use common::search_all;
use db::create_db;

/// More rows than one search call examines.
const CUSTOMERS: u32 = 60_001;

#[tokio::test]
async fn search_finds_databases_relations_and_rows_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let shop = create_db(
        dir.path(),
        "shop.db",
        &format!(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {CUSTOMERS})
             INSERT INTO customers SELECT i, 'someone' FROM n;
             CREATE TABLE orders (code TEXT PRIMARY KEY, total REAL);
             INSERT INTO orders VALUES ('A-0001', 1), ('B-0007', 2), ('a-0007', 3);
             CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 1;"
        ),
    );
    let crm = create_db(
        dir.path(),
        "crm.db",
        "CREATE TABLE contacts (email TEXT PRIMARY KEY);
         INSERT INTO contacts VALUES ('ada@example.com'), ('bob@example.com');",
    );
    let provider = SqliteProvider::new(
        vec![SqliteSource::file(&shop), SqliteSource::file(&crm)],
        SqliteConfig {
            watch: false,
            ..SqliteConfig::default()
        },
    )
    .unwrap();
    let server = Server::builder("sqlite-search", "0")
        .mount(PREFIX, provider)
        .tools(ToolsConfig {
            page: 50,
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = common::peer_for(&server).await;
    peer.speak(ProtocolVersion::V2025_11_25);

    // Rows by key, in key order, over many pages.
    let expected: Vec<String> = (1..=CUSTOMERS)
        .filter(|i| i.to_string().contains("4242"))
        .map(|i| format!("db://shop/customers/{i}"))
        .collect();
    assert_eq!(search_all(&mut peer, "customers 4242").await, expected);
    // The last row lies beyond what one call examines: the search goes on to it.
    assert_eq!(
        search_all(&mut peer, "customers 60001").await,
        ["db://shop/customers/60001"]
    );
    // Any case; a relation by its name, with its rows; never a view's positions.
    assert_eq!(
        search_all(&mut peer, "orders 0007").await,
        ["db://shop/orders/B-0007", "db://shop/orders/a-0007"]
    );
    assert_eq!(
        search_all(&mut peer, "b-0007").await,
        ["db://shop/orders/B-0007"]
    );
    assert_eq!(
        search_all(&mut peer, "contacts").await,
        [
            "db://crm/contacts",
            "db://crm/contacts/ada%40example.com",
            "db://crm/contacts/bob%40example.com"
        ]
    );
    assert_eq!(
        search_all(&mut peer, "big_orders").await,
        ["db://shop/big_orders"]
    );
    assert_eq!(search_all(&mut peer, "crm").await[0], "db://crm");
    assert!(search_all(&mut peer, "nothing-like-this").await.is_empty());
}
