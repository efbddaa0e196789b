//! The PostgreSQL provider against a real server (`scripts/test` starts one and sets
//! `RSRC_TEST_POSTGRES`). Each test creates its own database, fills it through a
//! separate writing connection, and serves it through the engine. Without a server the
//! tests are skipped with a message, unless `CI` is set: then they fail.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use rsrc::client::{Change, Client, ClientOptions, EraPreference};
use rsrc::protocol::ProtocolVersion;
use rsrc::protocol::resources::Body;
use rsrc::{Server, ToolsConfig};
use rsrc_providers::db::postgres::{PostgresConfig, PostgresProvider};
use serde_json::{Value, json};

/// A fresh database on the test server, dropped at the end.
struct TestDb {
    admin_url: String,
    url: String,
    name: String,
    writer: tokio_postgres::Client,
}

impl TestDb {
    async fn exec(&self, sql: &str) {
        self.writer
            .batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let admin = self.admin_url.clone();
        let name = self.name.clone();
        // Best effort, on a thread of its own: the test's runtime is going away.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let (c, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(conn);
                c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await
                    .ok()
            })
        })
        .join();
    }
}

/// A new database, or `None` (skip) when no server is configured outside CI.
async fn database(setup: &str) -> Option<TestDb> {
    let Ok(admin_url) = std::env::var("RSRC_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs a PostgreSQL server: run the tests through scripts/test"
        );
        eprintln!("skipped: no PostgreSQL server (set RSRC_TEST_POSTGRES, or use scripts/test)");
        return None;
    };
    let (admin, conn) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
        .await
        .expect("the test server answers");
    tokio::spawn(conn);
    let name = format!("rsrc_test_{}_{}", std::process::id(), rand_suffix());
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let base = admin_url
        .rsplit_once('/')
        .map(|(b, _)| b.to_owned())
        .unwrap();
    let url = format!("{base}/{name}");
    let (writer, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let db = TestDb {
        admin_url,
        url,
        name,
        writer,
    };
    db.exec(setup).await;
    Some(db)
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.finish() % 1_000_000_000
}

const SHOP: &str = r#"
CREATE SCHEMA app;
CREATE TABLE public.users (id int PRIMARY KEY, name text NOT NULL, score float8, active bool,
    meta jsonb, avatar bytea, balance numeric(12,2), joined timestamptz);
INSERT INTO public.users VALUES
    (1, 'Ada', 1.5, true, '{"langs": ["en", "fr"]}', '\x00ff10', 12.50, '2026-01-02T03:04:05Z'),
    (2, 'Bob "the builder", Jr.', NULL, false, NULL, NULL, NULL, NULL),
    (3, 'Zoë 🦀', 'Infinity', NULL, '[1,2]', '', -0.01, NULL);
CREATE TABLE app.orders (user_id int, line int, item text, PRIMARY KEY (user_id, line));
INSERT INTO app.orders VALUES (1, 1, 'book'), (1, 2, 'pen, blue'), (2, 1, 'x/y');
CREATE TABLE app.log (msg text);
INSERT INTO app.log VALUES ('first'), ('second');
CREATE TABLE app.tokens (id uuid PRIMARY KEY, label text);
INSERT INTO app.tokens VALUES ('6f1c2a0e-8a55-4bd4-9a43-3c7f9a0b1d22', 'only');
CREATE VIEW app.big_spenders AS SELECT u.name, count(*) AS orders
    FROM public.users u JOIN app.orders o ON o.user_id = u.id GROUP BY u.name;
CREATE MATERIALIZED VIEW app.names AS SELECT name FROM public.users;
"#;

async fn serve(db: &TestDb, config: PostgresConfig, era: EraPreference) -> (Server, Client) {
    let provider = PostgresProvider::connect(Some("shop".into()), &db.url, config)
        .await
        .expect("the provider connects");
    let server = Server::builder("pg-test", "1")
        .mount(provider.prefix().to_owned(), provider)
        .build()
        .unwrap();
    let client = Client::in_memory(
        &server,
        ClientOptions {
            era,
            ..ClientOptions::default()
        },
    )
    .await
    .unwrap();
    (server, client)
}

