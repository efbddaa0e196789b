//! Change notifications from real file changes: one update per burst, list changes on
//! create/delete/rename, collections hearing of their children, nothing from hidden,
//! ignored or out-of-root files, subscriptions refused like reads, and 1,000 subscribers.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use rsrc::protocol::ProtocolVersion;
use rsrc_providers::fs::{FsConfig, FsProvider};
use rsrc_testkit::Peer;
use serde_json::json;

use common::{list_changes, peer_for, server_for, updates, write};

/// Long enough for the window (50 ms) and the watcher's start.
const SETTLE: Duration = Duration::from_millis(400);

async fn watched(root: &Path) -> (rsrc::Server, Peer) {
    watched_with(root, FsConfig::default()).await
}

async fn watched_with(root: &Path, config: FsConfig) -> (rsrc::Server, Peer) {
    let server = server_for(FsProvider::single(root, config).unwrap(), 1000);
    let mut peer = peer_for(&server).await;
    // The watcher places its watches on a thread of its own; list changes and silence
    // are observed without a subscription, so one is made (and undone) only for its
    // acknowledgement, which comes once the first watches are placed.
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let ok = peer.request(method, json!({"uri": "file:///"})).await;
        assert_eq!(ok["result"], json!({}), "{method}");
    }
    (server, peer)
}

/// The watcher places its watches on a thread of its own, which takes a while in a tree
/// of thousands of directories; subscriptions made the moment the server is up are
/// acknowledged only once it has, so the writes that follow are all heard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_right_after_a_subscription_is_acknowledged_is_heard() {
    let dir = tempfile::tempdir().unwrap();
    let uris: Vec<String> = (0..3000)
        .map(|i| {
            let rel = format!("d{i:04}/f.txt");
            write(dir.path(), &rel, "0");
            format!("file:///{rel}")
        })
        .collect();
    // No wait for the watcher: the subscriptions start the moment the server is up.
    let server = server_for(
        FsProvider::single(dir.path(), FsConfig::default()).unwrap(),
        1000,
    );
    let mut peer = peer_for(&server).await;
    let sample: Vec<String> = uris.iter().step_by(150).cloned().collect();
    for uri in &sample {
        let ok = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(ok["result"], json!({}));
    }
    for uri in &sample {
        let rel = uri.trim_start_matches("file:///");
        std::fs::write(dir.path().join(rel), "1").unwrap();
    }
    let got = peer.drain(SETTLE).await;
    let mut heard = updates(&got);
    heard.sort();
    assert_eq!(heard, sample, "every subscribed file's change is heard");
}

#[tokio::test]
async fn a_burst_of_writes_gives_one_update() {
    // A window wide enough that a test thread descheduled mid-burst on a loaded machine
    // does not end the burst early: what is tested is the coalescing, not the scheduler.
    const WINDOW: Duration = Duration::from_millis(300);
    const SETTLE: Duration = Duration::from_millis(1500);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "notes/a.md", "0");
    let config = FsConfig {
        watch_window: WINDOW,
        ..FsConfig::default()
    };
    let (_server, mut peer) = watched_with(dir.path(), config).await;
    let caps = peer.request("ping", json!(null)).await;
    assert!(caps.get("result").is_some());
    let ok = peer
        .request("resources/subscribe", json!({"uri": "file:///notes/a.md"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    for i in 0..30 {
        std::fs::write(dir.path().join("notes/a.md"), format!("{i}")).unwrap();
    }
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["file:///notes/a.md"], "{got:?}");
    assert_eq!(list_changes(&got), 0, "a write changes no list");
    // A second burst later is a second update.
    std::fs::write(dir.path().join("notes/a.md"), "again").unwrap();
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["file:///notes/a.md"]);
}

#[tokio::test]
async fn creating_deleting_and_renaming_change_the_list() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "keep.txt", "k");
    let (_server, mut peer) = watched(dir.path()).await;
    let root = dir.path();
    for (what, change) in [
        (
            "create",
            Box::new(|| write(root, "new.txt", "n")) as Box<dyn Fn()>,
        ),
        (
            "rename",
            Box::new(|| std::fs::rename(root.join("new.txt"), root.join("renamed.txt")).unwrap()),
        ),
        (
            "delete",
            Box::new(|| std::fs::remove_file(root.join("renamed.txt")).unwrap()),
        ),
        (
            "mkdir",
            Box::new(|| std::fs::create_dir(root.join("sub")).unwrap()),
        ),
        (
            "file in a new directory",
            Box::new(|| write(root, "sub/deep.txt", "d")),
        ),
    ] {
        change();
        let got = peer.drain(SETTLE).await;
        assert_eq!(list_changes(&got), 1, "{what}: {got:?}");
    }
}

