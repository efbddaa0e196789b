//! Scanning ahead of the recursive listing's walk (`prefetch.rs`): a walk through a cold
//! tree has the next directories scanned into the listing cache meanwhile, every file is
//! still listed once and in order, and a change made after a directory was scanned ahead
//! shows in the next listing.

use std::sync::Arc;

use super::cache::Lookup;
use super::config::FsConfig;
use super::scan;
use super::state::ServedRoots;
use super::test_tree::{tree, uris};
use crate::kit::blocking::Stop;
use crate::kit::rel_path::RelPath;

/// `d0`…`d5`, each with `f0`…`f3`: 24 files, kept for longer than any test run.
fn served() -> (tempfile::TempDir, Arc<ServedRoots>) {
    tree(
        6,
        FsConfig {
            listing_cache_ttl: std::time::Duration::from_secs(3600),
            ..FsConfig::default()
        },
    )
}

fn cached(served: &ServedRoots, dir: &str) -> bool {
    let cache = served.cache.as_ref().unwrap();
    let dir = RelPath::root().join(std::ffi::OsStr::new(dir));
    matches!(
        scan::cached_listing(&served.roots[0].dir, cache, &served.fresh, 0, &dir),
        Ok(Lookup::Hit(_))
    )
}

/// Every page from the start, with `limit` files each.
fn walk(served: &ServedRoots, limit: usize) -> Vec<String> {
    let live = Stop::default();
    let mut all = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let (page, _) = served
            .list_files(after.as_deref(), limit, Some(&live))
            .unwrap()
            .unwrap();
        all.extend(uris(&page));
        match page.next {
            Some(next) => after = Some(next),
            None => return all,
        }
    }
}

fn expected() -> Vec<String> {
    (0..6)
        .flat_map(|d| (0..4).map(move |f| format!("file:///d{d}/f{f}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directories_after_a_page_are_scanned_ahead_and_every_file_listed_once() {
    let (_dir, served) = served();
    let live = Stop::default();
    // The first page reads d0 and half of d1; entering them scans d1…d3 ahead.
    let (first, _) = served.list_files(None, 6, Some(&live)).unwrap().unwrap();
    assert_eq!(uris(&first), expected()[..6]);
    served.prefetch.idle();
    assert!(
        cached(&served, "d2") && cached(&served, "d3"),
        "scanned ahead"
    );
    assert!(
        !cached(&served, "d5"),
        "no further than the next directories"
    );
    assert_eq!(walk(&served, 6), expected());
    served.prefetch.idle();
    assert_eq!(
        walk(&served, 5),
        expected(),
        "through the cache, other pages"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_after_a_directory_was_scanned_ahead_is_listed() {
    let (dir, served) = served();
    let live = Stop::default();
    served.list_files(None, 6, Some(&live)).unwrap().unwrap();
    served.prefetch.idle();
    assert!(cached(&served, "d3"), "scanned ahead");
    std::fs::write(dir.path().join("d3/f9"), "x").unwrap();
    std::fs::remove_file(dir.path().join("d2/f0")).unwrap();
    let mut want = expected();
    want.retain(|u| u != "file:///d2/f0");
    let at = want.iter().position(|u| u == "file:///d3/f3").unwrap();
    want.insert(at + 1, "file:///d3/f9".to_owned());
    assert_eq!(walk(&served, 6), want);
}

#[test]
fn without_a_runtime_nothing_is_scanned_ahead() {
    let (_dir, served) = served();
    let live = Stop::default();
    served.list_files(None, 6, Some(&live)).unwrap().unwrap();
    assert!(!cached(&served, "d3"), "d3 is read by no page yet");
    assert_eq!(walk(&served, 6), expected());
}