async fn names(client: &Client, uri: &str) -> Vec<String> {
    client
        .list_all_resources(Some(uri), 100)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|r| r.name)
        .collect()
}

fn text(body: &Body) -> &str {
    match body {
        Body::Text(t) => t.as_str(),
        Body::Blob(_) => panic!("expected text"),
    }
}

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
async fn injection_in_every_uri_part_is_just_a_missing_resource() {
    let Some(db) = database(SHOP).await else {
        return;
    };
    let (_server, client) = serve(&db, PostgresConfig::default(), EraPreference::Auto).await;
    let evil = [
        "users\"; DROP TABLE public.users;--",
        "users%22%3B%20DROP%20TABLE%20public.users%3B--",
        "1 OR 1=1",
        "1%20OR%201%3D1",
        "1'; DROP TABLE public.users;--",
        "..",
        "%2e%2e",
        "%00",
        "a%2Fb",
        "pg_catalog",
    ];
    for bad in evil {
        for uri in [
            format!("db://{bad}"),
            format!("db://shop/{bad}"),
            format!("db://shop/{bad}/users"),
            format!("db://shop/public/{bad}"),
            format!("db://shop/public/{bad}/$schema"),
            format!("db://shop/public/users/{bad}"),
            format!("db://shop/app/orders/1,{bad}"),
            format!("db://shop/app/tokens/{bad}"),
        ] {
            let e = client.read(&uri).await.unwrap_err();
            assert_eq!(e.rpc().map(|e| e.code.0), Some(-32602), "{uri}: {e}");
        }
    }
    // System catalogs are not served.
    assert!(
        client
            .read("db://shop/pg_catalog/pg_class/$schema")
            .await
            .is_err()
    );
    assert!(
        client
            .read("db://shop/information_schema/tables/$schema")
            .await
            .is_err()
    );
    let count = db
        .writer
        .query_one("SELECT count(*) FROM public.users", &[])
        .await
        .unwrap();
    assert_eq!(count.get::<_, i64>(0), 3);
}

#[tokio::test]
async fn every_statement_is_read_only_and_time_limited() {
    let setup = format!(
        "{SHOP}
        CREATE TABLE app.audit (n int);
        CREATE FUNCTION app.sneaky() RETURNS int LANGUAGE sql VOLATILE AS
            'INSERT INTO app.audit VALUES (1) RETURNING 1';
        CREATE VIEW app.writes AS SELECT app.sneaky() AS n;
        CREATE VIEW app.slow AS SELECT 1 AS s FROM pg_sleep(30);"
    );
    let Some(db) = database(&setup).await else {
        return;
    };
    let config = PostgresConfig {
        statement_timeout: Duration::from_millis(500),
        ..PostgresConfig::default()
    };
    let (_server, client) = serve(&db, config, EraPreference::Auto).await;
    let e = client.read("db://shop/app/writes/1").await.unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code.0), Some(-32603), "{e}");
    let audit = db
        .writer
        .query_one("SELECT count(*) FROM app.audit", &[])
        .await
        .unwrap();
    assert_eq!(audit.get::<_, i64>(0), 0, "nothing was written");
    let started = std::time::Instant::now();
    let e = client.read("db://shop/app/slow/1").await.unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code.0), Some(-32603), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the statement was stopped"
    );
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

