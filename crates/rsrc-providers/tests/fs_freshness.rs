//! Listings on the watcher's word (`ListingFreshness::Watch`, the default): while the
//! watcher vouches for the listings, the next listing after a change shows it once the
//! watcher has delivered it (the published notification is the signal waited on), both
//! the recursive listing's kept pages and a directory's own listing; in stamp mode a
//! change shows at once, as it always did.
//!
//! The listing cache's time to live is set to an hour, so that only the watcher (or a
//! stamp) can make a cached listing stale here, never its age.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::Duration;

use rsrc_providers::fs::{FsConfig, FsProvider, ListingFreshness, ListingTrust};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{peer_for, server_for, walk, write};

/// A server of `root` in `mode`, three resources a page (so the recursive listing is
/// several kept pages), once its watcher is armed.
async fn served(root: &Path, mode: ListingFreshness) -> (rsrc::Server, Peer, ListingTrust) {
    let config = FsConfig {
        listing_cache_ttl: Duration::from_secs(3600),
        listing_freshness: mode,
        ..FsConfig::default()
    };
    let provider = FsProvider::single(root, config).unwrap();
    let trust = provider.listing_trust();
    let server = server_for(provider, 3);
    let mut peer = peer_for(&server).await;
    // A subscription is acknowledged once the watcher is armed.
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let ok = peer.request(method, json!({"uri": "file:///"})).await;
        assert_eq!(ok["result"], json!({}), "{method}");
    }
    assert_eq!(trust.mode(), mode);
    assert_eq!(
        trust.trusted(),
        mode == ListingFreshness::Watch,
        "{mode:?}: listings on the watcher's word once it is armed"
    );
    (server, peer, trust)
}

/// `a/1.txt a/2.txt b/3.txt c/4.txt`, an empty `old/`, and `new/x.txt new/y.txt`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "a/1.txt",
        "a/2.txt",
        "b/3.txt",
        "c/4.txt",
        "new/x.txt",
        "new/y.txt",
    ] {
        write(dir.path(), f, f);
    }
    std::fs::create_dir(dir.path().join("old")).unwrap();
    dir
}

/// Every file of the recursive listing, and of each directory's own listing (what a
/// change may leave stale in the cache), by URI.
async fn listings(peer: &mut Peer, dirs: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let all = walk(peer, json!({})).await;
    let mut each = Vec::new();
    for d in dirs {
        each.push(walk(peer, json!({"uri": format!("file:///{d}")})).await);
    }
    (all, each)
}

/// Makes a change, then waits until the watcher has published a change of the list: by
/// then it has dropped what the change touched from the listing cache.
async fn delivered(peer: &mut Peer, change: impl FnOnce()) {
    // Whatever came with the listings before is not about this change.
    peer.take_notifications();
    change();
    while peer.recv().await["method"] != "notifications/resources/list_changed" {}
}

fn uris(list: &[&str]) -> Vec<String> {
    list.iter().map(|p| format!("file:///{p}")).collect()
}

#[tokio::test]
async fn an_addition_is_listed_once_the_watcher_has_delivered_it() {
    let dir = tree();
    let (_server, mut peer, trust) = served(dir.path(), ListingFreshness::Watch).await;
    let (all, _) = listings(&mut peer, &["a"]).await;
    assert_eq!(all.len(), 6);
    delivered(&mut peer, || write(dir.path(), "a/3.txt", "new")).await;
    let (all, each) = listings(&mut peer, &["a"]).await;
    assert!(all.contains(&"file:///a/3.txt".to_owned()), "{all:?}");
    assert_eq!(each[0], uris(&["a/1.txt", "a/2.txt", "a/3.txt"]));
    assert!(trust.trusted(), "nothing made the listings fall back");
}

#[tokio::test]
async fn a_removal_is_listed_once_the_watcher_has_delivered_it() {
    let dir = tree();
    let (_server, mut peer, _trust) = served(dir.path(), ListingFreshness::Watch).await;
    listings(&mut peer, &["b"]).await;
    delivered(&mut peer, || {
        std::fs::remove_file(dir.path().join("b/3.txt")).unwrap();
    })
    .await;
    let (all, each) = listings(&mut peer, &["b"]).await;
    assert!(!all.contains(&"file:///b/3.txt".to_owned()), "{all:?}");
    assert_eq!(each[0], Vec::<String>::new());
}

#[tokio::test]
async fn a_rename_is_listed_once_the_watcher_has_delivered_it() {
    let dir = tree();
    let (_server, mut peer, _trust) = served(dir.path(), ListingFreshness::Watch).await;
    listings(&mut peer, &["a", "c"]).await;
    delivered(&mut peer, || {
        std::fs::rename(dir.path().join("a/1.txt"), dir.path().join("c/1.txt")).unwrap();
    })
    .await;
    let (all, each) = listings(&mut peer, &["a", "c"]).await;
    assert_eq!(
        all,
        uris(&[
            "a/2.txt",
            "b/3.txt",
            "c/1.txt",
            "c/4.txt",
            "new/x.txt",
            "new/y.txt"
        ])
    );
    assert_eq!(each, [uris(&["a/2.txt"]), uris(&["c/1.txt", "c/4.txt"])]);
}