#[tokio::test]
async fn a_subscribed_collection_hears_of_its_direct_children() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "docs/a.md", "a");
    write(dir.path(), "docs/deeper/b.md", "b");
    let (_server, mut peer) = watched(dir.path()).await;
    let ok = peer
        .request("resources/subscribe", json!({"uri": "file:///docs"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    write(dir.path(), "docs/new.md", "n");
    std::fs::write(dir.path().join("docs/a.md"), "changed").unwrap();
    let got = peer.drain(SETTLE).await;
    assert_eq!(
        updates(&got),
        ["file:///docs"],
        "one update for the burst: {got:?}"
    );
    // A grandchild's change is its own directory's, not this one's.
    std::fs::write(dir.path().join("docs/deeper/b.md"), "changed").unwrap();
    let got = peer.drain(SETTLE).await;
    assert!(updates(&got).is_empty(), "{got:?}");
}

#[tokio::test]
async fn hidden_ignored_and_out_of_root_files_make_no_notifications() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "s");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "build/\n*.log\n");
    write(dir.path(), "visible.txt", "v");
    write(dir.path(), "build/out.o", "o");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let (_server, mut peer) = watched(dir.path()).await;
    write(dir.path(), ".hidden", "h");
    write(dir.path(), "app.log", "l");
    write(dir.path(), "build/more.o", "o");
    write(outside.path(), "secret.txt", "changed");
    write(outside.path(), "another.txt", "new");
    let got = peer.drain(SETTLE).await;
    assert!(got.is_empty(), "{got:?}");
    write(dir.path(), "visible.txt", "changed");
    let got = peer.drain(SETTLE).await;
    assert_eq!(list_changes(&got), 0);
}

#[tokio::test]
async fn subscribing_to_a_missing_or_outside_uri_fails_like_a_read() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "s");
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    let (_server, mut peer) = watched(dir.path()).await;
    for uri in [
        "file:///missing.txt",
        "file:///../etc/passwd",
        "file:///link.txt",
        "file:///%2e%2e/x",
    ] {
        let sub = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        let read = peer.request("resources/read", json!({"uri": uri})).await;
        assert!(sub.get("error").is_some(), "{uri}: {sub}");
        assert_eq!(sub["error"]["code"], read["error"]["code"], "{uri}");
    }
}

#[tokio::test]
async fn a_2026_listen_stream_hears_of_list_changes_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    let server = server_for(
        FsProvider::single(dir.path(), FsConfig::default()).unwrap(),
        1000,
    );
    let (r, w) = tokio::io::split(rsrc::transport::serve_in_memory(
        &server,
        rsrc::transport::StreamConfig::default(),
    ));
    let mut peer = Peer::new(r, w);
    peer.speak(ProtocolVersion::V2026_07_28);
    // The acknowledgement comes once the watcher's first watches are placed.
    peer.send(
        json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {"_meta": rsrc_testkit::modern_meta(), "notifications": {
            "resourcesListChanged": true, "resourceSubscriptions": ["file:///a.txt"]}}}),
    )
    .await;
    let ack = peer.recv().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourcesListChanged": true, "resourceSubscriptions": ["file:///a.txt"]})
    );
    std::fs::write(dir.path().join("a.txt"), "changed").unwrap();
    write(dir.path(), "b.txt", "new");
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["file:///a.txt"], "{got:?}");
    assert_eq!(list_changes(&got), 1);
    for m in &got {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "L"
        );
    }
}

/// 1,000 sessions subscribed to one file: each hears of a change exactly once. The time
/// from the write to the last notification is printed (it includes the 50 ms window).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_subscribers_each_get_one_update_per_change() {
    const N: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hot.txt", "0");
    let server = server_for(
        FsProvider::single(dir.path(), FsConfig::default()).unwrap(),
        1000,
    );
    let mut peers = Vec::with_capacity(N);
    for _ in 0..N {
        let mut p = peer_for(&server).await;
        let ok = p
            .request("resources/subscribe", json!({"uri": "file:///hot.txt"}))
            .await;
        assert_eq!(ok["result"], json!({}));
        peers.push(p);
    }
    assert_eq!(server.changes().subscribers("file:///hot.txt"), N);
    for round in 0..2 {
        let start = Instant::now();
        std::fs::write(dir.path().join("hot.txt"), format!("{round}")).unwrap();
        let tasks: Vec<_> = peers
            .drain(..)
            .map(|mut p| {
                tokio::spawn(async move {
                    let n = p.recv().await;
                    let at = start.elapsed();
                    assert_eq!(n["method"], "notifications/resources/updated");
                    assert_eq!(n["params"]["uri"], "file:///hot.txt");
                    (p, at)
                })
            })
            .collect();
        let mut last = Duration::ZERO;
        for t in tasks {
            let (p, at) = t.await.unwrap();
            last = last.max(at);
            peers.push(p);
        }
        eprintln!("round {round}: write → last of {N} notifications: {last:?}");
        for p in &mut peers {
            p.expect_silence(Duration::from_millis(1)).await;
        }
    }
    // Exactly one each: nothing more arrives once the window has passed.
    tokio::time::sleep(SETTLE).await;
    for p in &mut peers {
        p.expect_silence(Duration::from_millis(1)).await;
    }
}
