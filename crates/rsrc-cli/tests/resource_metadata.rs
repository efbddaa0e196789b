//! `rsrc serve` with and without rsrc's SEP-2093 extension (`dev.rsrc/resource-metadata`;
//! `--no-resource-metadata`, `resource_metadata = false`), spoken to in raw JSON, and the
//! client commands against both: they use the extension where it is declared and do
//! without where it is not.

mod common;

use std::process::{Output, Stdio};
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use serde_json::{Value, json};
use tokio::process::Command;

use common::spawn_stdio;

const ID: &str = "dev.rsrc/resource-metadata";

/// A served tree: `docs/guide.md`, `docs/deep/notes.txt`, `README.md`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs/deep")).unwrap();
    for (path, text) in [
        ("README.md", "# Read me\n"),
        ("docs/guide.md", "A guide.\n"),
        ("docs/deep/notes.txt", "deep notes\n"),
    ] {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    dir
}

/// `rsrc ARGS… -- rsrc serve SERVE…`.
async fn inspect(args: &[&str], serve: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_rsrc"))
        .arg("serve")
        .args(serve)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("the command finishes")
        .expect("the command runs")
}

#[track_caller]
fn ok(o: &Output) -> (String, String) {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "exit {:?}: {err}", o.status);
    (String::from_utf8(o.stdout.clone()).unwrap(), err)
}

#[tokio::test]
async fn serve_declares_the_extension_and_says_so_in_its_instructions() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let (_child, mut peer) = spawn_stdio(&["serve", root]);
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    assert_eq!(
        init["capabilities"]["experimental"][ID]["sep"], 2093,
        "{init}"
    );
    let text = init["instructions"].as_str().unwrap();
    assert!(
        text.contains(ID) && text.contains("not part of the MCP standard"),
        "{text}"
    );
    peer.speak(ProtocolVersion::V2026_07_28);
    let discover = peer.modern("server/discover", json!({})).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(
        caps["extensions"][ID]["features"].as_array().unwrap().len(),
        4,
        "{caps}"
    );
}

#[tokio::test]
async fn serve_without_resource_metadata_serves_only_the_standard_shapes() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    // Beside the served tree, not in it.
    let elsewhere = tempfile::tempdir().unwrap();
    let config = elsewhere.path().join("rsrc.toml");
    std::fs::write(&config, "resource_metadata = false\n").unwrap();
    let config = config.to_str().unwrap();
    // The flag and the configuration key.
    for args in [
        vec!["serve", "--no-resource-metadata", root],
        vec!["serve", "--config", config, root],
    ] {
        let (_child, mut peer) = spawn_stdio(&args);
        for v in ProtocolVersion::ALL {
            let caps = if v.is_modern() {
                peer.speak(v);
                let discover = peer.modern("server/discover", json!({})).await;
                let instructions = discover["result"]["instructions"].as_str().unwrap();
                assert!(
                    !instructions.contains("resources/metadata"),
                    "{instructions}"
                );
                discover["result"]["capabilities"].clone()
            } else {
                let (_other, mut legacy) = spawn_stdio(&args);
                legacy.initialize(v).await["capabilities"].clone()
            };
            assert!(caps.get("extensions").is_none(), "{args:?} {v}: {caps}");
            assert!(caps.get("experimental").is_none(), "{args:?} {v}: {caps}");
        }
        let meta = peer
            .modern("resources/metadata", json!({"uri": "file:///README.md"}))
            .await;
        assert_eq!(meta["error"]["code"], -32601, "{args:?}: {meta}");
        let all = peer.modern("resources/list", json!({})).await;
        let scoped = peer
            .modern("resources/list", json!({"uri": "file:///docs"}))
            .await;
        assert_eq!(
            all["result"]["resources"], scoped["result"]["resources"],
            "{args:?}"
        );
        let resources = all["result"]["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 3, "{all}");
        for r in resources {
            assert!(
                r.get("resourceType").is_none() && r.get("capabilities").is_none(),
                "{r}"
            );
        }
        let read = peer
            .modern("resources/read", json!({"uri": "file:///docs/guide.md"}))
            .await;
        let contents = read["result"]["contents"][0].as_object().unwrap();
        let mut members: Vec<&str> = contents.keys().map(String::as_str).collect();
        members.sort_unstable();
        assert_eq!(members, ["mimeType", "text", "uri"], "{args:?}: {read}");
    }
}

