//! What the database benches share: the three measurements (a row read, 64 row reads in
//! flight, a whole 100,000-row listing followed cursor by cursor) of a table served by
//! an in-process server, each request taking a full turn (decode, dispatch, serve,
//! encode) as on a connection.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput};
use futures_util::future::join_all;
use rsrc::Server;
use rsrc::server::{Handled, Session};
use tokio::runtime::Runtime;

/// Rows in each bench's table, keyed 1..=ROWS.
pub(crate) const ROWS: u32 = 100_000;

/// Measures, as group `group`, reads of rows of `table` (a collection URI whose rows
/// are keyed 1..=ROWS, plus its schema document) and its whole listing, after checking
/// that a row reads with its CSV alternative and the listing takes 101 pages of 1,000.
pub(crate) fn measure(c: &mut Criterion, group: &str, rt: &Runtime, server: &Server, table: &str) {
    let session = session(server);
    let mut out = Vec::with_capacity(1 << 20);
    rt.block_on(turn(server, &session, &read_request(table, 1), &mut out));
    assert!(
        out.windows(9).any(|w| w == b"text/csv\""),
        "a row reads: {}",
        String::from_utf8_lossy(&out)
    );
    let pages = rt.block_on(list_all(server, &session, table, &mut out));
    assert_eq!(
        pages, 101,
        "100,000 rows and the schema document, 1,000 per page"
    );

    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));
    let mut id = 0u32;
    g.bench_function("read_row", |b| {
        b.iter(|| {
            id = id.wrapping_add(1);
            let request = read_request(table, id);
            rt.block_on(turn(server, &session, black_box(&request), &mut out));
        });
    });

    g.throughput(Throughput::Elements(64));
    g.bench_function("read_row_64_in_flight", |b| {
        b.iter(|| {
            let requests: Vec<Vec<u8>> = (0..64)
                .map(|_| {
                    id = id.wrapping_add(1);
                    read_request(table, id)
                })
                .collect();
            rt.block_on(join_all(requests.iter().map(|r| async {
                let mut out = Vec::new();
                turn(server, &session, r, &mut out).await;
                out.len()
            })));
        });
    });

    g.throughput(Throughput::Elements(u64::from(ROWS)));
    g.sample_size(10);
    g.bench_function("list_100k_rows", |b| {
        b.iter(|| rt.block_on(list_all(server, &session, table, &mut out)));
    });
    g.finish();
}

/// An initialized 2025-11-25 session that drops its notifications.
fn session(server: &Server) -> Arc<Session> {
    let session = Arc::new(Session::new(rsrc::Notifier::discard()));
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}"#;
    assert!(matches!(server.handle(&session, init), Handled::Reply(_)));
    session
}

/// One full turn: handle the message, drive the handler, encode the reply into `out`.
async fn turn(server: &Server, session: &Arc<Session>, request: &[u8], out: &mut Vec<u8>) {
    out.clear();
    match server.handle(session, request) {
        Handled::Pending(f) => f.await.expect("not cancelled").encode(out),
        Handled::Reply(r) => r.encode(out),
        Handled::None => unreachable!(),
    }
}

/// `resources/read` of a row of `table` (a collection URI), spread over the keys by `id`.
fn read_request(table: &str, id: u32) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{table}/{}"}}}}"#,
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

/// Lists every child of `collection`, page by page; returns the number of pages.
async fn list_all(
    server: &Server,
    session: &Arc<Session>,
    collection: &str,
    out: &mut Vec<u8>,
) -> usize {
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let after = cursor
            .map(|c| format!(r#","cursor":"{c}""#))
            .unwrap_or_default();
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{{"uri":"{collection}"{after}}}}}"#
        );
        turn(server, session, request.as_bytes(), out).await;
        assert!(
            !out.windows(8).any(|w| w == b"\"error\":"),
            "a page lists: {}",
            String::from_utf8_lossy(out)
        );
        pages += 1;
        cursor = next_cursor(out);
        if cursor.is_none() {
            return pages;
        }
    }
}
