//! `rsrc serve sqlite:PATH` end to end: the real binary over stdio, spoken to in raw JSON
//! (every message schema-validated): databases beside directories, the embedded sample
//! database, startup errors, change notifications, and the server's memory while it lists
//! a 100,000-row table.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};
use tokio::process::Child;

mod common;
use common::{spawn_stdio, status_kib};

fn create_db(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

fn text_json(resp: &Value, index: usize) -> Value {
    let text = resp["result"]["contents"][index]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {resp}"));
    serde_json::from_str(text).unwrap()
}

fn uris(resp: &Value) -> Vec<String> {
    resp["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("no resources: {resp}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

async fn stop(mut child: Child, mut peer: Peer) {
    peer.close().await;
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits when stdin closes")
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn databases_are_served_beside_directories_under_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let shop = dir.path().join("shop.db");
    create_db(
        &shop,
        "CREATE TABLE items (sku TEXT PRIMARY KEY, price REAL, photo BLOB);
         INSERT INTO items VALUES ('a-1', 2.5, x'0102'), ('b/2', 10.0, NULL);",
    );
    let other = dir.path().join("other.sqlite");
    create_db(&other, "CREATE TABLE t (x); INSERT INTO t VALUES ('row');");
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("notes.md"), "# Notes").unwrap();
    let shop_arg = format!("sqlite:{}", shop.display());
    let other_arg = format!("archive=sqlite:{}", other.display());
    let docs_arg = docs.path().display().to_string();
    let (child, mut peer) = spawn_stdio(&["serve", &shop_arg, &other_arg, &docs_arg]);
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    insta::assert_json_snapshot!("capabilities_with_databases", init["capabilities"]);

    let all = peer.request("resources/list", json!({})).await;
    let listed = uris(&all);
    assert!(
        listed.contains(&"file:///notes.md".to_owned()),
        "{listed:?}"
    );
    for uri in [
        "db://shop",
        "db://shop/items",
        "db://shop/items/$schema",
        "db://archive/t",
    ] {
        assert!(listed.contains(&uri.to_owned()), "{uri} in {listed:?}");
    }
    let rows = peer
        .request("resources/list", json!({"uri": "db://shop/items"}))
        .await;
    assert_eq!(
        uris(&rows),
        [
            "db://shop/items/$schema",
            "db://shop/items/a-1",
            "db://shop/items/b%2F2"
        ]
    );
    let row = peer
        .request("resources/read", json!({"uri": "db://shop/items/b%2F2"}))
        .await;
    // A row: JSON, with CSV as its format alternative.
    insta::assert_json_snapshot!("a_row_read", row["result"]);
    let blob = peer
        .request("resources/read", json!({"uri": "db://shop/items/a-1"}))
        .await;
    assert_eq!(text_json(&blob, 0)["photo"], "AQI=");
    let archived = peer
        .request("resources/read", json!({"uri": "db://archive/t/1"}))
        .await;
    assert_eq!(text_json(&archived, 0), json!({"x": "row"}));
    let missing = peer
        .request(
            "resources/read",
            json!({"uri": "db://shop/items%22%3B%20DROP%20TABLE%20items%3B--/1"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32002);
    let templates = peer.request("resources/templates/list", json!({})).await;
    let names: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"db://{db}/{table}/{pk}"), "{names:?}");
    let completion = peer
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "db://{db}/{table}/{pk}"},
                "argument": {"name": "pk", "value": "b"},
                "context": {"arguments": {"db": "shop", "table": "items"}}
            }),
        )
        .await;
    assert_eq!(completion["result"]["completion"]["values"], json!(["b/2"]));
    peer.speak(ProtocolVersion::V2026_07_28);
    let modern = peer
        .modern("resources/read", json!({"uri": "db://shop/items/zzz"}))
        .await;
    insta::assert_json_snapshot!("a_missing_row_in_2026", modern["error"]);
    stop(child, peer).await;
}

