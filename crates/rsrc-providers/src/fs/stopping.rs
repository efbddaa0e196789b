//! A request that goes away stops the directory walk it started. Each kind of walk runs
//! as a request runs it ([`crate::kit::blocking::run`]), and the request's future is
//! dropped while the walk is in its middle: the walk must give up at its next look at
//! the stop signal, answer a cancellation, and leave no partial directory in the
//! listing cache.

use std::sync::Arc;

use rsrc::protocol::resources::ListFilter;
use rsrc::{Filter, SearchRequest};

use super::config::FsConfig;
use super::provider::FsProvider;
use super::state::ServedRoots;
use crate::kit::blocking::Stop;
use crate::kit::blocking::tests::{drop_at, gave_up};

/// Directories `d00`…`d19` of files `f00`…`f09`, and `big/` with 300 files: 500 files.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..20 {
        let sub = dir.path().join(format!("d{d:02}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..10 {
            std::fs::write(sub.join(format!("f{f:02}")), "x").unwrap();
        }
    }
    let big = dir.path().join("big");
    std::fs::create_dir(&big).unwrap();
    for f in 0..300 {
        std::fs::write(big.join(format!("b{f:03}")), "x").unwrap();
    }
    dir
}

fn served(root: &std::path::Path, cache: bool) -> Arc<ServedRoots> {
    let config = FsConfig {
        listing_cache_entries: if cache { 1 << 16 } else { 0 },
        watch: false,
        ..FsConfig::default()
    };
    FsProvider::single(root, config).unwrap().served
}

#[tokio::test]
async fn the_recursive_listing_gives_up_once_its_request_went_away() {
    let dir = tree();
    for cache in [false, true] {
        let served = served(dir.path(), cache);
        let whole = served
            .list_files(None, 1000, Some(&Stop::default()))
            .unwrap();
        assert_eq!(whole.unwrap().0.resources.len(), 500);
        // A page of 999 reaches past 100 entries: the walk is stopped in its middle,
        // with the listing cache full (second round) or empty. (The page of 1000 is kept
        // whole in the second round, and answered again with no walk.)
        let s = Arc::clone(&served);
        gave_up(drop_at(100, move |stop| s.list_files(None, 999, Some(stop))).await);
    }
}

#[tokio::test]
async fn a_filtered_listing_and_a_search_give_up_once_their_request_went_away() {
    let dir = tree();
    let served = served(dir.path(), false);
    let filter = Filter::new(&ListFilter {
        name_patterns: Some(vec!["*9".to_owned()]),
        uri_patterns: None,
    })
    .unwrap()
    .unwrap();
    let whole = served
        .list_selected(None, 1000, &filter, &Stop::default())
        .unwrap();
    assert_eq!(whole.resources.len(), 20 + 30);
    let s = Arc::clone(&served);
    gave_up(drop_at(100, move |stop| s.list_selected(None, 1000, &filter, stop)).await);

    let words = ["b2".to_owned()];
    let search = SearchRequest::new(&words, None, 1000);
    let found = served.search_files(&search, &Stop::default()).unwrap();
    assert_eq!(found.resources.len(), 100);
    let s = Arc::clone(&served);
    gave_up(
        drop_at(100, move |stop| {
            s.search_files(&SearchRequest::new(&words, None, 1000), stop)
        })
        .await,
    );
}

#[tokio::test]
async fn a_directory_scan_gives_up_between_entries_and_caches_nothing_partial() {
    let dir = tree();
    let served = served(dir.path(), true);
    let big = "file:///big";
    // Stopped in the middle of the scan of `big/` (300 entries): nothing is cached.
    let s = Arc::clone(&served);
    gave_up(drop_at(50, move |stop| s.list_children(big, None, 1000, None, stop)).await);
    let listed = served
        .list_children(big, None, 1000, None, &Stop::default())
        .unwrap();
    assert_eq!(listed.resources.len(), 300, "a partial scan was cached");

    // Completion scans the directory the same way (a cached one costs no scan).
    let served = self::served(dir.path(), false);
    let s = Arc::clone(&served);
    gave_up(drop_at(50, move |stop| s.complete_path(0, "big/b", stop)).await);
    let values = served
        .complete_path(0, "big/b1", &Stop::default())
        .unwrap()
        .values;
    assert_eq!(values.len(), 100);
}
