//! An rmcp-hosted server on `rsrc_rmcp::stdio()` ends its open 2026-07-28 listen stream
//! with the stream's result as soon as its standard input closes, so rmcp has nothing
//! left to wait for and the process exits at once (rmcp alone waits out its drain
//! timeout, then cancels the stream without an answer). Runs the `rmcp-dir` example,
//! which `cargo test` builds beside this test; wire messages in raw JSON, each server
//! message checked against the official schema.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use rsrc::protocol::ProtocolVersion;
use serde_json::{Value, json};

/// The `rmcp-dir` example, built by `cargo test` into `target/<profile>/examples/`.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = dir
        .join("examples")
        .join(format!("rmcp-dir{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: `cargo test -p rsrc-rmcp` builds it",
        path.display()
    );
    path
}

#[test]
fn closing_stdin_ends_an_open_listen_stream_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A").unwrap();
    let mut child = Command::new(example())
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let listen = json!({
        "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourcesListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
            }
        }
    });
    writeln!(stdin, "{listen}").unwrap();
    stdin.flush().unwrap();
    let mut next = || -> Option<Value> {
        let line = lines.next()?.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        rsrc_testkit::validate(
            ProtocolVersion::V2026_07_28,
            &message,
            Some("subscriptions/listen"),
        )
        .unwrap();
        Some(message)
    };
    let ack = next().expect("the acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // The stream is open: standard input closes.
    drop(stdin);
    let mut answer = None;
    while let Some(message) = next() {
        if message.get("id") == Some(&json!(7)) {
            answer = Some(message);
        }
    }
    let answer = answer.expect("the stream is answered before the server exits");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7,
        "{answer}"
    );
    assert!(child.wait().unwrap().success());
}
