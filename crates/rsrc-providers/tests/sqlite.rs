//! The SQLite provider on real database files, through the engine, in raw JSON (every
//! server message schema-validated): the catalog as collections, rows as JSON and CSV,
//! schema documents, keys of every kind (integer, rowid, composite, text, positions of
//! view rows), a 100,000-row listing page by page, completion and change notifications.
//! Safety and limits are in `sqlite_safety.rs`.
#![cfg(feature = "sqlite")]

mod common;
#[path = "common/sqlite.rs"]
mod db;

use std::time::Duration;

use base64::Engine as _;
use rsrc::protocol::ProtocolVersion;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
use serde_json::{Value, json};

use common::{is_not_found, list_changes, read, updates, walk};
use db::{contents, create_db, peer_for, serve, serve_with, server_for, shop, text_json, writer};

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

#[tokio::test]
async fn a_row_reads_as_json_with_a_csv_alternative_and_full_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = read(&mut peer, "db://shop/books/3").await;
    let entries = contents(&resp);
    assert_eq!(entries.len(), 2, "JSON, then CSV");
    let json_entry = &entries[0];
    assert_eq!(json_entry["uri"], "db://shop/books/3");
    assert_eq!(json_entry["name"], "3");
    assert_eq!(json_entry["mimeType"], "application/json");
    assert_eq!(json_entry["resourceType"], "document");
    let text = json_entry["text"].as_str().unwrap();
    assert_eq!(json_entry["size"], text.len());
    assert_eq!(
        text,
        r#"{"id":3,"author_id":2,"title":"Mr \"Palomar\", with, commas","price":7.0,"cover":""}"#,
        "columns in order, typed"
    );
    let csv = &entries[1];
    assert_eq!(csv["uri"], "db://shop/books/3");
    assert_eq!(csv["mimeType"], "text/csv");
    assert_eq!(
        csv["text"],
        "id,author_id,title,price,cover\r\n3,2,\"Mr \"\"Palomar\"\", with, commas\",7.0,\r\n"
    );
    assert_eq!(csv["size"], csv["text"].as_str().unwrap().len());
    let meta = peer
        .request("resources/metadata", json!({"uri": "db://shop/books/3"}))
        .await;
    let r = &meta["result"]["resource"];
    assert_eq!(r["size"], text.len());
    assert_eq!(r["mimeType"], "application/json");
    assert_eq!(r["resourceType"], "document");
    let nulls = text_json(&contents(&read(&mut peer, "db://shop/books/2").await)[0]);
    assert_eq!(nulls["cover"], Value::Null);
    assert_eq!(nulls["price"], 12.25);
}

#[tokio::test]
async fn blobs_are_base64_and_text_that_is_not_utf8_keeps_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let one = text_json(&contents(&read(&mut peer, "db://shop/books/1").await)[0]);
    let cover = base64::engine::general_purpose::STANDARD
        .decode(one["cover"].as_str().unwrap())
        .unwrap();
    assert_eq!(cover, [0x00, 0xff, 0x10]);
    let four = text_json(&contents(&read(&mut peer, "db://shop/books/4").await)[0]);
    let title = base64::engine::general_purpose::STANDARD
        .decode(four["title"]["base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(title, [0xff, 0x41, 0xfe]);
}

#[tokio::test]
async fn the_schema_document_describes_columns_key_and_definition() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = read(&mut peer, "db://shop/tags/$schema").await;
    let entry = &contents(&resp)[0];
    assert_eq!(entry["uri"], "db://shop/tags/$schema");
    assert_eq!(entry["mimeType"], "application/json");
    assert_eq!(entry["resourceType"], "document");
    assert_eq!(entry["size"], entry["text"].as_str().unwrap().len());
    let schema = text_json(entry);
    assert_eq!(schema["name"], "tags");
    assert_eq!(schema["type"], "table");
    assert_eq!(
        schema["key"],
        json!({"kind": "primaryKey", "columns": ["book_id", "tag"]})
    );
    assert_eq!(schema["withoutRowid"], true);
    assert_eq!(schema["columns"][1]["name"], "tag");
    assert_eq!(schema["columns"][1]["type"], "TEXT");
    assert_eq!(schema["columns"][1]["primaryKey"], 2);
    assert!(
        schema["definition"]
            .as_str()
            .unwrap()
            .starts_with("CREATE TABLE tags")
    );
    assert_eq!(schema["rowUriTemplate"], "db://shop/tags/{pk}");
    let log = text_json(&contents(&read(&mut peer, "db://shop/log/$schema").await)[0]);
    assert_eq!(log["key"], json!({"kind": "rowid", "column": "rowid"}));
    let view = text_json(&contents(&read(&mut peer, "db://shop/cheap_books/$schema").await)[0]);
    assert_eq!(view["type"], "view");
    assert_eq!(view["key"], json!({"kind": "position"}));
    // The text "$schema" as a key is a row, encoded as RFC 6570 would.
    let row = read(&mut peer, "db://shop/kv/%24schema").await;
    assert_eq!(text_json(&contents(&row)[0])["v"], 1);
}

