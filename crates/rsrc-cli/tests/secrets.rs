//! The server's own secrets: its configuration, key, token and password files are never
//! served, even from a directory it serves; a secret file its group or others may read
//! is refused (unless `--allow-open-secrets`); keys are checked for strength; a key file
//! that is not text says what to write.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use common::spawn_stdio;
use rsrc::protocol::ProtocolVersion;
use serde_json::json;

const KEY: &str = "9c1f0e7a5b3d2c4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6";

fn rsrc(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .output()
        .expect("the rsrc binary runs")
}

fn write_mode(path: &Path, content: &str, mode: u32) {
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The error `rsrc ARGS` stops with (exit code 2).
fn refusal(args: &[&str]) -> String {
    let out = rsrc(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[tokio::test]
async fn the_servers_own_files_are_never_served_from_a_served_directory() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir(&served).unwrap();
    std::fs::write(served.join("notes.txt"), "notes").unwrap();
    write_mode(&served.join("cursor.keys"), KEY, 0o600);
    write_mode(&served.join("token"), KEY, 0o600);
    let config = served.join("rsrc.toml");
    write_mode(
        &config,
        "watch = false\n[cluster]\ncursor_key_file = \"cursor.keys\"\n[http.auth]\nbearer_token_file = \"token\"\n[[sources]]\npath = \".\"\n",
        0o600,
    );
    // Another name for the cursor keys (a hard link), and a link to the token.
    std::fs::hard_link(served.join("cursor.keys"), served.join("keys-copy")).unwrap();
    std::os::unix::fs::symlink("token", served.join("token-link")).unwrap();
    let (_child, mut peer) = spawn_stdio(&["serve", "--config", config.to_str().unwrap()]);
    peer.begin(ProtocolVersion::V2025_11_25).await;
    let notes = peer
        .call("resources/read", json!({"uri": "file:///notes.txt"}))
        .await;
    assert_eq!(notes["result"]["contents"][0]["text"], "notes", "{notes}");
    for name in [
        "rsrc.toml",
        "cursor.keys",
        "token",
        "keys-copy",
        "token-link",
    ] {
        let uri = format!("file:///{name}");
        let read = peer.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(read["error"]["code"], -32002, "{uri}: {read}");
    }
    let listed = peer.call("resources/list", json!({})).await;
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    for name in ["rsrc.toml", "cursor.keys", "token", "token-link"] {
        assert!(
            !uris.contains(&format!("file:///{name}").as_str()),
            "{name}: {uris:?}"
        );
    }
}

#[test]
fn secret_files_the_group_or_others_may_read_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("cursor.keys");
    write_mode(&keys, KEY, 0o644);
    let root = dir.path().to_str().unwrap();
    let keys_arg = keys.to_str().unwrap();
    let err = refusal(&["serve", "--cursor-key-file", keys_arg, root]);
    assert!(
        err.contains("chmod 600") && err.contains("--allow-open-secrets"),
        "{err}"
    );
    let token = dir.path().join("token");
    write_mode(&token, KEY, 0o640);
    let err = refusal(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--bearer-token-file",
        token.to_str().unwrap(),
        root,
    ]);
    assert!(err.contains("chmod 600"), "{err}");
    // A configuration file is a secret file once it holds a password.
    let config = dir.path().join("rsrc.toml");
    write_mode(
        &config,
        "[cluster]\nbus = \"redis://:swordfish@127.0.0.1:1\"\n",
        0o644,
    );
    let err = refusal(&[
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--print-config",
    ]);
    assert!(err.contains("chmod 600"), "{err}");
    assert!(!err.contains("swordfish"), "{err}");
    // Told so, the server takes them.
    let out = rsrc(&[
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--print-config",
        "--allow-open-secrets",
    ]);
    assert!(out.status.success(), "{out:?}");
    let allowed = rsrc(&[
        "serve",
        "--allow-open-secrets",
        "--cursor-key-file",
        keys_arg,
        "--print-config",
        root,
    ]);
    assert!(allowed.status.success(), "{allowed:?}");
}

#[tokio::test]
async fn a_private_key_file_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("cursor.keys");
    write_mode(&keys, &format!("# rotated in May\n{KEY}\n"), 0o600);
    let (_child, mut peer) = spawn_stdio(&[
        "serve",
        "--cursor-key-file",
        keys.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    peer.begin(ProtocolVersion::V2025_11_25).await;
}

#[test]
fn weak_keys_are_refused_with_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let keys = dir.path().join("cursor.keys");
    for weak in ["a".repeat(64), "short-key".to_owned()] {
        write_mode(&keys, &weak, 0o600);
        let err = refusal(&["serve", "--cursor-key-file", keys.to_str().unwrap(), root]);
        assert!(err.contains("openssl rand -hex 32"), "{weak}: {err}");
        assert!(err.contains("cursor.keys:1"), "the line is named: {err}");
    }
    let token = dir.path().join("token");
    write_mode(&token, "let-me-in", 0o600);
    let err = refusal(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--bearer-token-file",
        token.to_str().unwrap(),
        root,
    ]);
    assert!(err.contains("at least 32"), "{err}");
    let secret = dir.path().join("jwt.secret");
    write_mode(&secret, "sixteen-byte-key", 0o600);
    let err = refusal(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--jwt-secret-file",
        secret.to_str().unwrap(),
        root,
    ]);
    assert!(
        err.contains("JWT HMAC secret") && err.contains("at least 32"),
        "{err}"
    );
}

#[test]
fn a_binary_cursor_key_file_says_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("cursor.keys");
    std::fs::write(&keys, [0x8fu8, 0x00, 0xff, 0x13, 0x9e, 0xc7]).unwrap();
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = refusal(&[
        "serve",
        "--cursor-key-file",
        keys.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        err.contains("not text") && err.contains("openssl rand -hex 32"),
        "{err}"
    );
    assert!(!err.contains("valid UTF-8"), "{err}");
}
