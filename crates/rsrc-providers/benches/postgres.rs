//! The PostgreSQL provider through the engine, against a real server: `resources/read`
//! of single rows (one at a time, and 64 in flight over the pool), and a full keyset
//! listing of a 100,000-row table, each request decoded, dispatched, served and its
//! reply encoded as on a connection. The server is the one `scripts/postgres start`
//! prints (or any other): its URL in `RSRC_TEST_POSTGRES`; without it the bench says so
//! and measures nothing. It creates a database of its own and drops it at the end.
//!
//! Run: `RSRC_TEST_POSTGRES=$(scripts/postgres start) cargo bench -p rsrc-providers
//! --features postgres --bench postgres`.

mod common;

use common::ROWS;
use criterion::Criterion;
use rsrc::{Server, ServerConfig};
use rsrc_providers::db::postgres::{PostgresConfig, PostgresProvider};

const DATABASE: &str = "rsrc_bench";

/// Runs `sql` on a connection of its own.
async fn admin(url: &str, sql: &str) {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("the PostgreSQL server answers");
    tokio::spawn(conn);
    client
        .batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
}

/// Creates and fills the bench database; returns its URL.
async fn database(admin_url: &str) -> String {
    // Two batches: CREATE DATABASE cannot run in the implicit transaction of one.
    admin(
        admin_url,
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    )
    .await;
    admin(admin_url, &format!("CREATE DATABASE {DATABASE}")).await;
    let (base, _) = admin_url
        .rsplit_once('/')
        .expect("a URL ending in /DATABASE");
    let url = format!("{base}/{DATABASE}");
    admin(
        &url,
        &format!(
            "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price float8,
                                 stock int, note text);
             INSERT INTO items
             SELECT x, 'item ' || x, x * 0.25, x % 97,
                    format('a \"note\" for item %s, with some text to make it ~100 bytes long', x)
             FROM generate_series(1, {ROWS}) AS x;
             ANALYZE items;"
        ),
    )
    .await;
    url
}

async fn server(url: &str) -> Server {
    let config = PostgresConfig {
        watch: false,
        ..PostgresConfig::default()
    };
    let provider = PostgresProvider::connect(Some("bench".into()), url, config)
        .await
        .expect("the provider connects");
    Server::builder("bench", "0")
        .mount(provider.prefix().to_owned(), provider)
        .config(ServerConfig {
            page_size: 1000,
            ..ServerConfig::default()
        })
        .build()
        .expect("build")
}

fn main() {
    let Ok(admin_url) = std::env::var("RSRC_TEST_POSTGRES") else {
        eprintln!(
            "postgres bench skipped: no PostgreSQL server (set RSRC_TEST_POSTGRES, e.g. to the URL `scripts/postgres start` prints)"
        );
        return;
    };
    // Several workers, as `rsrc serve` has: the pool's connections run beside requests.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = rt.block_on(database(&admin_url));
    let server = rt.block_on(server(&url));
    let mut c = Criterion::default().configure_from_args();
    common::measure(&mut c, "postgres", &rt, &server, "db://bench/public/items");
    drop(server);
    rt.block_on(admin(
        &admin_url,
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    ));
    c.final_summary();
}
