//! The SQLite provider through the engine, in process: `resources/read` of single rows
//! (one at a time, and 64 in flight), and a full keyset listing of a 100,000-row table,
//! each request decoded, dispatched, served and its reply encoded as on a connection.
//!
//! Run: `cargo bench -p rsrc-providers --features sqlite --bench sqlite`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::future::join_all;
use rsrc::server::{Handled, Session};
use rsrc::{Notifier, Server, ServerConfig};
use rsrc_providers::db::PREFIX;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider};

const ROWS: u32 = 100_000;

fn database(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("bench.db");
    let conn = rusqlite::Connection::open(&path).expect("create the database");
    conn.execute_batch(&format!(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL,
                             stock INTEGER, note TEXT);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {ROWS})
         INSERT INTO items
         SELECT x, 'item ' || x, x * 0.25, x % 97,
                printf('a \"note\" for item %d, with some text to make it ~100 bytes long', x)
         FROM c;"
    ))
    .expect("fill the database");
    path
}

fn server(path: &std::path::Path) -> Server {
    let config = SqliteConfig {
        watch: false,
        ..SqliteConfig::default()
    };
    Server::builder("bench", "0")
        .mount(PREFIX, SqliteProvider::open(path, config).expect("open"))
        .config(ServerConfig {
            page_size: 1000,
            ..ServerConfig::default()
        })
        .build()
        .expect("build")
}

fn session(server: &Server) -> Arc<Session> {
    let session = Arc::new(Session::new(Notifier::discard()));
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}"#;
    assert!(matches!(server.handle(&session, init), Handled::Reply(_)));
    session
}

/// One full turn: handle the message, drive the handler, encode the reply.
async fn turn(server: &Server, session: &Arc<Session>, request: &[u8], out: &mut Vec<u8>) {
    out.clear();
    match server.handle(session, request) {
        Handled::Pending(f) => f.await.expect("not cancelled").encode(out),
        Handled::Reply(r) => r.encode(out),
        Handled::None => unreachable!(),
    }
}

fn read_request(id: u32) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"db://bench/items/{}"}}}}"#,
        (id.wrapping_mul(7919) % ROWS) + 1
    )
    .into_bytes()
}

/// The `nextCursor` of an encoded list reply.
fn next_cursor(reply: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(reply).ok()?;
    let start = text.find(r#""nextCursor":""#)? + r#""nextCursor":""#.len();
    let len = text[start..].find('"')?;
    Some(text[start..start + len].to_owned())
}

/// Lists every row of the table, page by page; returns the number of pages.
async fn list_all(server: &Server, session: &Arc<Session>, out: &mut Vec<u8>) -> usize {
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let request = match &cursor {
            None => r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"uri":"db://bench/items"}}"#.to_owned(),
            Some(c) => format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{{"uri":"db://bench/items","cursor":"{c}"}}}}"#
            ),
        };
        turn(server, session, request.as_bytes(), out).await;
        pages += 1;
        cursor = next_cursor(out);
        if cursor.is_none() {
            return pages;
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = database(dir.path());
    let server = server(&path);
    let session = session(&server);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut out = Vec::with_capacity(1 << 20);

    rt.block_on(turn(&server, &session, &read_request(1), &mut out));
    assert!(
        out.windows(9).any(|w| w == b"text/csv\""),
        "a row reads: {}",
        String::from_utf8_lossy(&out)
    );
    let pages = rt.block_on(list_all(&server, &session, &mut out));
    assert_eq!(
        pages, 101,
        "100,000 rows and the schema document, 1,000 per page"
    );

    let mut g = c.benchmark_group("sqlite");
    g.throughput(Throughput::Elements(1));
    let mut id = 0u32;
    g.bench_function("read_row", |b| {
        b.iter(|| {
            id = id.wrapping_add(1);
            let request = read_request(id);
            rt.block_on(turn(&server, &session, black_box(&request), &mut out));
        });
    });

    g.throughput(Throughput::Elements(64));
    g.bench_function("read_row_64_in_flight", |b| {
        b.iter(|| {
            let requests: Vec<Vec<u8>> = (0..64)
                .map(|_| {
                    id = id.wrapping_add(1);
                    read_request(id)
                })
                .collect();
            rt.block_on(join_all(requests.iter().map(|r| async {
                let mut out = Vec::new();
                turn(&server, &session, r, &mut out).await;
                out.len()
            })));
        });
    });

    g.throughput(Throughput::Elements(u64::from(ROWS)));
    g.sample_size(10);
    g.bench_function("list_100k_rows", |b| {
        b.iter(|| rt.block_on(list_all(&server, &session, &mut out)));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
