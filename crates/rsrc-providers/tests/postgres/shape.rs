//! What a PostgreSQL database looks like as resources: schemas, relations and rows,
//! keys of every kind, long listings, completion, changes, and start-up failures.
//!
//! Invariant: every row is listed once in key order, and reads what its URI names.

use super::*;

#[tokio::test]
async fn schemas_relations_and_rows_are_collections_and_documents() {
    let Some(db) = database(SHOP).await else {
        return;
    };
    let (_server, client) = serve(&db, PostgresConfig::default(), EraPreference::Auto).await;
    assert_eq!(names(&client, "db://shop").await, ["app", "public"]);
    assert_eq!(
        names(&client, "db://shop/app").await,
        ["big_spenders", "log", "names", "orders", "tokens"]
    );
    assert_eq!(
        names(&client, "db://shop/public/users").await,
        ["$schema", "1", "2", "3"]
    );
    let users = client.metadata("db://shop/public/users").await.unwrap();
    assert!(users.is_collection());
    assert_eq!(users.mime_type.as_deref(), Some("inode/directory"));
    // The default listing is the catalog, not the rows.
    let all = client.list_all_resources(None, 100).await.unwrap().items;
    let uris: Vec<&str> = all.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"db://shop"));
    assert!(uris.contains(&"db://shop/app/orders/$schema"));
    assert!(!uris.iter().any(|u| u.ends_with("/users/1")));

    let read = client.read("db://shop/public/users/1").await.unwrap();
    assert_eq!(read.contents.len(), 2);
    let json: serde_json::Value = serde_json::from_str(text(&read.contents[0].body)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"id": 1, "name": "Ada", "score": 1.5, "active": true,
            "meta": {"langs": ["en", "fr"]}, "avatar": "AP8Q", "balance": "12.50",
            "joined": "2026-01-02 03:04:05+00"})
    );
    assert_eq!(
        read.contents[0].resource.mime_type.as_deref(),
        Some("application/json")
    );
    assert_eq!(
        read.contents[0].resource.size,
        Some(text(&read.contents[0].body).len() as u64)
    );
    assert_eq!(
        read.contents[1].resource.mime_type.as_deref(),
        Some("text/csv")
    );
    assert!(text(&read.contents[1].body).starts_with("id,name,score,active,meta,avatar"));
    let bob = client.read("db://shop/public/users/2").await.unwrap();
    let json: serde_json::Value = serde_json::from_str(text(&bob.contents[0].body)).unwrap();
    assert_eq!(json["name"], "Bob \"the builder\", Jr.");
    assert_eq!(json["meta"], serde_json::Value::Null);
    assert!(text(&bob.contents[1].body).contains("\"Bob \"\"the builder\"\", Jr.\""));
    let zoe = client.read("db://shop/public/users/3").await.unwrap();
    let json: serde_json::Value = serde_json::from_str(text(&zoe.contents[0].body)).unwrap();
    assert_eq!(json["name"], "Zoë 🦀");
    assert_eq!(
        json["score"],
        serde_json::Value::Null,
        "infinity is not JSON"
    );
    assert_eq!(json["avatar"], "");

    let schema = client.read("db://shop/app/orders/$schema").await.unwrap();
    let schema: serde_json::Value = serde_json::from_str(text(&schema.contents[0].body)).unwrap();
    assert_eq!(schema["type"], "table");
    assert_eq!(schema["columns"][0]["name"], "user_id");
    let read = client
        .read("db://shop/app/big_spenders/$schema")
        .await
        .unwrap();
    assert!(text(&read.contents[0].body).contains("SELECT"));
}

#[tokio::test]
async fn composite_keys_ctid_tables_views_and_typed_keys() {
    let Some(db) = database(SHOP).await else {
        return;
    };
    let (_server, client) = serve(&db, PostgresConfig::default(), EraPreference::Auto).await;
    assert_eq!(
        names(&client, "db://shop/app/orders").await,
        ["$schema", "1,1", "1,2", "2,1"]
    );
    let row = client.read("db://shop/app/orders/1,2").await.unwrap();
    assert!(text(&row.contents[0].body).contains("pen, blue"));
    // A table without a primary key: rows by ctid.
    let log = client
        .list_all_resources(Some("db://shop/app/log"), 10)
        .await
        .unwrap()
        .items;
    assert_eq!(log.len(), 3);
    let first = client.read(&log[1].uri).await.unwrap();
    assert!(
        text(&first.contents[0].body).contains("first"),
        "{}",
        log[1].uri
    );
    // Views and materialized views: by position in the sorted rows.
    assert_eq!(
        names(&client, "db://shop/app/big_spenders").await,
        ["$schema", "1", "2"]
    );
    // Sorted by the row's text: `("Bob …",1)` before `(Ada,2)`.
    let v = client.read("db://shop/app/big_spenders/2").await.unwrap();
    let json: serde_json::Value = serde_json::from_str(text(&v.contents[0].body)).unwrap();
    assert_eq!(json, serde_json::json!({"name": "Ada", "orders": 2}));
    let m = client.read("db://shop/app/names/2").await.unwrap();
    assert!(text(&m.contents[0].body).contains("Zo"));
    // Keys in the column's type: a uuid, and values the type cannot hold.
    let t = client
        .read("db://shop/app/tokens/6f1c2a0e-8a55-4bd4-9a43-3c7f9a0b1d22")
        .await
        .unwrap();
    assert!(text(&t.contents[0].body).contains("only"));
    for missing in [
        "db://shop/app/tokens/not-a-uuid",
        "db://shop/public/users/01",
        "db://shop/public/users/1.0",
        "db://shop/public/users/99999999999999999999",
        "db://shop/app/orders/1",
        "db://shop/app/big_spenders/0",
        "db://shop/app/big_spenders/3",
    ] {
        let e = client.read(missing).await.unwrap_err();
        assert_eq!(e.rpc().map(|e| e.code.0), Some(-32602), "{missing}: {e}");
    }
}

