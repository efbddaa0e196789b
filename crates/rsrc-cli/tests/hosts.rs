//! `rsrc config HOST`: each host's snippet names this program and every source by an
//! absolute path, and the command it describes really serves.

use std::path::Path;
use std::process::Output;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::Value;
use tokio::process::Command;

fn config(cwd: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .arg("config")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn program() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_rsrc"))
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// A directory holding `docs/` and `notes/`, canonical.
fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/a.md"), "# A\n").unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root.to_str().unwrap().to_owned())
}

#[test]
fn every_host_gets_its_snippet_with_absolute_paths() {
    let (dir, root) = workspace();
    let expected_args = vec![
        "serve".to_owned(),
        "--tools".to_owned(),
        format!("{root}/docs"),
        format!("n={root}/notes"),
        format!("sqlite:{root}/shop.db"),
        "postgres://reader@localhost/shop".to_owned(),
    ];
    let sources = [
        "docs",
        "n=notes",
        "sqlite:shop.db",
        "postgres://reader@localhost/shop",
    ];
    for (host, key) in [
        ("claude-desktop", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
    ] {
        let out = config(dir.path(), &[&[host][..], &sources[..]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
        let entry = &snippet[key]["rsrc"];
        assert_eq!(entry["command"], program(), "{host}");
        assert_eq!(entry["args"], serde_json::json!(expected_args), "{host}");
        assert_eq!(entry["type"] == "stdio", host == "vscode");
        assert!(!out.stderr.is_empty(), "where the snippet goes is said");
    }
    let out = config(dir.path(), &[&["claude-code"][..], &sources[..]].concat());
    let line = String::from_utf8(out.stdout).unwrap();
    let words = shlex::split(line.trim()).unwrap();
    let mut expected = vec!["claude", "mcp", "add", "rsrc", "--"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    expected.push(program());
    expected.extend(expected_args);
    assert_eq!(words, expected);
}

#[test]
fn tools_can_be_left_out_and_the_server_renamed() {
    let (dir, root) = workspace();
    let out = config(
        dir.path(),
        &["cursor", "--no-tools", "--name", "notes", "notes"],
    );
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        snippet["mcpServers"]["notes"]["args"],
        serde_json::json!(["serve", format!("{root}/notes")])
    );
}

#[test]
fn a_source_that_cannot_be_served_is_refused() {
    let (dir, _) = workspace();
    let out = config(dir.path(), &["vscode", "missing-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing-dir: not a directory"));
    let unknown = config(dir.path(), &["emacs"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[tokio::test]
async fn the_configured_command_serves_from_anywhere() {
    let (dir, _) = workspace();
    let out = config(dir.path(), &["vscode", "docs"]);
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = &snippet["servers"]["rsrc"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // Launched the way a host would: from another directory.
    let mut child = Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .current_dir("/")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut peer = Peer::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    peer.begin(ProtocolVersion::V2025_11_25).await;
    let read = peer
        .call("resources/read", serde_json::json!({"uri": "file:///a.md"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "# A\n", "{read}");
}