#[tokio::test]
async fn settings_a_view_changes_do_not_outlive_its_request() {
    // A function reached through a view turns the session writable, lifts the time limit
    // and moves the search path, for the rest of the session: none of it may reach the
    // next request on the pooled connection.
    let setup = format!(
        "{SHOP}
        CREATE TABLE app.audit (n int);
        CREATE FUNCTION app.unlock() RETURNS int LANGUAGE sql VOLATILE AS $$
            SELECT set_config('default_transaction_read_only', 'off', false),
                   set_config('statement_timeout', '0', false),
                   set_config('search_path', 'app', false);
            SELECT 1 $$;
        CREATE VIEW app.unlocker AS SELECT app.unlock() AS n;
        CREATE FUNCTION app.sneaky() RETURNS int LANGUAGE sql VOLATILE AS
            'INSERT INTO app.audit VALUES (1) RETURNING 1';
        CREATE VIEW app.writes AS SELECT app.sneaky() AS n;
        CREATE VIEW app.settings AS SELECT current_setting('default_transaction_read_only') AS ro,
            current_setting('statement_timeout') AS st, current_setting('search_path') AS sp;"
    );
    let Some(db) = database(&setup).await else {
        return;
    };
    let config = PostgresConfig {
        pool_size: 1,
        watch: false,
        statement_timeout: Duration::from_millis(1500),
        ..PostgresConfig::default()
    };
    let default_path: String = db
        .writer
        .query_one("SELECT current_setting('search_path')", &[])
        .await
        .unwrap()
        .get(0);
    let (_server, client) = serve(&db, config, EraPreference::Auto).await;
    client.read("db://shop/app/unlocker/1").await.unwrap();
    let e = client.read("db://shop/app/writes/1").await.unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code.0), Some(-32603), "{e}");
    let audit = db
        .writer
        .query_one("SELECT count(*) FROM app.audit", &[])
        .await
        .unwrap();
    assert_eq!(
        audit.get::<_, i64>(0),
        0,
        "the next request could not write"
    );
    let settings = client.read("db://shop/app/settings/1").await.unwrap();
    let Body::Text(json) = &settings.contents[0].body else {
        panic!("a JSON row");
    };
    let row: serde_json::Value = serde_json::from_str(json.as_str()).unwrap();
    assert_eq!(row["ro"], "on", "{row}");
    assert_eq!(row["st"], "1500ms", "{row}");
    assert_eq!(row["sp"], default_path, "{row}");
}

#[tokio::test]
async fn search_finds_the_catalog_by_name_and_rows_by_key_across_bounded_calls() {
    // More rows than one search call examines (50,000).
    let setup = format!(
        "{SHOP}
        CREATE TABLE public.big (id int8 PRIMARY KEY);
        INSERT INTO public.big SELECT generate_series(1, 60001);"
    );
    let Some(db) = database(&setup).await else {
        return;
    };
    let config = PostgresConfig {
        watch: false,
        ..PostgresConfig::default()
    };
    let provider = PostgresProvider::connect(Some("shop".into()), &db.url, config)
        .await
        .unwrap();
    let server = Server::builder("pg-search", "1")
        .mount(provider.prefix().to_owned(), provider)
        .tools(ToolsConfig {
            page: 50,
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = common::peer_for(&server).await;
    let search = common::search_all;

    // The catalog by name or description: the database, schemas, relations (views too).
    assert_eq!(
        search(&mut peer, "postgresql database").await,
        ["db://shop"]
    );
    assert_eq!(
        search(&mut peer, "schema: 2 relations").await,
        ["db://shop/public"]
    );
    assert_eq!(
        search(&mut peer, "spenders").await,
        ["db://shop/app/big_spenders"]
    );
    assert_eq!(
        search(&mut peer, "app orders").await,
        [
            "db://shop/app/orders",
            "db://shop/app/orders/1,1",
            "db://shop/app/orders/1,2",
            "db://shop/app/orders/2,1"
        ]
    );
    // Rows by key, in key order, over many pages, and past what one call examines.
    let expected: Vec<String> = (1..=60_001)
        .filter(|i: &u32| i.to_string().contains("4242"))
        .map(|i| format!("db://shop/public/big/{i}"))
        .collect();
    assert_eq!(search(&mut peer, "big 4242").await, expected);
    assert_eq!(
        search(&mut peer, "public/big/60001").await,
        ["db://shop/public/big/60001"]
    );
    // Typed keys, any case; never a view's or materialized view's positions.
    assert_eq!(
        search(&mut peer, "6F1C2A0E").await,
        ["db://shop/app/tokens/6f1c2a0e-8a55-4bd4-9a43-3c7f9a0b1d22"]
    );
    assert_eq!(search(&mut peer, "names").await, ["db://shop/app/names"]);
    assert!(search(&mut peer, "nothing-like-this").await.is_empty());
}

/// A statement stopped by its time limit looks on the wire exactly like SQLite's (see
/// `a_pathological_view_is_stopped_by_the_time_limit` in `tests/sqlite_safety.rs`): code
/// -32603, a message naming the time limit, `data.uri`; and the server goes on serving.
#[tokio::test]
async fn a_statement_stopped_by_its_time_limit_looks_like_sqlites() {
    let Some(db) = database("CREATE VIEW public.forever AS SELECT 1 AS s FROM pg_sleep(30);").await
    else {
        return;
    };
    let config = PostgresConfig {
        statement_timeout: Duration::from_millis(200),
        ..PostgresConfig::default()
    };
    let provider = PostgresProvider::connect(Some("slow".into()), &db.url, config)
        .await
        .expect("the provider connects");
    let prefix = provider.prefix().to_owned();
    let server = common::server_at(&prefix, provider, 1000);
    let mut peer = common::peer_for(&server).await;
    let uri = "db://slow/public/forever/1";
    let started = std::time::Instant::now();
    let resp = common::read(&mut peer, uri).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let expected = serde_json::json!({
        "code": -32603,
        "message": format!("{uri}: the query was stopped after the time limit of 200 ms"),
        "data": {"uri": uri},
    });
    assert_eq!(resp["error"], expected, "{resp}");
    #[cfg(feature = "sqlite")]
    {
        use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
        let forever = "CREATE VIEW forever AS
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
            SELECT x FROM c WHERE x < 0;";
        let config = SqliteConfig {
            statement_timeout: Duration::from_millis(200),
            ..SqliteConfig::default()
        };
        let sqlite =
            SqliteProvider::new(vec![SqliteSource::script("slow", forever)], config).unwrap();
        let sqlite_server = common::server_at(rsrc_providers::db::PREFIX, sqlite, 1000);
        let mut sqlite_peer = common::peer_for(&sqlite_server).await;
        let sqlite_uri = "db://slow/forever/1";
        let sqlite_resp = common::read(&mut sqlite_peer, sqlite_uri).await;
        let same = serde_json::to_string(&sqlite_resp["error"])
            .unwrap()
            .replace(sqlite_uri, uri);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&same).unwrap(),
            expected,
            "SQLite said {sqlite_resp}"
        );
    }
    // The server is still there.
    let ok = peer
        .request(
            "resources/metadata",
            serde_json::json!({"uri": "db://slow/public/forever"}),
        )
        .await;
    assert_eq!(ok["result"]["resource"]["resourceType"], "collection");
}

