//! Listings on the watcher's word (`fresh.rs`), with a real watcher: while it vouches
//! for the root, a kept page and a cached listing are answered without a stamp, and a
//! change it reads is dropped from the cache before it is published; in stamp mode every
//! cached directory costs its stamp, as before.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use serde_json::json;

use super::config::FsConfig;
use super::fresh::ListingFreshness;
use super::provider::FsProvider;
use super::state::{PREFIX, ServedRoots};
use crate::kit::blocking::{Signal as _, Stop};

/// `d0`…`d4`, each with `f0`…`f3`: 20 files.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..5 {
        let sub = dir.path().join(format!("d{d}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..4 {
            std::fs::write(sub.join(format!("f{f}")), "x").unwrap();
        }
    }
    dir
}

/// A server of `root` in `mode`, its watcher armed, and what the provider serves. The
/// cache's time to live outlasts any test run: only a change makes a listing stale here.
async fn watched(
    root: &std::path::Path,
    mode: ListingFreshness,
) -> (rsrc::Server, Arc<ServedRoots>) {
    let config = FsConfig {
        listing_cache_ttl: Duration::from_secs(3600),
        listing_freshness: mode,
        ..FsConfig::default()
    };
    let provider = FsProvider::single(root, config).unwrap();
    let served = Arc::clone(&provider.served);
    let server = rsrc::Server::builder("t", "0")
        .mount(PREFIX, provider)
        .build()
        .unwrap();
    served.armed.wait().await;
    assert!(served.armed.is_armed(), "the watcher is armed");
    (server, served)
}

fn stamps(served: &ServedRoots) -> usize {
    served.fresh.stamps.load(Ordering::Relaxed)
}

/// `f` on a thread outside the runtime, so that no directory is scanned ahead
/// (`prefetch.rs`): the stamps counted here are the walk's own.
fn off_tokio<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().unwrap())
}

/// A signal already set: a walk looking at it gives up at once, so only a kept page can
/// be answered.
fn stopped() -> Stop {
    let stop = Stop::default();
    stop.stop();
    stop
}

#[tokio::test]
async fn relisting_on_the_watchers_word_reads_no_stamp_and_stamp_mode_one_per_directory() {
    for (mode, vouched) in [
        (ListingFreshness::Watch, true),
        (ListingFreshness::Stamp, false),
    ] {
        let dir = tree();
        let (_server, served) = watched(dir.path(), mode).await;
        assert_eq!(served.fresh.vouched_for_all(), vouched, "{mode:?}");
        let live = Stop::default();
        let (first, _) = off_tokio(|| served.list_files(None, 6, Some(&live)))
            .unwrap()
            .unwrap();
        // A stamp for each directory scanned: the root, d0 and d1.
        assert_eq!(stamps(&served), 3, "{mode:?}");
        let (again, _) = served
            .list_files(None, 6, Some(&stopped()))
            .unwrap()
            .unwrap();
        assert_eq!(again.resources.len(), first.resources.len());
        let per_page = if vouched { 0 } else { 3 };
        assert_eq!(stamps(&served), 3 + per_page, "{mode:?}: the kept page");
        // A directory's own listing, from the cache.
        served
            .list_children("file:///d0", None, 10, None, &live)
            .unwrap();
        assert_eq!(
            stamps(&served),
            3 + per_page + usize::from(!vouched),
            "{mode:?}: a directory's listing"
        );
    }
}

#[tokio::test]
async fn a_change_is_dropped_from_the_cache_before_it_is_published() {
    let dir = tree();
    let (server, served) = watched(dir.path(), ListingFreshness::Watch).await;
    let (r, w) = tokio::io::split(serve_in_memory(&server, StreamConfig::default()));
    let mut peer = rsrc_testkit::Peer::new(r, w);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let ok = peer
        .request("resources/subscribe", json!({"uri": "file:///d1"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    let live = Stop::default();
    off_tokio(|| served.list_files(None, 6, Some(&live))).unwrap();
    assert!(served.list_files(None, 6, Some(&stopped())).is_ok(), "kept");

    // A change the stamps would not see (a file's size, with a time to live of an hour).
    std::fs::write(dir.path().join("d1/f0"), "longer").unwrap();
    let heard = peer.recv().await;
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert!(
        served.list_files(None, 6, Some(&stopped())).is_err(),
        "the kept page through d1 is gone once the change is published"
    );
    let (page, _) = off_tokio(|| served.list_files(None, 6, Some(&live)))
        .unwrap()
        .unwrap();
    let sizes: Vec<serde_json::Value> = page
        .resources
        .iter()
        .map(|e| serde_json::from_str(e.encoding().unwrap()).unwrap())
        .filter(|e: &serde_json::Value| e["uri"] == "file:///d1/f0")
        .map(|e| e["size"].clone())
        .collect();
    assert_eq!(sizes, [json!(6)]);
    // What the change did not touch is still answered on the watcher's word.
    let before = stamps(&served);
    served
        .list_children("file:///d3", None, 10, None, &live)
        .unwrap();
    served
        .list_children("file:///d3", None, 10, None, &live)
        .unwrap();
    assert_eq!(stamps(&served), before + 1, "d3 scanned once, then trusted");
}
