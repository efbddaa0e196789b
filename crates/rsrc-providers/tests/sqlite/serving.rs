//! The rest of serving a database: completion, changes and subscriptions, in-memory
//! databases, and the 2026 revision.
//!
//! Invariant: every message the server sends validates against the official schema.

use super::*;

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

#[test]
fn a_watching_provider_says_it_does_not_hear_changes_to_resources_not_yet_subscribed() {
    use rsrc::Provider as _;
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    for watch in [true, false] {
        let config = SqliteConfig {
            watch,
            ..SqliteConfig::default()
        };
        let provider = SqliteProvider::new(vec![SqliteSource::file(&path)], config).unwrap();
        // Its watcher digests subscribed rows only (a host acknowledging a subscription
        // before the engine subscribes it must tell the subscriber to look again).
        assert_eq!(provider.hears_every_change(), !watch);
    }
}
