//! End to end over Streamable HTTP: the real `rsrc serve --http` binary on a loopback
//! port, its refusal to bind other interfaces unasked, authentication, and shutdown on
//! SIGTERM.

use std::process::Stdio;
use std::time::Duration;

mod common;

use common::{serve_http as serve, signal_term as terminate};
use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::HttpPeer;
use serde_json::json;
use tokio::process::Command;

#[tokio::test]
async fn the_fixture_is_served_over_http_in_both_eras_and_sigterm_stops_it() {
    let (mut child, addr) = serve(&["--conformance-fixtures"]).await;
    let mut legacy = HttpPeer::new(addr);
    let init = legacy.initialize().await;
    assert_eq!(
        init.json()["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    let read = legacy
        .post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": {"uri": "test://static-text"}}),
        )
        .await;
    assert_eq!(read.status, 200);
    assert_eq!(
        read.json()["result"]["contents"][0]["mimeType"],
        "text/plain"
    );
    let mut modern = HttpPeer::new(addr);
    modern.speak(ProtocolVersion::V2026_07_28);
    let msg = modern.modern_request("resources/read", json!({"uri": "test://template/42/data"}));
    let res = modern.post(&msg).await;
    assert_eq!(res.status, 200);
    let text = res.json()["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("42"), "{text}");
    terminate(&child);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("the server stops on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_non_loopback_address_needs_allow_remote() {
    let out = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--allow-remote"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn a_bearer_token_file_protects_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "let-me-in-let-me-in-let-me-in-let-me-in\n").unwrap();
    // A secret file must be private to its owner (and a token at least 32 bytes).
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (_child, addr) = serve(&["--bearer-token-file", token.to_str().unwrap()]).await;
    let mut peer = HttpPeer::new(addr);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}});
    let denied = peer.post(&init).await;
    assert_eq!(denied.status, 401);
    let challenge = denied.header("www-authenticate").unwrap();
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{challenge}"
    );
    peer.always(
        "authorization",
        "Bearer let-me-in-let-me-in-let-me-in-let-me-in",
    );
    assert_eq!(peer.post(&init).await.status, 200);
}
