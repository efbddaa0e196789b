//! Listing a page of the recursive listing again: while the directories its walk read
//! are unchanged, it is answered from the kept page without a walk (`kept.rs`); once one
//! of them changed, it is walked again and shows the change. A cache warmed at the start
//! answers the first listing without a scan, and a listing asked for while it is being
//! warmed waits for it.

use std::sync::Arc;

use super::cache::Lookup;
use super::config::FsConfig;
use super::scan;
use super::state::ServedRoots;
use super::test_tree::{tree, uris};
use crate::kit::blocking::{Signal as _, Stop};
use crate::kit::rel_path::RelPath;

/// `d0`…`d4`, each with `f0`…`f3`: 20 files.
fn served() -> (tempfile::TempDir, Arc<ServedRoots>) {
    // A time to live no test run outlasts: only a change makes a kept page stale here.
    tree(
        5,
        FsConfig {
            listing_cache_ttl: std::time::Duration::from_secs(3600),
            ..FsConfig::default()
        },
    )
}

/// A signal already set: a walk looking at it gives up at once.
fn stopped() -> Stop {
    let stop = Stop::default();
    stop.stop();
    stop
}

#[test]
fn a_page_listed_again_through_an_unchanged_tree_is_answered_without_a_walk() {
    let (_dir, served) = served();
    let live = Stop::default();
    let (first, _) = served.list_files(None, 6, Some(&live)).unwrap().unwrap();
    assert_eq!(uris(&first)[..2], ["file:///d0/f0", "file:///d0/f1"]);
    let next = first.next.clone().unwrap();
    let (second, _) = served
        .list_files(Some(&next), 6, Some(&live))
        .unwrap()
        .unwrap();
    // With a stop signal already set, only a kept page can be answered.
    let (again, walk_ahead) = served
        .list_files(None, 6, Some(&stopped()))
        .unwrap()
        .unwrap();
    assert_eq!(uris(&again), uris(&first));
    assert_eq!(again.next, first.next);
    assert!(!walk_ahead, "nothing was scanned");
    let (again, _) = served
        .list_files(Some(&next), 6, Some(&stopped()))
        .unwrap()
        .unwrap();
    assert_eq!(uris(&again), uris(&second));
    // Another page size is another page, not kept yet.
    assert!(served.list_files(None, 5, Some(&stopped())).is_err());
}

#[test]
fn a_kept_page_whose_directory_changed_is_walked_again_and_shows_the_change() {
    let (dir, served) = served();
    let live = Stop::default();
    served.list_files(None, 6, Some(&live)).unwrap();
    std::fs::remove_file(dir.path().join("d1/f0")).unwrap();
    std::fs::write(dir.path().join("d0/f9"), "new").unwrap();
    assert!(
        served.list_files(None, 6, Some(&stopped())).is_err(),
        "the kept page was answered after its directories changed"
    );
    let (page, _) = served.list_files(None, 6, Some(&live)).unwrap().unwrap();
    assert_eq!(
        uris(&page),
        [
            "file:///d0/f0",
            "file:///d0/f1",
            "file:///d0/f2",
            "file:///d0/f3",
            "file:///d0/f9",
            "file:///d1/f1",
        ]
    );
}

#[test]
fn a_page_is_not_kept_past_the_time_to_live_or_through_a_directory_the_cache_cannot_hold() {
    let expired = FsConfig {
        listing_cache_ttl: std::time::Duration::ZERO,
        ..FsConfig::default()
    };
    // The root's 5 entries are over this budget: its listing is never cached.
    let small = FsConfig {
        listing_cache_entries: 4,
        ..FsConfig::default()
    };
    for (config, kept) in [(expired, true), (small, false)] {
        let (_dir, served) = tree(5, config);
        let (page, _) = served
            .list_files(None, 2, Some(&Stop::default()))
            .unwrap()
            .unwrap();
        assert_eq!(page.resources.len(), 2);
        // A walk through a directory the cache did not take is not even kept.
        assert_eq!(served.kept.cost() > 0, kept);
        assert!(
            served.list_files(None, 2, Some(&stopped())).is_err(),
            "a kept page was answered"
        );
        assert_eq!(served.kept.cost(), 0, "the stale page was dropped");
    }
}

#[test]
fn a_warmed_cache_lists_every_file_without_a_scan_each_entry_encoded_already() {
    let (_dir, served) = served();
    served.warm();
    let cache = served.cache.as_ref().unwrap();
    for d in 0..5 {
        let dir = RelPath::from_position(format!("d{d}").as_bytes()).unwrap();
        let Ok(Lookup::Hit(listing)) =
            scan::cached_listing(&served.roots[0].dir, cache, &served.fresh, 0, &dir)
        else {
            panic!("{dir:?} was not warmed");
        };
        assert!(listing.entries.iter().all(|e| e.listed.get().is_some()));
    }
    // A walk without a stop signal reads the listing cache only: `None` at the first
    // directory it does not hold.
    let (page, walk_ahead) = served.list_files(None, 20, None).unwrap().unwrap();
    assert_eq!(uris(&page).len(), 20);
    assert_eq!(uris(&page)[19], "file:///d4/f3");
    assert!(!walk_ahead, "nothing was scanned");
}

#[tokio::test]
async fn the_recursive_listing_waits_while_the_cache_is_being_warmed() {
    let (_dir, served) = served();
    // The whole tree cached: a listing could be answered at once.
    served.warm();
    served.warmed.send_replace(false);
    let mut listing = Box::pin(served.list_files_ahead(None, 6));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(
        std::future::Future::poll(listing.as_mut(), &mut cx).is_pending(),
        "answered while warming"
    );
    served.warmed.send_replace(true);
    assert_eq!(uris(&listing.await.unwrap())[0], "file:///d0/f0");
}
