//! End to end over stdio: the real `rsrc` binary, spawned, spoken to in raw JSON.

use std::process::Stdio;
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc_client::{Client, ClientOptions};
use rsrc_testkit::Peer;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

mod common;
use common::spawn_stdio;

fn rsrc(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

async fn exit_status(child: &mut Child) -> std::process::ExitStatus {
    tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits when stdin closes")
        .unwrap()
}

#[tokio::test]
async fn the_embedded_sample_is_served_on_stdio_in_both_eras() {
    let (mut child, mut peer) = spawn_stdio(&["serve"]);
    peer.initialize(ProtocolVersion::V2025_06_18).await;
    let list = peer.request("resources/list", json!({})).await;
    let resources = list["result"]["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r["uri"] == "sample:///README.md"));
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "sample:///guide" && r["resourceType"] == "collection")
    );
    let logo = peer
        .request(
            "resources/read",
            json!({"uri": "sample:///images/logo.png"}),
        )
        .await;
    assert!(
        logo["result"]["contents"][0]["blob"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    let report = peer
        .request("resources/read", json!({"uri": "sample:///data/report"}))
        .await;
    assert_eq!(report["result"]["contents"].as_array().unwrap().len(), 2);
    peer.speak(ProtocolVersion::V2026_07_28);
    let status = peer
        .modern("resources/read", json!({"uri": "sample:///status"}))
        .await;
    let text: Value =
        serde_json::from_str(status["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["protocol_version"], "2026-07-28");
    peer.close().await;
    assert!(exit_status(&mut child).await.success());
}

#[tokio::test]
async fn a_modern_request_first_is_served() {
    let (mut child, mut peer) = spawn_stdio(&["serve"]);
    peer.speak(ProtocolVersion::V2026_07_28);
    let discover = peer.modern("server/discover", json!({})).await;
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    peer.close().await;
    assert!(exit_status(&mut child).await.success());
}

#[tokio::test]
async fn bad_input_gets_errors_and_the_stream_continues() {
    let (mut child, mut peer) = spawn_stdio(&["serve", "--max-message", "1024"]);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer.send_raw(b"this is not json\n").await;
    let e = peer.recv().await;
    assert_eq!(
        (e["error"]["code"].clone(), e["id"].clone()),
        (json!(-32700), Value::Null)
    );
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"resources/read","params":{{"uri":"sample:///{}"}}}}"#,
        "x".repeat(5000)
    );
    peer.send_raw(format!("{long}\n").as_bytes()).await;
    let e = peer.recv().await;
    assert_eq!(
        (e["error"]["code"].clone(), e["id"].clone()),
        (json!(-32600), json!(77))
    );
    peer.send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":78,\"method\":\"ping\"}\r\n")
        .await;
    assert_eq!(peer.recv().await["id"], 78);
    peer.send(json!({"jsonrpc":"2.0","id":79,"method":"resources/read","params":{"uri":"sample:///nope"}}))
        .await;
    let e = peer.recv().await;
    assert_eq!(e["error"]["code"], -32002);
    assert_eq!(e["error"]["data"]["uri"], "sample:///nope");
    peer.close().await;
    assert!(exit_status(&mut child).await.success());
}

#[tokio::test]
async fn logs_go_to_stderr_and_stdout_carries_only_protocol() {
    let mut child = rsrc(&["serve", "-vvv"]).spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut peer = Peer::new(stdout, stdin);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer.request("resources/read", json!({"uri": "sample:///README.md"}))
        .await;
    peer.send_raw(b"{broken\n").await;
    peer.recv().await;
    peer.close().await;
    // Every stdout line was validated by the peer; whatever remains must be nothing.
    assert_eq!(peer.try_recv(Duration::from_secs(5)).await.unwrap(), None);
    assert!(exit_status(&mut child).await.success());
    let mut logs = String::new();
    stderr.read_to_string(&mut logs).await.unwrap();
    assert!(logs.contains("serving MCP on stdio"), "{logs}");
}

#[tokio::test]
async fn the_client_library_lists_everything_from_the_binary() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    cmd.arg("serve")
        .arg("--page-size")
        .arg("2")
        .stderr(Stdio::null());
    let (client, mut child) = Client::spawn(&mut cmd, ClientOptions::default())
        .await
        .unwrap();
    assert!(client.protocol_version().is_modern());
    let all = client.list_all_resources(None, 100).await.unwrap();
    // The sample directory's 7 resources, and the sample database's catalog.
    let sample = all.items.iter().filter(|r| r.uri.starts_with("sample:///"));
    assert_eq!(sample.count(), 7);
    assert!(all.items.iter().any(|r| r.uri == "db://bookshop"));
    drop(client);
    assert!(exit_status(&mut child).await.success());
}
