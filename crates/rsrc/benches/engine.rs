//! decode → dispatch → provider → encode, in process, for a small read (static, and served
//! from the read cache) and for a 1,000-entry list page (also under a SEP-2564 filter),
//! next to the serde_json floor for the same bytes.
//!
//! Run: `cargo bench -p rsrc --bench engine`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt as _;
use std::time::Duration;

use rsrc::declare::{IntoContent, Options, Resources};
use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::server::{Handled, Session};
use rsrc::{Notifier, ResourceSet, Server};
use serde::Serialize;

/// ~200 bytes of text with characters that need JSON escaping, like the bench fixture.
fn small_text(i: usize) -> String {
    let mut s = format!("file {i}: \"quoted\" \\ back\tslash, naïve café\n");
    while s.len() < 200 {
        s.push_str("lorem ipsum dolor sit amet ");
    }
    s.truncate(200);
    s
}

fn server() -> Server {
    let mut set = ResourceSet::new();
    for i in 0..10_000 {
        let uri = format!("file:///d{:03}/f{i:05}.txt", i / 100);
        let name = format!("f{i:05}.txt");
        set = set.with_text(
            Resource::new(uri, name).with_mime_type("text/plain"),
            small_text(i),
        );
    }
    // The same text behind a template whose reads are cached for an hour: after the first
    // read, every read is a cache hit.
    let cached = Resources::new(()).template(
        ResourceTemplate::new("cached:///{name}", "cached").with_mime_type("text/plain"),
        Options::new().cache(Duration::from_secs(3600)),
        |_, _, _| async { small_text(4217).into_content() },
    );
    Server::builder("bench", "0")
        .mount("file:///", set)
        .mount("cached:", cached)
        .build()
        .unwrap()
}

fn session(server: &Server, version: ProtocolVersion) -> Arc<Session> {
    let session = Arc::new(Session::new(Notifier::discard()));
    if !version.is_modern() {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"b","version":"0"}}}}}}"#
        );
        assert!(matches!(
            server.handle(&session, init.as_bytes()),
            Handled::Reply(_)
        ));
    }
    session
}

/// One full turn: handle the message, drive the handler, encode the reply.
fn turn(server: &Server, session: &Arc<Session>, request: &[u8], out: &mut Vec<u8>) {
    out.clear();
    match server.handle(session, request) {
        Handled::Pending(f) => f
            .now_or_never()
            .expect("in-memory providers finish without waiting")
            .expect("not cancelled")
            .encode(out),
        Handled::Reply(r) => r.encode(out),
        Handled::None => unreachable!(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FloorContents<'a> {
    uri: &'a str,
    mime_type: &'a str,
    text: &'a str,
}

#[derive(Serialize)]
struct FloorResponse<R> {
    jsonrpc: &'static str,
    id: u32,
    result: R,
}

#[derive(Serialize)]
struct FloorRead<'a> {
    contents: [FloorContents<'a>; 1],
}

#[derive(Serialize)]
struct FloorList<'a> {
    resources: &'a [FloorResource<'a>],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FloorResource<'a> {
    uri: &'a str,
    name: &'a str,
    mime_type: &'a str,
    size: usize,
}

fn bench(c: &mut Criterion) {
    let server = server();
    let mut out = Vec::with_capacity(1 << 20);
    let read = br#"{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"file:///d042/f04217.txt"}}"#;
    let list = br#"{"jsonrpc":"2.0","id":18,"method":"resources/list","params":{}}"#;
    let modern_read = br#"{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"file:///d042/f04217.txt","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"0"}}}}"#;

    let legacy = session(&server, ProtocolVersion::V2025_11_25);
    let modern = session(&server, ProtocolVersion::V2026_07_28);
    turn(&server, &legacy, list, &mut out);
    assert!(out.len() > 100_000, "a 1,000-entry page");

    let mut g = c.benchmark_group("engine");
    g.bench_function("read_small_2025_11_25", |b| {
        b.iter(|| turn(&server, &legacy, black_box(read), &mut out));
    });
    let cached_read = br#"{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"cached:///f04217.txt"}}"#;
    turn(&server, &legacy, cached_read, &mut out);
    assert!(out.windows(9).any(|w| w == b"file 4217"), "a cached read");
    g.bench_function("read_cached_2025_11_25", |b| {
        b.iter(|| turn(&server, &legacy, black_box(cached_read), &mut out));
    });
    g.bench_function("read_small_2026_07_28", |b| {
        b.iter(|| turn(&server, &modern, black_box(modern_read), &mut out));
    });
    g.bench_function("list_page_1000_2025_11_25", |b| {
        b.iter(|| turn(&server, &legacy, black_box(list), &mut out));
    });
    // SEP-2564: a full page of the first 1,000 names matching (of 10,000), and a page
    // examining 10,000 resources that match nothing.
    let filtered = br#"{"jsonrpc":"2.0","id":19,"method":"resources/list","params":{"filter":{"namePatterns":["f0*"]}}}"#;
    let nothing = br#"{"jsonrpc":"2.0","id":20,"method":"resources/list","params":{"filter":{"namePatterns":["*.md"]}}}"#;
    turn(&server, &legacy, filtered, &mut out);
    assert!(out.len() > 100_000, "a 1,000-entry filtered page");
    g.bench_function("list_filtered_page_1000_2025_11_25", |b| {
        b.iter(|| turn(&server, &legacy, black_box(filtered), &mut out));
    });
    g.bench_function("list_filtered_nothing_of_10000_2025_11_25", |b| {
        b.iter(|| turn(&server, &legacy, black_box(nothing), &mut out));
    });
    g.finish();

    let text = small_text(4217);
    let resources: Vec<(String, String, usize)> = (0..1000)
        .map(|i| {
            (
                format!("file:///d{:03}/f{i:05}.txt", i / 100),
                format!("f{i:05}.txt"),
                200,
            )
        })
        .collect();
    let mut g = c.benchmark_group("floor");
    g.bench_function("serde_json_small_read_response", |b| {
        b.iter(|| {
            out.clear();
            let contents = [FloorContents {
                uri: "file:///d042/f04217.txt",
                mime_type: "text/plain",
                text: black_box(&text),
            }];
            let response = FloorResponse {
                jsonrpc: "2.0",
                id: 17,
                result: FloorRead { contents },
            };
            serde_json::to_writer(&mut out, &response).unwrap();
        });
    });
    g.bench_function("serde_json_list_page_1000", |b| {
        b.iter(|| {
            out.clear();
            let page: Vec<FloorResource<'_>> = resources
                .iter()
                .map(|(uri, name, size)| FloorResource {
                    uri,
                    name,
                    mime_type: "text/plain",
                    size: *size,
                })
                .collect();
            let response = FloorResponse {
                jsonrpc: "2.0",
                id: 18,
                result: FloorList { resources: &page },
            };
            serde_json::to_writer(&mut out, &response).unwrap();
        });
    });
    let full: Vec<Resource> = (0..1000)
        .map(|i| {
            Resource::new(
                format!("file:///d{:03}/f{i:05}.txt", i / 100),
                format!("f{i:05}.txt"),
            )
            .with_mime_type("text/plain")
            .with_size(200)
            .document()
        })
        .collect();
    g.bench_function("clone_1000_resources", |b| {
        b.iter(|| black_box(full.clone()));
    });
    g.bench_function("serialize_1000_resources", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&full)).unwrap();
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