#[tokio::test]
async fn print_config_shows_the_switch_from_the_flag_or_the_file() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let printed = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
            .args(["serve", "--print-config"])
            .args(args)
            .arg(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: toml::Value = toml::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
        v["resource_metadata"].as_bool()
    };
    assert_eq!(printed(&[]), Some(true));
    assert_eq!(printed(&["--no-resource-metadata"]), Some(false));
    let on = dir.path().join("on.toml");
    std::fs::write(&on, "resource_metadata = true\n").unwrap();
    // The flag wins over the file.
    assert_eq!(
        printed(&["--config", on.to_str().unwrap(), "--no-resource-metadata"]),
        Some(false)
    );
}

#[tokio::test]
async fn stat_asks_resources_metadata_only_where_the_extension_is_declared() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let uri = "file:///docs/guide.md";
    let (with, warned) = ok(&inspect(&["stat", "--json", uri], &[root]).await);
    assert!(warned.is_empty(), "{warned}");
    let with: Value = serde_json::from_str(&with).unwrap();
    assert_eq!(with["resourceType"], "document", "{with}");
    for era in ["2026-07-28", "2025-11-25", "2025-06-18"] {
        let o = inspect(
            &["stat", "--json", "--era", era, uri],
            &["--no-resource-metadata", root],
        )
        .await;
        let (without, warned) = ok(&o);
        assert!(
            warned.contains(ID) && warned.contains("listing"),
            "{era}: {warned}"
        );
        let without: Value = serde_json::from_str(&without).unwrap();
        assert_eq!(without["uri"], uri, "{era}");
        assert_eq!(without["size"], 9, "{era}");
        assert!(without.get("resourceType").is_none(), "{era}: {without}");
    }
    // A URI the server does not serve is the server's error (exit 1).
    let o = inspect(
        &["stat", "file:///nope.md"],
        &["--no-resource-metadata", root],
    )
    .await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[tokio::test]
async fn ls_of_a_collection_does_without_scoped_listings() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let uris = |o: &Output| -> Vec<String> {
        let (out, _) = ok(o);
        let items: Vec<Value> = serde_json::from_str(&out).unwrap();
        items
            .iter()
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    let args = ["ls", "--json", "--uri", "file:///docs"];
    // Declared: the collection's children, a directory among them.
    let scoped = inspect(&args, &[root]).await;
    assert_eq!(
        uris(&scoped),
        ["file:///docs/deep", "file:///docs/guide.md"],
        "{}",
        String::from_utf8_lossy(&scoped.stderr)
    );
    // Not declared: what the whole listing holds below the URI, and a warning.
    let filtered = inspect(&args, &["--no-resource-metadata", root]).await;
    assert_eq!(
        uris(&filtered),
        ["file:///docs/deep/notes.txt", "file:///docs/guide.md"]
    );
    let warned = String::from_utf8_lossy(&filtered.stderr);
    assert!(
        warned.contains(ID) && warned.contains("below file:///docs"),
        "{warned}"
    );
    // A tree is the listing arranged by URI, without asking for children.
    let o = inspect(&["ls", "--tree"], &["--no-resource-metadata", root]).await;
    let (tree, _) = ok(&o);
    assert!(
        tree.contains("notes.txt") && tree.contains("guide.md"),
        "{tree}"
    );
    assert!(!tree.contains("cannot list"), "{tree}");
}
