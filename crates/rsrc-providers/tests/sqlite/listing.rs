//! Listing SQLite databases: the catalog, tables and views as collections, rows in key
//! order, long tables, and pages that go on while rows change.
//!
//! Invariant: every row is listed once, in key order, across pages.

use super::*;

#[tokio::test]
async fn the_default_listing_is_the_catalog_with_schema_documents_and_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(
        uris,
        [
            "db://shop",
            "db://shop/authors",
            "db://shop/authors/$schema",
            "db://shop/books",
            "db://shop/books/$schema",
            "db://shop/cheap_books",
            "db://shop/cheap_books/$schema",
            "db://shop/kv",
            "db://shop/kv/$schema",
            "db://shop/log",
            "db://shop/log/$schema",
            "db://shop/tags",
            "db://shop/tags/$schema",
            "db://shop/x",
            "db://shop/x/$schema",
        ]
    );
    // Small pages walk the same sequence.
    let (_server, mut small) =
        serve_with(&dir.path().join("shop.db"), SqliteConfig::default(), 2).await;
    assert_eq!(walk(&mut small, json!({})).await, uris);
}

#[tokio::test]
async fn a_database_lists_its_tables_and_views_as_collections() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = peer
        .request("resources/list", json!({"uri": "db://shop"}))
        .await;
    let list = resp["result"]["resources"].as_array().unwrap();
    let names: Vec<&str> = list.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["authors", "books", "cheap_books", "kv", "log", "tags", "x"]
    );
    for r in list {
        assert_eq!(r["resourceType"], "collection");
        assert_eq!(r["capabilities"]["list"], true);
        assert_eq!(r["mimeType"], "inode/directory");
    }
    let view = &list[2];
    assert!(
        view["description"].as_str().unwrap().starts_with("view"),
        "{view}"
    );
    let log = &list[4];
    assert!(
        log["description"].as_str().unwrap().contains("rowid"),
        "{log}"
    );
    let meta = peer
        .request("resources/metadata", json!({"uri": "db://shop"}))
        .await;
    assert_eq!(meta["result"]["resource"]["resourceType"], "collection");
    assert_eq!(
        meta["result"]["resource"]["description"],
        "SQLite database: 6 tables, 1 view"
    );
}

#[tokio::test]
async fn a_table_lists_its_schema_then_its_rows_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = peer
        .request("resources/list", json!({"uri": "db://shop/authors"}))
        .await;
    let list = resp["result"]["resources"].as_array().unwrap();
    let uris: Vec<&str> = list.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "db://shop/authors/$schema",
            "db://shop/authors/1",
            "db://shop/authors/2",
            "db://shop/authors/3"
        ]
    );
    assert_eq!(list[1]["name"], "1");
    assert_eq!(list[1]["mimeType"], "application/json");
    assert_eq!(list[1]["resourceType"], "document");
    // Pages of one, then two.
    for page in [1, 2] {
        let (_server, mut small) =
            serve_with(&dir.path().join("shop.db"), SqliteConfig::default(), page).await;
        let walked = walk(&mut small, json!({"uri": "db://shop/authors"})).await;
        assert_eq!(walked, uris, "pages of {page}");
    }
    let row = peer
        .request("resources/list", json!({"uri": "db://shop/authors/1"}))
        .await;
    assert_eq!(row["error"]["code"], -32602, "a row is not a collection");
    let missing = peer
        .request("resources/list", json!({"uri": "db://shop/authors/9"}))
        .await;
    assert!(is_not_found(&missing, "db://shop/authors/9"));
}

#[tokio::test]
async fn every_row_of_a_100k_table_is_listed_once_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = create_db(
        dir.path(),
        "big.db",
        "CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
         INSERT INTO big SELECT x * 3 - 100, printf('row %d', x) FROM c;",
    );
    let (_server, mut peer) = serve_with(&path, SqliteConfig::default(), 1000).await;
    let mut params = json!({"uri": "db://big/big"});
    let mut pages = 0;
    let mut rows: Vec<i64> = Vec::with_capacity(100_000);
    loop {
        let resp = peer.request("resources/list", params.clone()).await;
        let result = &resp["result"];
        let page = result["resources"].as_array().unwrap();
        assert!(page.len() <= 1000, "pages hold at most the page size");
        pages += 1;
        for r in page {
            let uri = r["uri"].as_str().unwrap();
            if uri.ends_with("/$schema") {
                continue;
            }
            rows.push(uri.rsplit('/').next().unwrap().parse().unwrap());
        }
        match result.get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => break,
        }
    }
    let expected: Vec<i64> = (1..=100_000).map(|x| x * 3 - 100).collect();
    assert_eq!(rows.len(), 100_000);
    assert!(rows == expected, "each row exactly once, in key order");
    assert_eq!(
        pages, 101,
        "the schema document takes one slot of the first page"
    );
}

#[tokio::test]
async fn pagination_continues_after_the_last_key_while_rows_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = create_db(
        dir.path(),
        "t.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50)
         INSERT INTO t SELECT x * 10 FROM c;",
    );
    let (_server, mut peer) = serve_with(&path, SqliteConfig::default(), 10).await;
    let first = peer
        .request("resources/list", json!({"uri": "db://t/t"}))
        .await;
    let cursor = first["result"]["nextCursor"].clone();
    // Rows before the position come and go; one after it is inserted, one deleted.
    let w = writer(&path);
    w.execute_batch("DELETE FROM t WHERE id = 10; INSERT INTO t VALUES (5), (95); DELETE FROM t WHERE id = 200;")
        .unwrap();
    let rest = walk(&mut peer, json!({"uri": "db://t/t", "cursor": cursor})).await;
    let ids: Vec<i64> = rest
        .iter()
        .map(|u| u.rsplit('/').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids[0], 95, "continues after the last key listed (90)");
    assert!(!ids.contains(&200) && !ids.contains(&5));
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
}