#[tokio::test]
async fn a_table_without_a_primary_key_is_keyed_by_rowid() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let rows = walk(&mut peer, json!({"uri": "db://shop/log"})).await;
    assert_eq!(
        rows,
        [
            "db://shop/log/$schema",
            "db://shop/log/1",
            "db://shop/log/2",
            "db://shop/log/3"
        ]
    );
    let two = text_json(&contents(&read(&mut peer, "db://shop/log/2").await)[0]);
    assert_eq!(two, json!({"at": "09:05", "message": "sold 1"}));
}

#[tokio::test]
async fn composite_keys_are_values_joined_by_commas_each_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let rows = walk(&mut peer, json!({"uri": "db://shop/tags"})).await;
    assert_eq!(
        rows,
        [
            "db://shop/tags/$schema",
            "db://shop/tags/1,anarchy",
            "db://shop/tags/1,sf",
            "db://shop/tags/2,a%2Cb",
            "db://shop/tags/2,cities",
            "db://shop/tags/3,%24schema"
        ]
    );
    for uri in &rows[1..] {
        let resp = read(&mut peer, uri).await;
        assert_eq!(contents(&resp)[0]["uri"], *uri);
    }
    let ab = text_json(&contents(&read(&mut peer, "db://shop/tags/2,a%2Cb").await)[0]);
    assert_eq!(ab, json!({"book_id": 2, "tag": "a,b"}));
    // A template expansion of the string "1,sf" encodes the comma: accepted too.
    let expanded = read(&mut peer, "db://shop/tags/1%2Csf").await;
    assert_eq!(text_json(&contents(&expanded)[0])["tag"], "sf");
    for missing in [
        "db://shop/tags/1",
        "db://shop/tags/1,sf,x",
        "db://shop/tags/2,a,b",
    ] {
        assert!(
            is_not_found(&read(&mut peer, missing).await, missing),
            "{missing}"
        );
    }
}

#[tokio::test]
async fn text_keys_round_trip_through_percent_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let rows = walk(&mut peer, json!({"uri": "db://shop/kv"})).await;
    assert_eq!(
        rows,
        [
            "db://shop/kv/$schema",
            "db://shop/kv/%24schema",
            "db://shop/kv/100%25",
            "db://shop/kv/a%2Fb",
            "db://shop/kv/apple",
            "db://shop/kv/banana",
            "db://shop/kv/x%22%3B%20DROP%20TABLE%20x%3B--",
        ]
    );
    for (i, uri) in rows[1..].iter().enumerate() {
        let row = text_json(&contents(&read(&mut peer, uri).await)[0]);
        assert!(row["v"].is_number(), "{uri}: {row} ({i})");
    }
}

#[tokio::test]
async fn view_rows_are_addressed_by_position_in_the_order_of_all_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let rows = walk(&mut peer, json!({"uri": "db://shop/cheap_books"})).await;
    assert_eq!(
        rows,
        [
            "db://shop/cheap_books/$schema",
            "db://shop/cheap_books/1",
            "db://shop/cheap_books/2"
        ]
    );
    let first = text_json(&contents(&read(&mut peer, "db://shop/cheap_books/1").await)[0]);
    assert_eq!(
        first,
        json!({"title": "Mr \"Palomar\", with, commas", "price": 7.0})
    );
    let second = text_json(&contents(&read(&mut peer, "db://shop/cheap_books/2").await)[0]);
    assert_eq!(second["title"], "The Dispossessed");
    for missing in [
        "db://shop/cheap_books/3",
        "db://shop/cheap_books/0",
        "db://shop/cheap_books/-1",
    ] {
        assert!(
            is_not_found(&read(&mut peer, missing).await, missing),
            "{missing}"
        );
    }
    let (_server, mut small) =
        serve_with(&dir.path().join("shop.db"), SqliteConfig::default(), 1).await;
    assert_eq!(
        walk(&mut small, json!({"uri": "db://shop/cheap_books"})).await,
        rows
    );
}

