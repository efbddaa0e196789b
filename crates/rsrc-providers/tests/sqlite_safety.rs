//! The SQLite provider's safety and limits, on real database files through the engine,
//! in raw JSON (every server message schema-validated): injection attempts in every URI
//! part, values that cannot be keys, read-only access, the row size limit, the time
//! limit, a locked database and a file that cannot be opened.
#![cfg(feature = "sqlite")]

mod common;
#[path = "common/sqlite.rs"]
mod db;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
use serde_json::json;

use common::{is_not_found, read, walk};
use db::{contents, create_db, serve, serve_with, shop, text_json, writer};

#[tokio::test]
async fn a_non_integer_segment_for_an_integer_key_is_a_missing_row() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut peer) = serve(&shop(dir.path())).await;
    for uri in [
        "db://shop/authors/abc",
        "db://shop/authors/1.0",
        "db://shop/authors/01",
        "db://shop/authors/%2B1",
        "db://shop/authors/%201",
        "db://shop/authors/99999999999999999999",
        "db://shop/log/one",
        "db://shop/authors/4",
    ] {
        let resp = read(&mut peer, uri).await;
        assert!(is_not_found(&resp, uri), "{uri}: {resp}");
        let meta = peer
            .request("resources/metadata", json!({"uri": uri}))
            .await;
        assert!(is_not_found(&meta, uri), "{uri}: {meta}");
    }
}

fn file_state(path: &std::path::Path) -> (Vec<u8>, std::time::SystemTime) {
    let bytes = std::fs::read(path).unwrap();
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    (bytes, modified)
}

#[tokio::test]
async fn injection_attempts_in_every_uri_part_are_missing_resources_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let before = file_state(&path);
    let (_server, mut peer) = serve(&path).await;
    let attacks = [
        "users%22%3B%20DROP%20TABLE%20x%3B--",
        "x%22%3B%20DROP%20TABLE%20x%3B--",
        "x'%3B%20DELETE%20FROM%20x%3B--",
        "x%22%20OR%201%3D1%20--",
        "1%20OR%201%3D1",
        "1)%20OR%20(1%3D1",
        "%00",
        "x%00",
        "..",
        "%2E%2E",
        "..%2F..%2Fetc%2Fpasswd",
        "authors%2F1",
        "sqlite_schema",
        "sqlite_master",
        "main.x",
        "%22x%22",
        "*",
        "%25",
        "%24schema",
    ];
    let mut uris = Vec::new();
    for a in attacks {
        uris.push(format!("db://{a}"));
        uris.push(format!("db://{a}/x"));
        uris.push(format!("db://shop/{a}"));
        uris.push(format!("db://shop/{a}/1"));
        uris.push(format!("db://shop/{a}/$schema"));
        uris.push(format!("db://shop/x/{a}"));
        uris.push(format!("db://shop/tags/1,{a}"));
        uris.push(format!("db://shop/tags/{a},sf"));
        uris.push(format!("db://shop/x/$schema{a}"));
        uris.push(format!("db://shop/x/1/{a}"));
    }
    uris.push("db://shop/x/$SCHEMA".into());
    uris.push("db://shop//1".into());
    uris.push("db://shop/x/".into());
    for uri in &uris {
        // `%24schema` as a key of x (an integer key) is a missing row too.
        for method in ["resources/read", "resources/metadata", "resources/list"] {
            let resp = peer.request(method, json!({"uri": uri})).await;
            assert!(is_not_found(&resp, uri), "{method} {uri}: {resp}");
        }
        let sub = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert!(is_not_found(&sub, uri), "subscribe {uri}: {sub}");
    }
    // The victim is still there, and so is every byte of the file.
    let x = read(&mut peer, "db://shop/x/1").await;
    assert_eq!(text_json(&contents(&x)[0]), json!({"id": 1}));
    drop(peer);
    assert!(
        before == file_state(&path),
        "the database file is unchanged"
    );
}

