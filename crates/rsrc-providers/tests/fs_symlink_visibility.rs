//! Symlinks inside a root must not lend their visible names to what the visibility rules
//! hide: a hidden file, an ignored one, an excluded one, or `.git` (whose `config` may
//! hold credentials). Every operation is checked: list, read, metadata, completion and
//! subscribe.

mod common;

use std::os::unix::fs::symlink;

use rsrc_providers::fs::{FsConfig, VisibilityConfig};
use serde_json::json;

use common::{is_not_found, read, serve_dir_with, walk, write};

#[tokio::test]
async fn links_to_hidden_ignored_excluded_or_git_targets_do_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".env", "API_KEY=hunter2");
    write(root, ".gitignore", "*.log\n");
    write(root, "x.log", "ignored");
    write(root, "private/secret.md", "excluded");
    write(
        root,
        ".git/config",
        "[remote \"origin\"]\n\turl = https://user:token@example.com/r.git\n",
    );
    write(root, "docs/readme.md", "fine");
    symlink(".env", root.join("notes.txt")).unwrap();
    symlink("x.log", root.join("y.txt")).unwrap();
    symlink("private/secret.md", root.join("z.txt")).unwrap();
    symlink("../.git", root.join("docs/g")).unwrap();
    symlink(".git/config", root.join("cfg.txt")).unwrap();
    symlink("docs/readme.md", root.join("ok.txt")).unwrap();
    let config = FsConfig {
        visibility: VisibilityConfig {
            exclude: vec!["private/**".into()],
            ..VisibilityConfig::standard()
        },
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(root, config, 1000).await;

    let listed = walk(&mut peer, json!({})).await;
    assert_eq!(listed, ["file:///docs/readme.md", "file:///ok.txt"]);
    let children = peer
        .request("resources/list", json!({"uri": "file:///docs"}))
        .await;
    let names: Vec<&str> = children["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["file:///docs/readme.md"], "{children}");

    for uri in [
        "file:///notes.txt",
        "file:///y.txt",
        "file:///z.txt",
        "file:///cfg.txt",
        "file:///docs/g/config",
    ] {
        assert!(is_not_found(&read(&mut peer, uri).await, uri), "read {uri}");
        let meta = peer
            .request("resources/metadata", json!({"uri": uri}))
            .await;
        assert!(is_not_found(&meta, uri), "metadata {uri}: {meta}");
        let sub = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert!(sub.get("result").is_none(), "subscribe {uri}: {sub}");
    }
    let ok = read(&mut peer, "file:///ok.txt").await;
    assert_eq!(ok["result"]["contents"][0]["text"], "fine");

    let complete = |value: &str| json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": value}});
    let all = peer.request("completion/complete", complete("")).await;
    // (`private/` itself matches no exclude glob: only what is inside it does.)
    assert_eq!(
        all["result"]["completion"]["values"],
        json!(["docs/", "ok.txt", "private/"]),
        "{all}"
    );
    let inside = peer.request("completion/complete", complete("docs/")).await;
    assert_eq!(
        inside["result"]["completion"]["values"],
        json!(["docs/readme.md"]),
        "{inside}"
    );
}