/// The URIs of a complete raw-JSON walk of `resources/list` with `params`, and its pages.
async fn filtered_walk(peer: &mut rsrc_testkit::Peer, mut params: Value) -> (Vec<String>, usize) {
    let (mut uris, mut pages) = (Vec::new(), 0);
    loop {
        let resp = peer.call("resources/list", params.clone()).await;
        pages += 1;
        for r in resp["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{resp}"))
        {
            uris.push(r["uri"].as_str().unwrap().to_owned());
        }
        match resp["result"].get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => return (uris, pages),
        }
    }
}

#[tokio::test]
async fn sep_2564_filters_the_catalog_and_rows_within_bounded_pages_in_both_eras() {
    let Some(db) = database(&format!(
        "{SHOP}
         CREATE TABLE public.big (id int8 PRIMARY KEY, v text);
         INSERT INTO public.big SELECT g, 'row' FROM generate_series(1, 25000) g;"
    ))
    .await
    else {
        return;
    };
    let provider =
        PostgresProvider::connect(Some("shop".into()), &db.url, PostgresConfig::default())
            .await
            .expect("the provider connects");
    let prefix = provider.prefix().to_owned();
    let server = common::server_at(&prefix, provider, 4);
    for v in ProtocolVersion::ALL {
        let mut peer = common::peer_for(&server).await;
        peer.speak(v);
        let walk = |filter: Value, uri: Option<&str>| {
            let mut params = json!({ "filter": filter });
            if let Some(uri) = uri {
                params["uri"] = uri.into();
            }
            params
        };
        // The catalog: names, URIs, both (ANDed), several patterns (ORed).
        let (orders, _) = filtered_walk(
            &mut peer,
            walk(json!({"namePatterns": ["orders", "log"]}), None),
        )
        .await;
        assert_eq!(orders, ["db://shop/app/log", "db://shop/app/orders"], "{v}");
        let (schemas, _) = filtered_walk(
            &mut peer,
            walk(
                json!({"namePatterns": ["$schema"], "uriPatterns": ["db://shop/public/**"]}),
                None,
            ),
        )
        .await;
        assert_eq!(
            schemas,
            [
                "db://shop/public/big/$schema",
                "db://shop/public/users/$schema"
            ],
            "{v}"
        );
        let (app, _) = filtered_walk(
            &mut peer,
            walk(
                json!({"uriPatterns": ["db://shop/app/n*"]}),
                Some("db://shop/app"),
            ),
        )
        .await;
        assert_eq!(app, ["db://shop/app/names"], "{v}");
        // Rows: 25,000 examined 10,000 a page, what matches found wherever it is.
        let (rows, pages) = filtered_walk(
            &mut peer,
            walk(
                json!({"namePatterns": ["2499?", "7"]}),
                Some("db://shop/public/big"),
            ),
        )
        .await;
        let mut want = vec!["db://shop/public/big/7".to_owned()];
        want.extend((24_990..25_000).map(|i| format!("db://shop/public/big/{i}")));
        assert_eq!(rows, want, "{v}");
        assert!((3..=6).contains(&pages), "{pages} pages ({v})");
        // A cursor goes on under its own filter only.
        let first = peer
            .call(
                "resources/list",
                walk(
                    json!({"namePatterns": ["1*"]}),
                    Some("db://shop/public/big"),
                ),
            )
            .await;
        let mut other = walk(
            json!({"namePatterns": ["2*"]}),
            Some("db://shop/public/big"),
        );
        other["cursor"] = first["result"]["nextCursor"].clone();
        assert!(other["cursor"].is_string(), "{first}");
        let refused = peer.call("resources/list", other).await;
        assert_eq!(refused["error"]["code"], -32602, "{v}: {refused}");
        let bad = peer
            .call(
                "resources/list",
                walk(json!({"uriPatterns": ["db://[x"]}), None),
            )
            .await;
        assert_eq!(bad["error"]["code"], -32602, "{v}: {bad}");
    }
}

