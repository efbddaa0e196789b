//! The client over Streamable HTTP and over a byte stream, in both eras: every operation,
//! cursor-following streams, and watching (`resources/subscribe` with the GET stream, or
//! `subscriptions/listen`).

#[path = "../../rsrc/tests/common/fixtures.rs"]
mod common;

use std::time::Duration;

use futures_util::StreamExt as _;
use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server};
use rsrc_client::{Change, Client, ClientError, ClientOptions, EraPreference};
use rsrc_http::{HttpConfig, serve_http};
use tokio::net::TcpListener;

fn server() -> Server {
    Server::builder("rsrc-client-test", "0.0.0")
        .mount("sample:", common::sample_set())
        .mount(
            "num:",
            common::Numbers {
                scheme: "num",
                n: 25,
            },
        )
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_subscriptions(),
        )
        .config(rsrc::ServerConfig {
            page_size: 10,
            ..rsrc::ServerConfig::default()
        })
        .build()
        .unwrap()
}

async fn http_url(server: &Server) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = server.clone();
    tokio::spawn(async move {
        serve_http(
            &server,
            listener,
            HttpConfig::default(),
            std::future::pending(),
        )
        .await
    });
    format!("http://{addr}/mcp")
}

fn options(era: EraPreference) -> ClientOptions {
    ClientOptions {
        era,
        request_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

const ERAS: [EraPreference; 3] = [
    EraPreference::Auto,
    EraPreference::Legacy(ProtocolVersion::V2025_11_25),
    EraPreference::Legacy(ProtocolVersion::V2025_06_18),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_works_over_http_in_both_eras() {
    let server = server();
    let url = http_url(&server).await;
    for era in ERAS {
        let client = Client::connect_http(&url, options(era)).await.unwrap();
        let expected = match era {
            EraPreference::Legacy(v) => v,
            _ => ProtocolVersion::V2026_07_28,
        };
        assert_eq!(client.protocol_version(), expected);
        client.ping().await.unwrap();
        let all = client.list_all_resources(None, 100).await.unwrap();
        assert!(
            all.items.iter().any(|r| r.uri == "num:///000024"),
            "{era:?}"
        );
        assert!(!all.truncated);
        let read = client.read("sample:///README.md").await.unwrap();
        assert_eq!(read.contents[0].body.as_text(), Some("# Sample\n"));
        let blob = client.read("sample:///logo.png").await.unwrap();
        assert_eq!(blob.contents[0].body.as_bytes(), common::PNG);
        let meta = client.metadata("sample:///README.md").await.unwrap();
        assert_eq!(meta.title.as_deref(), Some("Read me"));
        let templates = client.list_all_templates(10).await.unwrap();
        assert!(
            templates
                .items
                .iter()
                .any(|t| t.uri_template == "num:///{n}")
        );
        let done = client
            .complete("num:///{n}", "n", "00002", Default::default())
            .await
            .unwrap();
        assert_eq!(done.values.len(), 5);
        let missing = client.read("sample:///nope").await.unwrap_err();
        let code = missing.rpc().unwrap().code.0;
        assert!(code == -32002 || code == -32602, "{era:?}: {missing}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_stream_page_by_page_under_a_cap() {
    let client = Client::in_memory(&server(), options(EraPreference::Auto))
        .await
        .unwrap();
    let all: Vec<_> = client.resources(None, 100).collect().await;
    assert!(all.iter().all(Result::is_ok));
    assert!(all.len() > 25);
    let capped: Vec<_> = client.resources(None, 1).collect().await;
    assert_eq!(capped.len(), 11, "one page of 10, then the error");
    assert!(matches!(capped.last(), Some(Err(ClientError::Protocol(_)))));
    let children: Vec<_> = client
        .resources(Some("sample:///guide".into()), 10)
        .map(|r| r.unwrap().uri)
        .collect()
        .await;
    assert!(children.contains(&"sample:///guide/a.md".to_owned()));
    let templates: Vec<_> = client.templates(10).collect().await;
    assert!(templates.iter().all(Result::is_ok));
}

async fn expect_update(client: &Client, server: &Server) {
    let mut watch = client.watch(&["w:///a".into()], false).await.unwrap();
    assert_eq!(watch.accepted(), ["w:///a"]);
    // The GET stream (2025 HTTP) is opened in the background: retry until it carries.
    for _ in 0..50 {
        server.changes().updated("w:///a");
        if let Ok(Some(change)) =
            tokio::time::timeout(Duration::from_millis(100), watch.next()).await
        {
            assert_eq!(change, Change::Updated("w:///a".into()));
            return;
        }
    }
    panic!("no update arrived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_works_on_both_transports_and_eras() {
    let server = server();
    let url = http_url(&server).await;
    for era in [
        EraPreference::Auto,
        EraPreference::Legacy(ProtocolVersion::V2025_11_25),
    ] {
        let over_http = Client::connect_http(&url, options(era)).await.unwrap();
        expect_update(&over_http, &server).await;
        let in_memory = Client::in_memory(&server, options(era)).await.unwrap();
        expect_update(&in_memory, &server).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_a_missing_resource_is_the_servers_error() {
    let server = server();
    let url = http_url(&server).await;
    let legacy = Client::connect_http(
        &url,
        options(EraPreference::Legacy(ProtocolVersion::V2025_11_25)),
    )
    .await
    .unwrap();
    let e = legacy
        .watch(&["w:///nope".into()], false)
        .await
        .unwrap_err();
    assert_eq!(e.rpc().unwrap().code.0, -32002);
    // 2026-07-28 acknowledges the subset it accepts.
    let modern = Client::connect_http(&url, options(EraPreference::Auto))
        .await
        .unwrap();
    let watch = modern
        .watch(&["w:///nope".into(), "w:///a".into()], false)
        .await
        .unwrap();
    assert_eq!(watch.accepted(), ["w:///a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_or_wrong_endpoint_is_a_clear_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let e = Client::connect_http(&format!("http://{addr}/mcp"), options(EraPreference::Auto))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("HTTP request failed"), "{e}");
    let url = http_url(&server()).await;
    let wrong = url.replace("/mcp", "/nothing");
    let e = Client::connect_http(&wrong, options(EraPreference::Auto))
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Http { status: 404, .. }), "{e}");
}

/// A server that answers every request with `head` and then `body_len` bytes of `fill`
/// (streamed, so a client that buffers everything would hold them all).
async fn hostile_server(head: &'static str, fill: u8, body_len: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0; 64 * 1024];
                let _ = tcp.read(&mut buf).await;
                if tcp.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![fill; 64 * 1024];
                let mut sent = 0;
                while sent < body_len {
                    if tcp.write_all(&chunk).await.is_err() {
                        return;
                    }
                    sent += chunk.len();
                }
            });
        }
    });
    format!("http://{addr}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_sending_more_than_the_limit_is_refused_not_buffered() {
    let limited = ClientOptions {
        max_message: 256 * 1024,
        probe_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(20),
        ..ClientOptions::default()
    };
    let heads = [
        // Announced too long.
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 67108864\r\nconnection: close\r\n\r\n{\"x\":\"",
        // Not announced: refused while it arrives.
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"x\":\"",
        // An SSE event that never ends.
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: ",
    ];
    for head in heads {
        let url = hostile_server(head, b'a', 64 << 20).await;
        let e = Client::connect_http(&url, limited.clone())
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("limit of 262144 bytes"),
            "{head:?}: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_moves_to_other_uris_in_both_eras() {
    let server = Server::builder("rsrc-client-test", "0.0.0")
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_subscriptions(),
        )
        .build()
        .unwrap();
    let url = http_url(&server).await;
    for era in [
        EraPreference::Auto,
        EraPreference::Legacy(ProtocolVersion::V2025_11_25),
    ] {
        let clients = [
            Client::connect_http(&url, options(era)).await.unwrap(),
            Client::in_memory(&server, options(era)).await.unwrap(),
        ];
        for client in clients {
            let mut watch = client.watch(&["w:///a".into()], false).await.unwrap();
            watch
                .change(&client, &["w:///b".into(), "w:///nope".into()], false)
                .await
                .unwrap();
            assert_eq!(watch.accepted(), ["w:///b"], "{era:?}");
            // The GET stream (2025 HTTP) is opened in the background: retry until it
            // carries. A change to `a` is no longer reported, so `b` comes first.
            let mut seen = None;
            for _ in 0..50 {
                server.changes().updated("w:///a");
                server.changes().updated("w:///b");
                if let Ok(Some(change)) =
                    tokio::time::timeout(Duration::from_millis(100), watch.next()).await
                {
                    seen = Some(change);
                    break;
                }
            }
            assert_eq!(seen, Some(Change::Updated("w:///b".into())), "{era:?}");
        }
    }
}
