//! What a served database cannot be made to do: injection through a URI, writes, settings
//! that outlive their request, unbounded statements, or showing what the tools exclude.
//!
//! Invariant: every statement runs read-only, time-limited, from the start-up settings.

use super::*;

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
