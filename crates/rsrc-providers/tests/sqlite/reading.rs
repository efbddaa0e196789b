//! Reading rows, schema documents and collections: JSON and CSV, blobs, keys of every
//! kind, views by position, budgets, and unusual or internal tables.
//!
//! Invariant: a URI reads exactly the row it names, and collections return whole documents.

use super::*;

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
