//! A small tree served by an unwatched directory provider, for the listing tests
//! (`relisting.rs`, `scanning_ahead.rs`), and the URIs of a listed page.
//!
//! Invariant: the tree is `d0`…`d{n-1}`, each holding `f0`…`f3`, and its listings are
//! checked by their stamps (no watcher), so only what a test changes changes them.

use std::sync::Arc;

use super::config::FsConfig;
use super::provider::FsProvider;
use super::state::ServedRoots;

/// `dirs` directories of four files each, served with `config` (its watcher off).
pub(super) fn tree(dirs: usize, config: FsConfig) -> (tempfile::TempDir, Arc<ServedRoots>) {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..dirs {
        let sub = dir.path().join(format!("d{d}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..4 {
            std::fs::write(sub.join(format!("f{f}")), "x").unwrap();
        }
    }
    let config = FsConfig {
        watch: false,
        ..config
    };
    let served = FsProvider::single(dir.path(), config).unwrap().served;
    (dir, served)
}

/// The URIs of a page's entries, in order.
pub(super) fn uris(page: &rsrc::Page) -> Vec<String> {
    page.resources
        .iter()
        .map(|e| {
            let entry: serde_json::Value = serde_json::from_str(e.encoding().unwrap()).unwrap();
            entry["uri"].as_str().unwrap().to_owned()
        })
        .collect()
}
