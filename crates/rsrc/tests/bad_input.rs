//! Everything a client can get wrong at the message level: each gets a precise error (or,
//! for notifications, silence), nothing panics, and the stream keeps working.
//!
//! Documented choice: an unparsable line is answered with `-32700` and `"id": null`, as
//! JSON-RPC 2.0 requires; a valid JSON value that is not a message gets `-32600`, with the
//! request's id whenever it can be read unambiguously.

mod common;

use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{connect, server};

const QUIET: Duration = Duration::from_millis(150);

async fn ready_peer() -> Peer {
    let mut peer = connect(&server());
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

async fn still_alive(peer: &mut Peer) {
    let pong = peer.request("ping", json!(null)).await;
    assert_eq!(pong["result"], json!({}));
}

#[tokio::test]
async fn unparsable_lines_get_a_parse_error_with_a_null_id() {
    let mut peer = ready_peer().await;
    for line in [
        "{",
        "not json",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
        "\u{1}\u{2}",
        "[1,",
    ] {
        peer.send_raw(format!("{line}\n").as_bytes()).await;
        let resp = peer.recv().await;
        assert_eq!(resp["error"]["code"], -32700, "{line:?}");
        assert_eq!(resp["id"], Value::Null);
    }
    peer.send_raw(b"\xff\xfe{}\n").await;
    assert_eq!(peer.recv().await["error"]["code"], -32700);
    still_alive(&mut peer).await;
}

#[tokio::test]
async fn invalid_requests_get_invalid_request_with_the_id_when_readable() {
    let mut peer = ready_peer().await;
    let cases: [(&str, Value); 9] = [
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#, json!(7)),
        (r#"{"id":"s","method":"ping"}"#, json!("s")),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}"#,
            json!(8),
        ),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
    ];
    for (line, id) in cases {
        peer.send_raw(format!("{line}\n").as_bytes()).await;
        let resp = peer.recv().await;
        assert_eq!(resp["error"]["code"], -32600, "{line}");
        assert_eq!(resp["id"], id, "{line}");
    }
    for line in ["5", "\"text\"", "null", "{}"] {
        peer.send_raw(format!("{line}\n").as_bytes()).await;
        assert_eq!(peer.recv().await["error"]["code"], -32600, "{line}");
    }
    still_alive(&mut peer).await;
}

#[tokio::test]
async fn ids_are_echoed_exactly() {
    let mut peer = ready_peer().await;
    for id in [
        json!(0),
        json!(-1),
        json!(i64::MAX),
        json!(i64::MIN),
        json!("7"),
        json!(""),
        json!("é\u{0}\""),
    ] {
        peer.send(json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
            .await;
        let resp = peer.recv().await;
        assert_eq!(resp["id"], id);
        assert!(
            resp["id"].is_string() == id.is_string(),
            "a number stays a number"
        );
    }
}

#[tokio::test]
async fn notifications_are_never_answered() {
    let mut peer = ready_peer().await;
    for msg in [
        json!({"jsonrpc":"2.0","method":"notifications/unknown"}),
        json!({"jsonrpc":"2.0","method":"resources/read","params":{"uri":"sample:///README.md"}}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"bad":1}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized","params":{"x":1}}),
        // Responses from the client are ignored too.
        json!({"jsonrpc":"2.0","id":99,"result":{}}),
        json!({"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"m"}}),
    ] {
        peer.send(msg).await;
    }
    peer.expect_silence(QUIET).await;
    still_alive(&mut peer).await;
}

#[tokio::test]
async fn a_message_without_id_that_is_not_a_valid_notification_is_an_invalid_request() {
    // JSON-RPC 2.0 answers an invalid request object with -32600 and a null id, even when it
    // has no id: it is not a notification, since it is not a valid message at all.
    let mut peer = ready_peer().await;
    peer.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\"bar\"}\n",
    )
    .await;
    let resp = peer.recv().await;
    assert_eq!(resp["error"]["code"], -32600);
    assert_eq!(resp["id"], Value::Null);
}

#[tokio::test]
async fn byte_order_marks_crlf_and_blank_lines_are_tolerated() {
    let mut peer = ready_peer().await;
    peer.send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n   \n")
        .await;
    let resp = peer.recv().await;
    assert_eq!(resp["id"], 1);
    peer.expect_silence(QUIET).await;
}

#[tokio::test]
async fn an_over_long_line_is_refused_with_its_id_and_the_stream_continues() {
    let config = StreamConfig {
        max_line: 64 * 1024,
        ..StreamConfig::default()
    };
    let (r, w) = tokio::io::split(serve_in_memory(&server(), config));
    let mut peer = Peer::new(r, w);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"resources/read","params":{{"uri":"sample:///{}"}}}}"#,
        "a".repeat(1024 * 1024)
    );
    peer.send_raw(format!("{huge}\n").as_bytes()).await;
    let resp = peer.recv().await;
    assert_eq!(resp["id"], "big");
    assert_eq!(resp["error"]["code"], -32600);
    assert!(resp["error"]["message"].as_str().unwrap().contains("65536"));
    // Without an id in the first bytes, the error has a null id.
    peer.send_raw(format!("{{\"x\":\"{}\"}}\n", "b".repeat(200_000)).as_bytes())
        .await;
    assert_eq!(peer.recv().await["id"], Value::Null);
    still_alive(&mut peer).await;
}

#[tokio::test]
async fn the_json_test_suite_neither_panics_nor_desynchronizes_the_stream() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/JSONTestSuite/test_parsing"
    );
    let mut peer = ready_peer().await;
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        files += 1;
        // One message per line: a test case with newlines inside becomes several lines.
        let lines = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(|b| b.is_ascii_whitespace() || *b == 0x0c))
            .count();
        let mut payload = bytes.clone();
        payload.push(b'\n');
        peer.send_raw(&payload).await;
        // Every non-blank line is answered (none of the cases is a valid request), except
        // lines that are blank after trimming a BOM or a carriage return.
        for _ in 0..lines {
            match peer.try_recv(QUIET).await {
                Ok(Some(resp)) => assert!(resp.get("error").is_some(), "{resp}"),
                Ok(None) => panic!("the server closed the stream"),
                Err(_) => break,
            }
        }
        still_alive(&mut peer).await;
    }
    assert!(files > 300, "the suite was found");
}

#[tokio::test]
async fn positional_params_are_invalid_params_with_the_id() {
    // MCP params are objects; an array must not be matched to members by position.
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut peer = connect(&server());
        peer.begin(v).await;
        peer.send(json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": ["sample:///README.md"]}))
            .await;
        let resp = peer.response_to(&json!(7)).await;
        assert_eq!(resp["error"]["code"], -32602, "{resp}");
        assert!(resp.get("result").is_none());
        still_alive_in(&mut peer, v).await;
    }
}

async fn still_alive_in(peer: &mut Peer, v: ProtocolVersion) {
    if v.is_modern() {
        let r = peer.modern("resources/list", json!({})).await;
        assert!(r["result"].is_object(), "{r}");
    } else {
        still_alive(peer).await;
    }
}
