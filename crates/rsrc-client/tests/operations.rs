//! The client: era detection (modern, legacy, silent legacy), every operation against the
//! real engine, cursor-following under a cap, timeouts and cancellation.

#[path = "../../rsrc/tests/common/fixtures.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use rsrc::ServerConfig;
use rsrc::protocol::{Body, ErrorCode, ProtocolVersion};
use rsrc_client::{Client, ClientError, ClientOptions, EraPreference};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use common::{PNG, server, server_with};

fn quick() -> ClientOptions {
    ClientOptions {
        probe_timeout: Duration::from_millis(300),
        request_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    }
}

#[tokio::test]
async fn auto_detection_picks_the_modern_era_on_a_dual_era_server() {
    let client = Client::in_memory(&server(), quick()).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let desc = client.server();
    assert_eq!(desc.info.as_ref().unwrap().name, "rsrc-test");
    assert!(desc.capabilities.resources.is_some());
    assert_eq!(desc.instructions.as_deref(), Some("test server"));
    client.ping().await.unwrap();
}

#[tokio::test]
async fn a_legacy_preference_uses_initialize() {
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let options = ClientOptions {
            era: EraPreference::Legacy(v),
            ..quick()
        };
        let client = Client::in_memory(&server(), options).await.unwrap();
        assert_eq!(client.protocol_version(), v);
        client.ping().await.unwrap();
        let read = client.read("sample:///clock").await.unwrap();
        assert_eq!(
            read.contents[0].body,
            Body::Text(format!("revision {v}").into())
        );
    }
}

#[tokio::test]
async fn every_operation_works_in_both_eras() {
    for era in [
        EraPreference::Auto,
        EraPreference::Legacy(ProtocolVersion::V2025_11_25),
    ] {
        let client = Client::in_memory(&server(), ClientOptions { era, ..quick() })
            .await
            .unwrap();
        let all = client.list_all_resources(None, 10).await.unwrap();
        assert_eq!(all.items.len(), 39);
        assert!(!all.truncated);
        let children = client
            .list_all_resources(Some("sample:///guide"), 10)
            .await
            .unwrap();
        assert_eq!(children.items.len(), 3);
        let read = client.read("sample:///logo.png").await.unwrap();
        assert_eq!(read.contents[0].body, Body::Blob(PNG.to_vec().into()));
        let meta = client.metadata("sample:///README.md").await.unwrap();
        assert_eq!(meta.title.as_deref(), Some("Read me"));
        let templates = client.list_all_templates(10).await.unwrap();
        assert_eq!(templates.items[0].uri_template, "num:///{n}");
        let completion = client
            .complete("num:///{n}", "n", "00002", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(completion.values.len(), 5);
        let err = client.read("sample:///missing").await.unwrap_err();
        let code = err.rpc().unwrap().code;
        assert!(code == ErrorCode::RESOURCE_NOT_FOUND || code == ErrorCode::INVALID_PARAMS);
    }
}

#[tokio::test]
async fn listing_stops_at_the_page_cap_and_says_so() {
    let server = server_with(ServerConfig {
        page_size: 4,
        ..ServerConfig::default()
    });
    let client = Client::in_memory(&server, quick()).await.unwrap();
    let capped = client.list_all_resources(None, 3).await.unwrap();
    assert_eq!(capped.items.len(), 12);
    assert!(capped.truncated);
    let all = client.list_all_resources(None, 100).await.unwrap();
    assert_eq!(all.items.len(), 39);
}

/// A scripted server: answers each request with `answer(method, id)`, or stays silent
/// when it returns `None`. Returns the client's end and a log of everything received.
fn scripted(
    answer: impl Fn(&str, &Value) -> Option<Value> + Send + 'static,
) -> (DuplexStream, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (log_tx, log_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let (r, mut w) = tokio::io::split(server_end);
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: Value = serde_json::from_str(&line).unwrap();
            let _ = log_tx.send(msg.clone());
            if let (Some(method), Some(id)) = (msg["method"].as_str(), msg.get("id"))
                && let Some(reply) = answer(method, id)
            {
                w.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
            }
        }
    });
    (client_end, log_rx)
}

fn legacy_answer(method: &str, id: &Value) -> Option<Value> {
    match method {
        "initialize" => Some(json!({"jsonrpc":"2.0","id":id,"result":{
            "protocolVersion":"2025-03-26","capabilities":{"resources":{}},
            "serverInfo":{"name":"old","version":"1"}}})),
        "resources/list" => {
            Some(json!({"jsonrpc":"2.0","id":id,"result":{"resources":[{"uri":"a:b","name":"b"}]}}))
        }
        _ => Some(
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}}),
        ),
    }
}

