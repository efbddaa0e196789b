//! OpenTelemetry traces end to end: an OTLP/HTTP receiver in the test (decoding with
//! `opentelemetry-proto`) gets, for one `rsrc read` of a SQLite row, one trace holding
//! the CLI's client span, the server's SERVER span with the MCP conventions' attributes,
//! and the SQLite statement's span, all under the trace id the CLI started; over stdio
//! and over HTTP. A request the server's sampler drops exports no span at all, neither
//! its own nor any under it. An unreachable collector fails nothing.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message as _;
use tokio::sync::mpsc;

mod common;

/// A span as received: its service, name, kind, ids and string attributes.
#[derive(Debug, Clone)]
struct Got {
    service: String,
    name: String,
    kind: i32,
    trace: Vec<u8>,
    id: Vec<u8>,
    parent: Vec<u8>,
    attributes: BTreeMap<String, String>,
}

/// The attributes whose values are strings, numbers or booleans, as strings.
fn strings(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .filter_map(|kv| {
            let value = match kv.value.as_ref()?.value.as_ref()? {
                AnyValue::StringValue(v) => v.clone(),
                AnyValue::IntValue(v) => v.to_string(),
                AnyValue::BoolValue(v) => v.to_string(),
                AnyValue::DoubleValue(v) => v.to_string(),
                _ => return None,
            };
            Some((kv.key.clone(), value))
        })
        .collect()
}

impl Got {
    fn new(service: &str, s: &Span) -> Got {
        Got {
            service: service.to_owned(),
            name: s.name.clone(),
            kind: s.kind,
            trace: s.trace_id.clone(),
            id: s.span_id.clone(),
            parent: s.parent_span_id.clone(),
            attributes: strings(&s.attributes),
        }
    }
}

/// An OTLP/HTTP receiver on loopback: every span posted to `/v1/traces` goes to the
/// channel.
async fn receiver() -> (SocketAddr, mpsc::UnboundedReceiver<Got>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let tx = tx.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                for resource in &request.resource_spans {
                    let service = resource
                        .resource
                        .as_ref()
                        .map(|r| strings(&r.attributes))
                        .and_then(|mut a| a.remove("service.name"))
                        .unwrap_or_default();
                    for scope in &resource.scope_spans {
                        for span in &scope.spans {
                            let _ = tx.send(Got::new(&service, span));
                        }
                    }
                }
                // An empty ExportTraceServiceResponse.
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, rx)
}

fn create_db(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT);
         INSERT INTO books VALUES (1, 'Dune');",
    )
    .unwrap();
}

/// Collects spans until the CLI's, the server's and SQLite's are all in (the exporters
/// flush when each process ends), or fails after a bound.
async fn the_three(rx: &mut mpsc::UnboundedReceiver<Got>) -> (Got, Got, Got, Vec<Got>) {
    let mut all: Vec<Got> = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let span = rx.recv().await.expect("the receiver lives");
            all.push(span);
            let client = all.iter().find(|s| {
                s.kind == SpanKind::Client as i32
                    && s.attributes.get("mcp.method.name").map(String::as_str)
                        == Some("resources/read")
            });
            let server = all.iter().find(|s| {
                s.kind == SpanKind::Server as i32
                    && s.attributes.get("mcp.method.name").map(String::as_str)
                        == Some("resources/read")
            });
            let sqlite = all
                .iter()
                .find(|s| s.attributes.get("db.system.name").map(String::as_str) == Some("sqlite"));
            if let (Some(c), Some(s), Some(q)) = (client, server, sqlite) {
                return (c.clone(), s.clone(), q.clone());
            }
        }
    })
    .await;
    match found {
        Ok((c, s, q)) => (c, s, q, all),
        Err(_) => panic!("not all three spans arrived; got {all:#?}"),
    }
}