/// `tools = false` on a PostgreSQL source: no spelling of its URIs reaches it through the
/// tools (the other database, served beside it, still does).
#[tokio::test]
async fn a_database_kept_out_of_the_tools_stays_out_in_every_spelling() {
    let Some(db) = database(SHOP).await else {
        return;
    };
    let config = || PostgresConfig {
        watch: false,
        ..PostgresConfig::default()
    };
    let shop = PostgresProvider::connect(Some("shop".into()), &db.url, config())
        .await
        .unwrap();
    let other = PostgresProvider::connect(Some("other".into()), &db.url, config())
        .await
        .unwrap();
    let server = Server::builder("pg-tools", "1")
        .mount(shop.prefix().to_owned(), shop)
        .mount(other.prefix().to_owned(), other)
        .tools(ToolsConfig {
            excluded: vec!["db://shop".into()],
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = common::peer_for(&server).await;
    let mut tool = async |name: &str, arguments: serde_json::Value| {
        peer.call(
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
        )
        .await["result"]
            .clone()
    };
    for uri in [
        "db://shop/public/users/1",
        "db://shop/%70ublic/users/1",
        "db://%73hop/public/users/1",
        "DB://SHOP/public/users/1",
        "db://other/../shop/public/users/1",
        "db://shop",
    ] {
        for name in ["read_resource", "list_resources"] {
            let r = tool(name, serde_json::json!({"uri": uri})).await;
            assert_eq!(r["isError"], true, "{name} {uri}: {r}");
        }
    }
    let read = tool(
        "read_resource",
        serde_json::json!({"uri": "db://other/public/users/1"}),
    )
    .await;
    assert_ne!(
        read["isError"], true,
        "the other database is offered: {read}"
    );
    let found = tool("search_resources", serde_json::json!({"query": "users"})).await;
    let uris: Vec<&str> = found["structuredContent"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(!uris.is_empty(), "{found}");
    assert!(uris.iter().all(|u| !u.starts_with("db://shop")), "{uris:?}");
}