#[tokio::test]
async fn a_legacy_server_refusing_discover_gets_initialize() {
    let (stream, mut log) = scripted(legacy_answer);
    let (r, w) = tokio::io::split(stream);
    let client = Client::connect(r, w, quick()).await.unwrap();
    assert_eq!(client.server().version_string, "2025-03-26");
    assert!(!client.protocol_version().is_modern());
    let list = client.list_resources(None, None).await.unwrap();
    assert_eq!(list.resources[0].uri, "a:b");
    let methods: Vec<String> = std::iter::from_fn(|| log.try_recv().ok())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "resources/list"
        ]
    );
}

#[tokio::test]
async fn a_silent_legacy_server_gets_initialize_after_the_probe_timeout() {
    let (stream, _log) = scripted(|method, id| {
        (method != "server/discover")
            .then(|| legacy_answer(method, id))
            .flatten()
    });
    let (r, w) = tokio::io::split(stream);
    let client = Client::connect(r, w, quick()).await.unwrap();
    assert!(!client.protocol_version().is_modern());
}

#[tokio::test]
async fn a_modern_only_preference_refuses_a_legacy_server() {
    let (stream, _log) = scripted(legacy_answer);
    let (r, w) = tokio::io::split(stream);
    let options = ClientOptions {
        era: EraPreference::Modern,
        ..quick()
    };
    let err = Client::connect(r, w, options).await.unwrap_err();
    assert!(err.is_method_not_found(), "{err}");
}

#[tokio::test]
async fn a_request_that_times_out_is_cancelled_on_the_wire() {
    let (stream, mut log) = scripted(|method, id| match method {
        "resources/read" => None,
        _ => legacy_answer(method, id),
    });
    let (r, w) = tokio::io::split(stream);
    let options = ClientOptions {
        request_timeout: Duration::from_millis(200),
        ..quick()
    };
    let client = Client::connect(r, w, options).await.unwrap();
    let err = client.read("a:b").await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout));
    let mut read_id = None;
    let cancelled = loop {
        let msg = tokio::time::timeout(Duration::from_secs(2), log.recv())
            .await
            .unwrap()
            .unwrap();
        if msg["method"] == "resources/read" {
            read_id = Some(msg["id"].clone());
        }
        if msg["method"] == "notifications/cancelled" {
            break msg;
        }
    };
    assert_eq!(Some(cancelled["params"]["requestId"].clone()), read_id);
}

#[tokio::test]
async fn server_pings_are_answered() {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (r, mut w) = tokio::io::split(server_end);
    let mut lines = BufReader::new(r).lines();
    let (cr, cw) = tokio::io::split(client_end);
    let connecting = tokio::spawn(Client::connect(
        cr,
        cw,
        ClientOptions {
            era: EraPreference::Legacy(ProtocolVersion::V2025_11_25),
            ..quick()
        },
    ));
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    w.write_all(
        format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":init["id"],"result":{
        "protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}})
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let _client = connecting.await.unwrap().unwrap();
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"srv-2\",\"method\":\"roots/list\"}\n")
        .await
        .unwrap();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let msg: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        if msg.get("method").is_none() {
            answers.push(msg);
        }
    }
    assert_eq!(
        answers[0],
        json!({"jsonrpc":"2.0","id":"srv-1","result":{}})
    );
    assert_eq!(answers[1]["error"]["code"], -32601);
}

#[tokio::test]
async fn a_waiting_request_fails_with_closed_when_the_server_goes_away() {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (r, mut w) = tokio::io::split(server_end);
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: Value = serde_json::from_str(&line).unwrap();
            match msg["method"].as_str() {
                // The server dies while reading.
                Some("resources/read") => return,
                Some(m) => {
                    if let Some(reply) =
                        legacy_answer(m, &msg["id"]).filter(|_| msg.get("id").is_some())
                    {
                        w.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
                    }
                }
                None => {}
            }
        }
    });
    let (r, w) = tokio::io::split(client_end);
    let client = Client::connect(r, w, quick()).await.unwrap();
    let started = std::time::Instant::now();
    let err = client.read("a:b").await.unwrap_err();
    assert!(matches!(err, ClientError::Closed), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "not left to time out"
    );
    assert!(matches!(client.ping().await, Err(ClientError::Closed)));
}