#[tokio::test]
async fn reading_a_collection_returns_whole_child_documents_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = read(&mut peer, "db://shop/authors").await;
    let uris: Vec<&str> = contents(&resp)
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "db://shop/authors/$schema",
            "db://shop/authors/1",
            "db://shop/authors/2",
            "db://shop/authors/3"
        ]
    );
    let db = read(&mut peer, "db://shop").await;
    assert_eq!(contents(&db).len(), 7, "every relation's schema document");
    assert!(
        contents(&db)
            .iter()
            .all(|c| c["uri"].as_str().unwrap().ends_with("/$schema"))
    );
    let tight = SqliteConfig {
        collection_budget: 600,
        ..SqliteConfig::default()
    };
    let (_server, mut small) = serve_with(&dir.path().join("shop.db"), tight, 1000).await;
    let resp = read(&mut small, "db://shop/books").await;
    let total: usize = contents(&resp)
        .iter()
        .map(|c| c["text"].as_str().unwrap().len())
        .sum();
    assert!(total <= 600, "{total}");
    assert!(
        contents(&resp)
            .iter()
            .all(|c| c["size"] == c["text"].as_str().unwrap().len())
    );
}

#[tokio::test]
async fn completion_offers_databases_tables_and_keys_by_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let shop_path = shop(dir.path());
    let nums = create_db(
        dir.path(),
        "nums.db",
        "CREATE TABLE n (id INTEGER PRIMARY KEY);
         WITH RECURSIVE c(x) AS (SELECT -20 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
         INSERT INTO n SELECT x FROM c;
         CREATE TABLE big (id INTEGER PRIMARY KEY);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
         INSERT INTO big SELECT x FROM c;",
    );
    let provider = SqliteProvider::new(
        vec![SqliteSource::file(&shop_path), SqliteSource::file(&nums)],
        SqliteConfig::default(),
    )
    .unwrap();
    let server = server_for(provider, 1000);
    let mut peer = peer_for(&server).await;
    let caps = peer.request("ping", json!({})).await;
    assert!(caps.get("result").is_some());
    let templates = peer.request("resources/templates/list", json!({})).await;
    let list = templates["result"]["resourceTemplates"].as_array().unwrap();
    assert_eq!(list[0]["uriTemplate"], "db://{db}/{table}/{pk}");
    assert_eq!(list[1]["uriTemplate"], "db://{db}/{table}/$schema");
    let template = "db://{db}/{table}/{pk}";
    let mut complete = async |arg: &str, value: &str, context: Value| {
        let resp = peer
            .request(
                "completion/complete",
                json!({
                    "ref": {"type": "ref/resource", "uri": template},
                    "argument": {"name": arg, "value": value},
                    "context": {"arguments": context}
                }),
            )
            .await;
        resp["result"]["completion"].clone()
    };
    assert_eq!(
        complete("db", "", json!({})).await["values"],
        json!(["shop", "nums"])
    );
    assert_eq!(
        complete("db", "n", json!({})).await["values"],
        json!(["nums"])
    );
    assert_eq!(
        complete("table", "b", json!({"db": "shop"})).await["values"],
        json!(["books"])
    );
    assert_eq!(
        complete("table", "c", json!({"db": "shop"})).await["values"],
        json!(["cheap_books"])
    );
    let ninety_nine = complete("pk", "99", json!({"db": "nums", "table": "n"})).await;
    assert_eq!(
        ninety_nine["values"],
        json!([
            "99", "990", "991", "992", "993", "994", "995", "996", "997", "998", "999"
        ])
    );
    assert_eq!(ninety_nine["hasMore"], false);
    let negative = complete("pk", "-1", json!({"db": "nums", "table": "n"})).await;
    assert_eq!(
        negative["values"],
        json!([
            "-1", "-10", "-11", "-12", "-13", "-14", "-15", "-16", "-17", "-18", "-19"
        ])
    );
    let all = complete("pk", "", json!({"db": "nums", "table": "big"})).await;
    assert_eq!(all["values"].as_array().unwrap().len(), 100);
    assert_eq!(all["values"][0], "1");
    assert_eq!(all["hasMore"], true);
    assert_eq!(
        complete("pk", "a", json!({"db": "shop", "table": "kv"})).await["values"],
        json!(["a/b", "apple"])
    );
    assert_eq!(
        complete("pk", "2", json!({"db": "shop", "table": "tags"})).await["values"],
        json!(["2,cities"]),
        "a composite key holding a comma has no string form"
    );
    assert_eq!(
        complete("pk", "", json!({"db": "shop", "table": "cheap_books"})).await["values"],
        json!(["1", "2"])
    );
    assert_eq!(
        complete("pk", "1", json!({"db": "shop", "table": "nope\"; --"})).await["values"],
        json!([])
    );
}