#[tokio::test]
async fn a_hundred_thousand_rows_list_page_by_page_in_key_order() {
    let Some(db) = database(
        "CREATE TABLE big (id int8 PRIMARY KEY, v text);
         INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, 100000) g;",
    )
    .await
    else {
        return;
    };
    let (_server, client) = serve(&db, PostgresConfig::default(), EraPreference::Auto).await;
    let mut stream = std::pin::pin!(client.resources(Some("db://shop/public/big".into()), 1000));
    let mut expected = 1i64;
    let mut first = true;
    while let Some(r) = stream.next().await {
        let r = r.unwrap();
        if first {
            assert_eq!(r.name, "$schema");
            first = false;
            continue;
        }
        assert_eq!(r.uri, format!("db://shop/public/big/{expected}"));
        expected += 1;
    }
    assert_eq!(expected, 100_001, "every row exactly once, in order");
    let page = client
        .list_resources(None, Some("db://shop/public/big".into()))
        .await
        .unwrap();
    assert!(page.resources.len() <= 1000);
    assert!(page.next_cursor.is_some());
}

#[tokio::test]
async fn completion_of_schemas_tables_and_keys() {
    let Some(db) = database(SHOP).await else {
        return;
    };
    let (_server, client) = serve(&db, PostgresConfig::default(), EraPreference::Auto).await;
    let template = "db://shop/{schema}/{table}/{pk}";
    let c = client
        .complete(template, "schema", "a", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(c.values, ["app"]);
    let ctx = BTreeMap::from([("schema".to_owned(), "app".to_owned())]);
    let c = client.complete(template, "table", "", ctx).await.unwrap();
    assert_eq!(
        c.values,
        ["big_spenders", "log", "names", "orders", "tokens"]
    );
    let ctx = BTreeMap::from([
        ("schema".to_owned(), "public".to_owned()),
        ("table".to_owned(), "users".to_owned()),
    ]);
    let c = client
        .complete(template, "pk", "", ctx.clone())
        .await
        .unwrap();
    assert_eq!(c.values, ["1", "2", "3"]);
    let c = client.complete(template, "pk", "%", ctx).await.unwrap();
    assert!(c.values.is_empty(), "LIKE wildcards are escaped");
    let templates = client.list_all_templates(10).await.unwrap().items;
    assert!(templates.iter().any(|t| t.uri_template == template));
}

#[tokio::test]
async fn a_committed_change_updates_subscribers_in_both_eras() {
    for era in [
        EraPreference::Legacy(ProtocolVersion::V2025_11_25),
        EraPreference::Modern,
    ] {
        let Some(db) = database(SHOP).await else {
            return;
        };
        let config = PostgresConfig {
            poll_interval: Duration::from_millis(50),
            ..PostgresConfig::default()
        };
        let (_server, client) = serve(&db, config, era).await;
        let uris = vec![
            "db://shop/public/users/2".to_owned(),
            "db://shop/public/users/3".to_owned(),
        ];
        let mut watch = client.watch(&uris, true).await.unwrap();
        db.exec("UPDATE public.users SET name = 'Robert' WHERE id = 2")
            .await;
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !(seen.contains(&Change::ListChanged)
            && seen.contains(&Change::Updated(uris[0].clone())))
        {
            let change = tokio::time::timeout_at(deadline, watch.next())
                .await
                .expect("notified in time")
                .expect("the watch goes on");
            seen.push(change);
        }
        // The unchanged row is not reported: had it been, with the poll that saw the
        // commit, it would come before what the next commit's poll reports.
        db.exec("UPDATE public.users SET name = 'Bobby' WHERE id = 2")
            .await;
        let probes = seen.len();
        while !seen[probes..].contains(&Change::Updated(uris[0].clone())) {
            let change = tokio::time::timeout_at(deadline, watch.next())
                .await
                .expect("notified in time")
                .expect("the watch goes on");
            seen.push(change);
        }
        assert!(
            !seen.contains(&Change::Updated(uris[1].clone())),
            "{seen:?}"
        );
    }
}

#[tokio::test]
async fn a_bad_connection_string_or_unreachable_server_fails_at_start() {
    let e = PostgresProvider::connect(None, "postgres://", PostgresConfig::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("names no database"), "{e}");
    let config = PostgresConfig {
        connect_timeout: Duration::from_secs(2),
        ..PostgresConfig::default()
    };
    let e = PostgresProvider::connect(None, "postgres://nobody@127.0.0.1:9/x", config)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("cannot read the database's catalog"),
        "{e}"
    );
}