#[tokio::test]
async fn a_directory_replaced_by_another_is_listed_once_the_watcher_has_delivered_it() {
    let dir = tree();
    let elsewhere = tempfile::tempdir_in(dir.path().parent().unwrap()).unwrap();
    let (_server, mut peer, trust) = served(dir.path(), ListingFreshness::Watch).await;
    // The listings of `old` (empty) and `new` are cached.
    listings(&mut peer, &["old", "new"]).await;
    // `new` renamed over the empty `old`.
    delivered(&mut peer, || {
        std::fs::rename(dir.path().join("new"), dir.path().join("old")).unwrap();
    })
    .await;
    let (all, each) = listings(&mut peer, &["old"]).await;
    assert_eq!(
        all,
        uris(&[
            "a/1.txt",
            "a/2.txt",
            "b/3.txt",
            "c/4.txt",
            "old/x.txt",
            "old/y.txt"
        ])
    );
    assert_eq!(each, [uris(&["old/x.txt", "old/y.txt"])]);
    let listed = peer
        .request("resources/list", json!({"uri": "file:///new"}))
        .await;
    assert!(listed.get("error").is_some(), "{listed}");

    // A directory whose listing is cached, moved out of the root, and another moved in
    // under its name.
    listings(&mut peer, &["a", "b"]).await;
    delivered(&mut peer, || {
        std::fs::rename(dir.path().join("a"), elsewhere.path().join("a")).unwrap();
    })
    .await;
    delivered(&mut peer, || {
        std::fs::rename(dir.path().join("b"), dir.path().join("a")).unwrap();
    })
    .await;
    let (all, each) = listings(&mut peer, &["a"]).await;
    assert_eq!(all, uris(&["a/3.txt", "c/4.txt", "old/x.txt", "old/y.txt"]));
    assert_eq!(each, [uris(&["a/3.txt"])]);
    // Moving directories rebuilt the watches: counted, and vouched for again after.
    assert!(trust.fallbacks(rsrc_providers::fs::FreshnessFallback::Rebuild) >= 3);
    assert!(trust.trusted());
}

#[tokio::test]
async fn a_directory_an_ignore_file_stops_hiding_is_watched_and_listed_once_delivered() {
    let dir = tree();
    write(dir.path(), ".gitignore", "b/\n");
    let (_server, mut peer, trust) = served(dir.path(), ListingFreshness::Watch).await;
    let (all, _) = listings(&mut peer, &[]).await;
    assert!(!all.contains(&"file:///b/3.txt".to_owned()), "{all:?}");
    delivered(&mut peer, || write(dir.path(), ".gitignore", "")).await;
    let (all, each) = listings(&mut peer, &["b"]).await;
    assert!(all.contains(&"file:///b/3.txt".to_owned()), "{all:?}");
    assert_eq!(each, [uris(&["b/3.txt"])]);
    // Its listing is cached now; a change in it is heard, so it was watched.
    delivered(&mut peer, || write(dir.path(), "b/4.txt", "new")).await;
    let (_, each) = listings(&mut peer, &["b"]).await;
    assert_eq!(each, [uris(&["b/3.txt", "b/4.txt"])]);
    assert!(trust.trusted());
}

#[tokio::test]
async fn a_file_that_changes_size_is_listed_with_its_new_size_once_delivered() {
    let dir = tree();
    let (_server, mut peer, _trust) = served(dir.path(), ListingFreshness::Watch).await;
    let ok = peer
        .request("resources/subscribe", json!({"uri": "file:///a/1.txt"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    let size = |page: &Value| {
        page["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == "file:///a/1.txt")
            .map(|r| r["size"].clone())
    };
    let first = peer.request("resources/list", json!({})).await;
    assert_eq!(size(&first), Some(json!(7)));
    // One write (no truncation first), so the first event read already stands for the
    // whole change. Its directory's stamp does not move, and the cached listing is an
    // hour young: only the watcher's drop can make the next listing show the new size.
    peer.take_notifications();
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("a/1.txt"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"a longer text"))
        .unwrap();
    loop {
        let m = peer.recv().await;
        if m["method"] == "notifications/resources/updated" {
            assert_eq!(m["params"]["uri"], "file:///a/1.txt");
            break;
        }
    }
    let again = peer.request("resources/list", json!({})).await;
    assert_eq!(size(&again), Some(json!(13)));
}

#[tokio::test]
async fn in_stamp_mode_a_change_is_listed_at_once_as_before() {
    let dir = tree();
    let (_server, mut peer, trust) = served(dir.path(), ListingFreshness::Stamp).await;
    listings(&mut peer, &["a", "b"]).await;
    write(dir.path(), "a/3.txt", "new");
    std::fs::remove_file(dir.path().join("b/3.txt")).unwrap();
    // No wait for the watcher: each cached directory's stamp is read on every listing.
    let (all, each) = listings(&mut peer, &["a", "b"]).await;
    assert_eq!(
        all,
        uris(&[
            "a/1.txt",
            "a/2.txt",
            "a/3.txt",
            "c/4.txt",
            "new/x.txt",
            "new/y.txt"
        ])
    );
    assert_eq!(each, [uris(&["a/1.txt", "a/2.txt", "a/3.txt"]), vec![]]);
    assert!(!trust.trusted(), "never on the watcher's word");
}