#[tokio::test]
async fn a_commit_by_another_connection_updates_changed_subscriptions_and_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let config = SqliteConfig {
        poll_interval: Duration::from_millis(50),
        ..SqliteConfig::default()
    };
    let (_server, mut peer) = serve_with(&path, config, 1000).await;
    for uri in [
        "db://shop/authors/1",
        "db://shop/authors/2",
        "db://shop/authors",
        "db://shop/books",
        "db://shop/authors/$schema",
        "db://shop",
    ] {
        let ok = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(ok["result"], json!({}), "{uri}");
    }
    let w = writer(&path);
    w.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    w.execute("UPDATE authors SET name = 'Ursula K.' WHERE id = 1", [])
        .unwrap();
    let got = peer.drain(Duration::from_millis(600)).await;
    assert_eq!(
        updates(&got),
        ["db://shop/authors", "db://shop/authors/1"],
        "only what changed: {got:?}"
    );
    assert_eq!(list_changes(&got), 1);
    // A deleted row is an update too; a new table changes the database.
    w.execute_batch(
        "DELETE FROM authors WHERE id = 2; CREATE TABLE extra (id INTEGER PRIMARY KEY);",
    )
    .unwrap();
    let got = peer.drain(Duration::from_millis(600)).await;
    assert_eq!(
        updates(&got),
        ["db://shop", "db://shop/authors", "db://shop/authors/2"],
        "{got:?}"
    );
    // The new table is served at once.
    let extra = peer
        .request("resources/metadata", json!({"uri": "db://shop/extra"}))
        .await;
    assert_eq!(extra["result"]["resource"]["resourceType"], "collection");
    // Nothing changes, nothing is said.
    let got = peer.drain(Duration::from_millis(300)).await;
    assert!(got.is_empty(), "{got:?}");
}

#[tokio::test]
async fn subscribing_to_a_missing_row_is_refused_like_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    let resp = peer
        .request("resources/subscribe", json!({"uri": "db://shop/authors/7"}))
        .await;
    assert!(is_not_found(&resp, "db://shop/authors/7"));
}

#[tokio::test]
async fn a_database_built_from_a_script_lives_in_memory() {
    let provider = SqliteProvider::new(
        vec![SqliteSource::script(
            "mem",
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');",
        )],
        SqliteConfig::default(),
    )
    .unwrap();
    let server = server_for(provider, 1000);
    let mut peer = peer_for(&server).await;
    let resp = read(&mut peer, "db://mem/t/1").await;
    assert_eq!(text_json(&contents(&resp)[0]), json!({"id": 1, "v": "one"}));
}

