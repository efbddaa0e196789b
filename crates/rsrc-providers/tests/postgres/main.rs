//! The PostgreSQL provider against a real server (`scripts/test` starts one and sets
//! `RSRC_TEST_POSTGRES`). Each test creates its own database, fills it through a
//! separate writing connection, and serves it through the engine. Without a server the
//! tests are skipped with a message, unless `CI` is set: then they fail.

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use rsrc::protocol::ProtocolVersion;
use rsrc::protocol::resources::Body;
use rsrc::{Server, ToolsConfig};
use rsrc_client::{Change, Client, ClientOptions, EraPreference};
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

mod finding;
mod safety;
mod shape;
