//! Large reads by the filesystem and git providers wait for room in the server's budget
//! of content in flight, and go on once there is room; small reads never wait.
#![cfg(feature = "git")]

mod common;
#[path = "common/gitrepo.rs"]
mod gitrepo;

use std::time::Duration;

use rsrc::Server;
use rsrc_providers::fs::{FsConfig, FsProvider};
use rsrc_providers::git::{GitConfig, GitProvider};
use serde_json::json;

use common::{peer_for, read, server_at, server_for, write};
use gitrepo::{Fixture, Item};

const BIG: usize = 512 * 1024;

/// While the whole budget is held elsewhere, `small` is served and `big` waits; once it
/// is given back, `big` is served.
async fn big_waits_for_the_budget_and_small_does_not(server: Server, big: &str, small: &str) {
    let mut peer = peer_for(&server).await;
    let everything = server.budget().reserve(u64::MAX).await;
    assert_eq!(server.budget().available(), 0);
    peer.send(
        json!({"jsonrpc": "2.0", "id": "big", "method": "resources/read",
        "params": {"uri": big}}),
    )
    .await;
    peer.expect_silence(Duration::from_millis(300)).await;
    let small_read = read(&mut peer, small).await;
    assert!(
        small_read["result"]["contents"][0]["text"].is_string(),
        "{small_read}"
    );
    drop(everything);
    let big_read = peer.recv().await;
    assert_eq!(big_read["id"], "big");
    let text = big_read["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), BIG);
    assert_eq!(
        server.budget().available(),
        server.budget().limit(),
        "all given back"
    );
}

#[tokio::test]
async fn a_large_file_is_read_once_the_budget_has_room() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", "b".repeat(BIG));
    write(dir.path(), "small.txt", "s");
    let provider = FsProvider::single(dir.path(), FsConfig::default()).unwrap();
    let server = server_for(provider, 1000);
    big_waits_for_the_budget_and_small_does_not(server, "file:///big.txt", "file:///small.txt")
        .await;
}

#[tokio::test]
async fn a_large_git_blob_is_inflated_once_the_budget_has_room() {
    let f = Fixture::new();
    let big = "g".repeat(BIG);
    f.commit(
        "main",
        "files",
        &[
            Item::File("big.txt", big.as_bytes()),
            Item::File("small.txt", b"s"),
        ],
    );
    let config = GitConfig {
        poll_interval: None,
        ..GitConfig::default()
    };
    let provider = GitProvider::open(f.path(), config).unwrap();
    let prefix = provider.prefix().to_owned();
    let server = server_at(&prefix, provider, 1000);
    big_waits_for_the_budget_and_small_does_not(
        server,
        &format!("{prefix}main/big.txt"),
        &format!("{prefix}main/small.txt"),
    )
    .await;
}