#[tokio::test]
async fn the_2026_revision_gets_its_own_not_found_and_every_message_validates() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    peer.speak(ProtocolVersion::V2026_07_28);
    let ok = peer
        .modern("resources/read", json!({"uri": "db://shop/tags/2,a%2Cb"}))
        .await;
    assert_eq!(ok["result"]["resultType"], "complete");
    assert_eq!(contents(&ok).len(), 2);
    let missing = peer
        .modern("resources/read", json!({"uri": "db://shop/tags/9,z"}))
        .await;
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(missing["error"]["data"]["uri"], "db://shop/tags/9,z");
    let listed = peer
        .modern("resources/list", json!({"uri": "db://shop/books"}))
        .await;
    assert_eq!(listed["result"]["resources"].as_array().unwrap().len(), 5);
    let meta = peer
        .modern(
            "resources/metadata",
            json!({"uri": "db://shop/books/$schema"}),
        )
        .await;
    assert_eq!(meta["result"]["resource"]["mimeType"], "application/json");
}

#[tokio::test]
async fn unusual_tables_are_served_and_internal_ones_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = create_db(
        dir.path(),
        "odd.db",
        r#"
        CREATE TABLE "odd ""name"", with/slash" (id INTEGER PRIMARY KEY, v TEXT);
        INSERT INTO "odd ""name"", with/slash" VALUES (1, 'found');
        CREATE TABLE shadowed (rowid TEXT, _rowid_ TEXT, oid TEXT);
        INSERT INTO shadowed VALUES ('a', 'b', 'c');
        CREATE TABLE s (id INTEGER PRIMARY KEY, n INT, twice INT GENERATED ALWAYS AS (n * 2)) STRICT;
        INSERT INTO s (id, n) VALUES (7, 21);
        CREATE TABLE untyped (k PRIMARY KEY, v);
        INSERT INTO untyped VALUES (42, 'int'), ('42x', 'text'), (x'00ff', 'blob'), (1.5, 'real');
        CREATE VIRTUAL TABLE docs USING fts5(body);
        INSERT INTO docs VALUES ('hello world');
        CREATE TABLE seq (id INTEGER PRIMARY KEY AUTOINCREMENT);
        "#,
    );
    let (_server, mut peer) = serve(&path).await;
    let tables = peer
        .request("resources/list", json!({"uri": "db://odd"}))
        .await;
    let names: Vec<&str> = tables["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "docs",
            "odd \"name\", with/slash",
            "s",
            "seq",
            "shadowed",
            "untyped"
        ],
        "no sqlite_sequence, no FTS shadow tables"
    );
    let odd = walk(
        &mut peer,
        json!({"uri": "db://odd/odd%20%22name%22%2C%20with%2Fslash"}),
    )
    .await;
    assert_eq!(odd[1], "db://odd/odd%20%22name%22%2C%20with%2Fslash/1");
    let row = read(&mut peer, &odd[1]).await;
    assert_eq!(text_json(&contents(&row)[0])["v"], "found");
    // All three rowid names are columns: rows go by position.
    let shadowed = text_json(&contents(&read(&mut peer, "db://odd/shadowed/$schema").await)[0]);
    assert_eq!(shadowed["key"]["kind"], "position");
    let first = text_json(&contents(&read(&mut peer, "db://odd/shadowed/1").await)[0]);
    assert_eq!(first, json!({"rowid": "a", "_rowid_": "b", "oid": "c"}));
    let strict = read(&mut peer, "db://odd/s/7").await;
    assert_eq!(
        text_json(&contents(&strict)[0]),
        json!({"id": 7, "n": 21, "twice": 42})
    );
    let schema = text_json(&contents(&read(&mut peer, "db://odd/s/$schema").await)[0]);
    assert_eq!(schema["strict"], true);
    assert_eq!(schema["columns"][2]["generated"], true);
    let fts = read(&mut peer, "db://odd/docs/1").await;
    assert_eq!(
        text_json(&contents(&fts)[0]),
        json!({"body": "hello world"})
    );
    // An untyped key holds values of every class; each listed URI reads its own row.
    let keys = walk(&mut peer, json!({"uri": "db://odd/untyped"})).await;
    assert_eq!(
        keys,
        [
            "db://odd/untyped/$schema",
            "db://odd/untyped/1.5",
            "db://odd/untyped/42",
            "db://odd/untyped/42x",
            "db://odd/untyped/%00%FF"
        ]
    );
    for (uri, v) in keys[1..].iter().zip(["real", "int", "text", "blob"]) {
        let row = text_json(&contents(&read(&mut peer, uri).await)[0]);
        assert_eq!(row["v"], v, "{uri}");
    }
}