/// Runs `rsrc read ARGS` with `env`, checks it succeeded, and gives its output.
async fn rsrc_read(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .arg("read")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The arguments of `rsrc read db://shop/books/1` over stdio, from `rsrc serve` of `db`.
fn read_over_stdio(db: &Path) -> [String; 5] {
    let bin = env!("CARGO_BIN_EXE_rsrc");
    [
        "db://shop/books/1".into(),
        "--".into(),
        bin.into(),
        "serve".into(),
        format!("sqlite:{}", db.display()),
    ]
}

/// Serves `db` over HTTP (exporting to `endpoint`, with `server_env` besides), runs `rsrc
/// read` of its row against it (exporting to `endpoint` too), then stops the server, which
/// flushes its spans as it stops; gives what `rsrc read` printed.
async fn read_over_http(db: &Path, endpoint: &str, server_env: &[(&str, &str)]) -> String {
    let exporting = ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
    let env: Vec<(&str, &str)> = std::iter::once(exporting)
        .chain(server_env.iter().copied())
        .collect();
    let (mut server, addr) = common::serve_http_env(
        &[&format!("sqlite:{}", db.display()), "--drain-delay", "0s"],
        &env,
    )
    .await;
    let out = rsrc_read(
        &[&format!("http://{addr}/mcp"), "db://shop/books/1"],
        &[exporting],
    )
    .await;
    common::terminate(&mut server).await;
    out
}

/// Whether `child` lies under `ancestor` in the spans received.
fn descends(all: &[Got], child: &Got, ancestor: &Got) -> bool {
    let mut at = child.clone();
    for _ in 0..16 {
        if at.parent == ancestor.id {
            return true;
        }
        match all.iter().find(|s| s.id == at.parent) {
            Some(parent) => at = parent.clone(),
            None => return false,
        }
    }
    false
}

fn check_trace(client: &Got, server: &Got, sqlite: &Got, all: &[Got], transport: &str) {
    assert_eq!(
        server.trace, client.trace,
        "the server continues the CLI's trace"
    );
    assert_eq!(
        sqlite.trace, client.trace,
        "SQLite's span is in the same trace"
    );
    assert!(
        descends(all, server, client),
        "the SERVER span is the client span's child"
    );
    assert!(
        descends(all, sqlite, server),
        "SQLite's span lies under the SERVER span"
    );
    assert_eq!(server.name, "resources/read");
    let a = &server.attributes;
    assert_eq!(a["mcp.method.name"], "resources/read");
    assert_eq!(a["mcp.protocol.version"], "2026-07-28");
    assert_eq!(a["mcp.resource.uri"], "db://shop/books/1");
    assert_eq!(a["network.transport"], transport);
    assert!(a.contains_key("jsonrpc.request.id"), "{a:?}");
    assert!(!a.contains_key("error.type"), "{a:?}");
    // Nothing secret or read goes into a span: no row contents anywhere.
    for span in all {
        for value in span.attributes.values() {
            assert!(!value.contains("Dune"), "a span carries content: {span:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_over_stdio_is_one_trace_from_the_cli_to_sqlite() {
    let (collector, mut spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    create_db(&db);
    let args = read_over_stdio(&db);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let endpoint = format!("http://{collector}");
    let out = rsrc_read(
        &args,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_SERVICE_NAME", "rsrc-test"),
        ],
    )
    .await;
    assert!(out.contains("Dune"));
    let (client, server, sqlite, all) = the_three(&mut spans).await;
    check_trace(&client, &server, &sqlite, &all, "pipe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_over_http_is_one_trace_from_the_cli_to_sqlite() {
    let (collector, mut spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    create_db(&db);
    read_over_http(&db, &format!("http://{collector}"), &[]).await;
    let (client, server_span, sqlite, all) = the_three(&mut spans).await;
    check_trace(&client, &server_span, &sqlite, &all, "tcp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_server_does_not_sample_exports_no_span_of_its_own_or_below() {
    let (collector, mut spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    create_db(&db);
    // A ratio of 0, not parent-based: the client's sampled trace does not sway it.
    let out = read_over_http(
        &db,
        &format!("http://{collector}"),
        &[
            ("OTEL_SERVICE_NAME", "server"),
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0"),
        ],
    )
    .await;
    assert!(out.contains("Dune"));
    // Both processes have ended, and exported what they would before ending: whatever
    // they posted is in the channel.
    let mut all = Vec::new();
    while let Ok(span) = spans.try_recv() {
        all.push(span);
    }
    assert!(
        all.iter()
            .any(|s| s.service == "rsrc" && s.kind == SpanKind::Client as i32),
        "the CLI, sampling, exports its spans: {all:#?}"
    );
    let server_side: Vec<&Got> = all.iter().filter(|s| s.service != "rsrc").collect();
    assert!(
        server_side.is_empty(),
        "the server exported spans of requests it did not sample: {server_side:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_collector_fails_no_request() {
    // A port nothing listens on: bound, then closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    create_db(&db);
    let args = read_over_stdio(&db);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let endpoint = format!("http://{closed}");
    for _ in 0..3 {
        let out = rsrc_read(&args, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]).await;
        assert!(out.contains("Dune"));
    }
}

#[tokio::test]
async fn bad_tracing_settings_stop_the_server_with_their_name() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
        .env("OTEL_TRACES_SAMPLER", "sometimes")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown trace sampler \"sometimes\""), "{err}");
}