#[tokio::test]
async fn the_database_is_opened_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let before = file_state(&path);
    let (_server, mut peer) = serve(&path).await;
    for uri in [
        "db://shop",
        "db://shop/books",
        "db://shop/books/1",
        "db://shop/cheap_books/1",
    ] {
        read(&mut peer, uri).await;
    }
    walk(&mut peer, json!({})).await;
    drop(peer);
    assert!(before == file_state(&path));
    let names: HashSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        HashSet::from(["shop.db".to_owned()]),
        "no journal, no WAL"
    );
    // A database the process may not write is served all the same.
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
    std::fs::set_permissions(&path, perms).unwrap();
    let (_server, mut peer) = serve(&path).await;
    let resp = read(&mut peer, "db://shop/authors/1").await;
    assert_eq!(text_json(&contents(&resp)[0])["name"], "Ursula");
}

#[tokio::test]
async fn rows_over_the_size_limit_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = create_db(
        dir.path(),
        "blobs.db",
        "CREATE TABLE b (id INTEGER PRIMARY KEY, data BLOB);
         INSERT INTO b VALUES (1, zeroblob(100)), (2, zeroblob(5000)), (3, zeroblob(600));",
    );
    let config = SqliteConfig {
        max_row_bytes: 1000,
        ..SqliteConfig::default()
    };
    let (_server, mut peer) = serve_with(&path, config, 1000).await;
    assert_eq!(contents(&read(&mut peer, "db://blobs/b/1").await).len(), 2);
    let big = read(&mut peer, "db://blobs/b/2").await;
    assert_eq!(big["error"]["code"], -32602, "{big}");
    let message = big["error"]["message"].as_str().unwrap();
    assert!(message.contains("read limit of 1000 bytes"), "{message}");
    // The table still reads, without the big row.
    let table = read(&mut peer, "db://blobs/b").await;
    let uris: Vec<&str> = contents(&table)
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["db://blobs/b/$schema", "db://blobs/b/1", "db://blobs/b/3"]
    );
}

#[tokio::test]
async fn a_pathological_view_is_stopped_by_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = create_db(
        dir.path(),
        "slow.db",
        "CREATE VIEW forever AS
           WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
           SELECT x FROM c WHERE x < 0;",
    );
    let config = SqliteConfig {
        statement_timeout: Duration::from_millis(200),
        ..SqliteConfig::default()
    };
    let (_server, mut peer) = serve_with(&path, config, 1000).await;
    let started = Instant::now();
    let resp = read(&mut peer, "db://slow/forever/1").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(resp["error"]["code"], -32603, "{resp}");
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(message.contains("time limit of 200 ms"), "{message}");
    // The server is still there.
    let ok = peer
        .request("resources/metadata", json!({"uri": "db://slow/forever"}))
        .await;
    assert_eq!(ok["result"]["resource"]["resourceType"], "collection");
}

#[tokio::test]
async fn a_database_locked_by_a_writer_answers_that_it_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let config = SqliteConfig {
        busy_timeout: Duration::from_millis(100),
        ..SqliteConfig::default()
    };
    let (_server, mut peer) = serve_with(&path, config, 1000).await;
    let w = writer(&path);
    w.execute_batch("BEGIN EXCLUSIVE; UPDATE x SET id = 2 WHERE id = 1;")
        .unwrap();
    let resp = read(&mut peer, "db://shop/x/1").await;
    assert_eq!(resp["error"]["code"], -32603, "{resp}");
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(message.contains("locked"), "{message}");
    assert_eq!(resp["error"]["data"]["uri"], "db://shop/x/1");
    w.execute_batch("ROLLBACK").unwrap();
    let resp = read(&mut peer, "db://shop/x/1").await;
    assert_eq!(contents(&resp).len(), 2);
}

#[test]
fn a_file_that_cannot_be_opened_is_a_clear_error_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.db");
    let err = SqliteProvider::open(&missing, SqliteConfig::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("nope.db") && text.contains("cannot open"),
        "{text}"
    );
    let not_db = dir.path().join("notes.db");
    std::fs::write(
        &not_db,
        "just some text, long enough to have a header page....",
    )
    .unwrap();
    let err = SqliteProvider::open(&not_db, SqliteConfig::default()).unwrap_err();
    assert!(err.to_string().contains("not a database"), "{err}");
    let a = shop(dir.path());
    let err = SqliteProvider::new(
        vec![SqliteSource::file(&a), SqliteSource::named_file("shop", &a)],
        SqliteConfig::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("duplicate"), "{err}");
}