#[tokio::test]
async fn the_embedded_default_serves_the_sample_database_too() {
    let (child, mut peer) = spawn_stdio(&["serve"]);
    peer.initialize(ProtocolVersion::V2025_06_18).await;
    let all = peer.request("resources/list", json!({})).await;
    let listed = uris(&all);
    assert!(listed.contains(&"sample:///README.md".to_owned()));
    assert!(listed.contains(&"db://bookshop".to_owned()), "{listed:?}");
    assert!(listed.contains(&"db://bookshop/books/$schema".to_owned()));
    let tables = peer
        .request("resources/list", json!({"uri": "db://bookshop"}))
        .await;
    assert_eq!(
        uris(&tables),
        [
            "db://bookshop/authors",
            "db://bookshop/books",
            "db://bookshop/books_by_author",
            "db://bookshop/sales",
            "db://bookshop/tags"
        ]
    );
    let book = peer
        .request("resources/read", json!({"uri": "db://bookshop/books/1"}))
        .await;
    assert_eq!(text_json(&book, 0)["title"], "The Dispossessed");
    let tag = peer
        .request(
            "resources/read",
            json!({"uri": "db://bookshop/tags/1,science%20fiction"}),
        )
        .await;
    assert_eq!(
        text_json(&tag, 0),
        json!({"book_id": 1, "tag": "science fiction"})
    );
    let sale = peer
        .request("resources/read", json!({"uri": "db://bookshop/sales/3"}))
        .await;
    assert_eq!(text_json(&sale, 0)["copies"], 3);
    let view = peer
        .request(
            "resources/read",
            json!({"uri": "db://bookshop/books_by_author/1"}),
        )
        .await;
    assert_eq!(text_json(&view, 0)["author"], "Chinua Achebe");
    let author = peer
        .request("resources/read", json!({"uri": "db://bookshop/authors/3"}))
        .await;
    assert_eq!(text_json(&author, 0)["name"], "Wisława Szymborska");
    stop(child, peer).await;
}

#[test]
fn a_database_that_cannot_be_opened_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "plain text, not a database at all, for sure....").unwrap();
    for (arg, says) in [
        (
            "sqlite:/definitely/not/here.db".to_owned(),
            "/definitely/not/here.db",
        ),
        (format!("sqlite:{}", not_db.display()), "not a database"),
        ("sqlite:".to_owned(), "no database file"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
            .args(["serve", &arg])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{arg}: {err}");
        assert!(out.stdout.is_empty(), "nothing but protocol on stdout");
    }
}

#[tokio::test]
async fn a_commit_by_another_program_reaches_a_subscriber() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.db");
    create_db(
        &path,
        "CREATE TABLE counters (name TEXT PRIMARY KEY, n INTEGER);
         INSERT INTO counters VALUES ('visits', 0);",
    );
    let arg = format!("sqlite:{}", path.display());
    let (child, mut peer) = spawn_stdio(&["serve", &arg, "--db-poll", "50ms"]);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let ok = peer
        .request(
            "resources/subscribe",
            json!({"uri": "db://live/counters/visits"}),
        )
        .await;
    assert_eq!(ok["result"], json!({}));
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer
        .execute("UPDATE counters SET n = n + 1 WHERE name = 'visits'", [])
        .unwrap();
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !got
        .iter()
        .any(|m: &Value| m["method"] == "notifications/resources/updated")
    {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match peer.try_recv(left).await {
            Ok(Some(m)) => got.push(m),
            _ => break,
        }
    }
    let updated: Vec<&Value> = got
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .collect();
    assert_eq!(updated.len(), 1, "{got:?}");
    assert_eq!(updated[0]["params"]["uri"], "db://live/counters/visits");
    let read = peer
        .request(
            "resources/read",
            json!({"uri": "db://live/counters/visits"}),
        )
        .await;
    assert_eq!(text_json(&read, 0)["n"], 1);
    stop(child, peer).await;
}

/// A 100,000-row table of ~60 MB is listed through every page; the server's peak memory
/// stays within a bound far below the table's size: pages are read by keyset from the
/// index, never the whole table.
#[tokio::test]
async fn listing_100k_rows_keeps_server_memory_bounded() {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let path = dir.path().join("big.db");
    create_db(
        &path,
        "CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
         INSERT INTO big SELECT x, printf('%d:%.600c', x, 'x') FROM c;",
    );
    assert!(std::fs::metadata(&path).unwrap().len() > 60_000_000);
    let arg = format!("sqlite:{}", path.display());
    let (child, mut peer) = spawn_stdio(&["serve", &arg]);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let pid = child.id().unwrap();
    let first = peer
        .request("resources/list", json!({"uri": "db://big/big"}))
        .await;
    let baseline = status_kib(pid, "VmRSS:");
    let mut seen: Vec<i64> = Vec::with_capacity(100_000);
    let mut page = first;
    let mut pages = 1;
    loop {
        for uri in uris(&page) {
            if let Ok(id) = uri.rsplit('/').next().unwrap().parse() {
                seen.push(id);
            }
        }
        let Some(cursor) = page["result"].get("nextCursor").cloned() else {
            break;
        };
        page = peer
            .request(
                "resources/list",
                json!({"uri": "db://big/big", "cursor": cursor}),
            )
            .await;
        pages += 1;
    }
    assert_eq!(seen.len(), 100_000);
    assert!(
        seen.iter().zip(1..).all(|(&id, n)| id == n),
        "in key order, once each"
    );
    let peak = status_kib(pid, "VmHWM:");
    let growth_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!(
        "server RSS after the first page {baseline} KiB, peak after {pages} pages {peak} KiB"
    );
    assert!(
        growth_mib < 16,
        "peak {peak} KiB, {growth_mib} MiB over the first page's {baseline} KiB"
    );
    stop(child, peer).await;
}
