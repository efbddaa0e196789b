//! Listing a tree: every file in path order, what an entry carries, the listing cache,
//! directories, pages, several roots, and pages while files come and go.
//!
//! Invariant: a file that exists throughout a walk is listed exactly once.

use super::*;

#[tokio::test]
async fn the_default_listing_is_every_file_in_path_order() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(
        uris,
        [
            "file:///README.md",
            "file:///a/b.txt",
            "file:///a-b.txt",
            "file:///data/blob.bin",
            "file:///data/image.png",
            "file:///src/lib/mod.rs",
            "file:///src/main.rs",
        ]
    );
}

#[tokio::test]
async fn listed_files_carry_name_size_type_and_in_directories_modification_time() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let find = |resp: &serde_json::Value, uri: &str| {
        resp["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == uri)
            .unwrap()
            .clone()
    };
    let all = peer.request("resources/list", json!({})).await;
    let readme = find(&all, "file:///README.md");
    assert_eq!(readme["name"], "README.md");
    assert_eq!(readme["size"], 10);
    assert_eq!(readme["mimeType"], "text/markdown");
    assert_eq!(readme["resourceType"], "document");
    assert!(
        readme.get("annotations").is_none(),
        "the recursive listing is compact"
    );
    let children = peer
        .request("resources/list", json!({"uri": "file:///"}))
        .await;
    let readme = find(&children, "file:///README.md");
    let modified = readme["annotations"]["lastModified"].as_str().unwrap();
    assert!(
        modified.ends_with('Z') && modified.len() == 20,
        "{modified}"
    );

    let full = FsConfig {
        modified_in_full_listing: true,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), full, 1000).await;
    let all = peer.request("resources/list", json!({})).await;
    assert!(find(&all, "file:///README.md")["annotations"]["lastModified"].is_string());
}

#[tokio::test]
async fn a_cached_directory_shows_new_and_deleted_files_at_once() {
    // At once by its stamp; on the watcher's word (the default), once the watcher has
    // delivered the change (`tests/fs_freshness.rs`).
    let stamped = || FsConfig {
        listing_freshness: ListingFreshness::Stamp,
        ..FsConfig::default()
    };
    let dir = sample_tree();
    let mut peer = serve_dir_with(dir.path(), stamped(), 1000).await;
    assert_eq!(walk(&mut peer, json!({})).await.len(), 7);
    write(dir.path(), "src/new.rs", "// new");
    std::fs::remove_file(dir.path().join("a-b.txt")).unwrap();
    let uris = walk(&mut peer, json!({})).await;
    assert!(uris.contains(&"file:///src/new.rs".to_owned()));
    assert!(!uris.contains(&"file:///a-b.txt".to_owned()));
    // A change inside a file shows once the cached listing expires (the time-to-live).
    let short = FsConfig {
        listing_cache_ttl: std::time::Duration::from_millis(50),
        ..stamped()
    };
    let mut peer = serve_dir_with(dir.path(), short, 1000).await;
    walk(&mut peer, json!({})).await;
    write(dir.path(), "README.md", "# Project, rewritten at length\n");
    tokio::time::sleep(std::time::Duration::from_millis(80)).await;
    let all = peer.request("resources/list", json!({})).await;
    let readme = all["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "file:///README.md")
        .unwrap()
        .clone();
    assert_eq!(readme["size"], 31);
}

#[tokio::test]
async fn listing_a_directory_gives_its_children_and_a_file_is_refused() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let resp = peer
        .request("resources/list", json!({"uri": "file:///src"}))
        .await;
    let children = resp["result"]["resources"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    assert_eq!(children[0]["uri"], "file:///src/lib");
    assert_eq!(children[0]["mimeType"], "inode/directory");
    assert_eq!(children[0]["resourceType"], "collection");
    assert_eq!(children[0]["capabilities"]["list"], true);
    assert_eq!(children[1]["uri"], "file:///src/main.rs");
    let root = walk(&mut peer, json!({"uri": "file:///"})).await;
    assert_eq!(
        root,
        [
            "file:///README.md",
            "file:///a",
            "file:///a-b.txt",
            "file:///data",
            "file:///empty",
            "file:///src"
        ]
    );
    let file = peer
        .request("resources/list", json!({"uri": "file:///README.md"}))
        .await;
    assert_eq!(file["error"]["code"], -32602);
    let missing = peer
        .request("resources/list", json!({"uri": "file:///nope"}))
        .await;
    assert!(is_not_found(&missing, "file:///nope"));
    let empty = peer
        .request("resources/list", json!({"uri": "file:///empty"}))
        .await;
    assert_eq!(empty["result"]["resources"], json!([]));
}

#[tokio::test]
async fn children_are_paginated() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..25 {
        write(dir.path(), &format!("many/f{i:02}.txt"), "x");
    }
    let mut peer = serve_dir_with(dir.path(), FsConfig::default(), 4).await;
    let uris = walk(&mut peer, json!({"uri": "file:///many"})).await;
    assert_eq!(uris.len(), 25);
    assert_eq!(uris.iter().collect::<HashSet<_>>().len(), 25);
    let mut sorted = uris.clone();
    sorted.sort();
    assert_eq!(uris, sorted);
}

#[tokio::test]
async fn several_roots_are_named_collections() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    write(one.path(), "a.txt", "one");
    write(two.path(), "b/c.txt", "two");
    let provider = FsProvider::new(
        vec![
            ("docs".into(), one.path().into()),
            ("code".into(), two.path().into()),
        ],
        FsConfig::default(),
    )
    .unwrap();
    let mut peer = peer_for(&server_for(provider, 1)).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(uris, ["file:///docs/a.txt", "file:///code/b/c.txt"]);
    assert_eq!(
        read(&mut peer, "file:///code/b/c.txt").await["result"]["contents"][0]["text"],
        "two"
    );
    let roots = walk(&mut peer, json!({"uri": "file:///"})).await;
    assert_eq!(roots, ["file:///docs", "file:///code"]);
    let meta = peer
        .request("resources/metadata", json!({"uri": "file:///code"}))
        .await;
    assert_eq!(meta["result"]["resource"]["name"], "code");
    assert!(is_not_found(
        &read(&mut peer, "file:///other/a.txt").await,
        "file:///other/a.txt"
    ));
    assert!(
        FsProvider::new(
            vec![
                ("x".into(), one.path().into()),
                ("x".into(), two.path().into())
            ],
            FsConfig::default()
        )
        .is_err()
    );
}

/// A large directory's metadata is read on several threads: every file still comes once,
/// in order, with its own size.
#[tokio::test]
async fn a_large_directory_lists_every_file_in_order_with_its_own_size() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1500 {
        write(dir.path(), &format!("big/f{i:04}.txt"), "x".repeat(i % 97));
    }
    let mut peer = serve_dir_with(dir.path(), FsConfig::default(), 400).await;
    let mut params = json!({});
    let mut seen = Vec::new();
    loop {
        let resp = peer.request("resources/list", params.clone()).await;
        for r in resp["result"]["resources"].as_array().unwrap() {
            let uri = r["uri"].as_str().unwrap().to_owned();
            let i: usize = uri["file:///big/f".len()..][..4].parse().unwrap();
            assert_eq!(r["size"], json!(i % 97), "{uri}");
            seen.push(i);
        }
        match resp["result"]["nextCursor"].as_str() {
            Some(c) => params = json!({"cursor": c}),
            None => break,
        }
    }
    assert_eq!(seen, (0..1500).collect::<Vec<_>>());
}

/// The next page is walked ahead while the client reads this one (here into `c/`, which
/// no listing has read yet: the first page reads `a/` and, to know more follow, `b/`); a
/// file added or removed after that walk shows on that page. (The second page is asked
/// for once before the change: it waits for the walk ahead, so the walk is over when the
/// change is made, and what it cached is what the page is listed from again.)
#[tokio::test]
async fn the_page_after_a_change_shows_the_change() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "a/f0", "a/f1", "b/f0", "c/f0", "c/f1", "c/f2", "c/f3", "c/f4",
    ] {
        write(dir.path(), &format!("{f}.txt"), f);
    }
    // By the directories' stamps: the change shows at once, with no wait for the watcher.
    let stamped = FsConfig {
        listing_freshness: ListingFreshness::Stamp,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), stamped, 2).await;
    let first = peer.request("resources/list", json!({})).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let before = walk(&mut peer, json!({"cursor": cursor})).await;
    assert!(
        before.contains(&"file:///c/f3.txt".to_owned()),
        "{before:?}"
    );
    write(dir.path(), "c/f0b.txt", "new");
    std::fs::remove_file(dir.path().join("c/f3.txt")).unwrap();
    let rest = walk(&mut peer, json!({"cursor": cursor})).await;
    assert_eq!(
        rest,
        [
            "file:///b/f0.txt",
            "file:///c/f0.txt",
            "file:///c/f0b.txt",
            "file:///c/f1.txt",
            "file:///c/f2.txt",
            "file:///c/f4.txt"
        ]
    );
}

#[test]
fn pagination_is_stable_while_files_are_created_and_deleted() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    // Files that exist for the whole walk.
    let mut stable = HashSet::new();
    for d in 0..20 {
        for f in 0..20 {
            let rel = format!("d{d:02}/s{f:02}.txt");
            write(&root, &rel, "stable");
            stable.insert(format!("file:///{rel}"));
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let root = root.clone();
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // A bounded writer: enough churn to overlap the whole walk, never so much that
            // the walk has to chase it.
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && n < 2000 {
                let d = n % 20;
                let name = root.join(format!("d{d:02}/t{n:06}.txt"));
                let _ = std::fs::write(&name, "transient");
                if n >= 10 {
                    let old = root.join(format!("d{:02}/t{:06}.txt", (n - 10) % 20, n - 10));
                    let _ = std::fs::remove_file(old);
                }
                let _ = std::fs::create_dir_all(root.join(format!("new{:02}", n % 7)));
                let _ = std::fs::write(root.join(format!("new{:02}/x{n}.txt", n % 7)), "x");
                n += 1;
            }
        })
    };
    let uris = runtime.block_on(async {
        let mut peer = serve_dir_with(&root, FsConfig::default(), 7).await;
        walk(&mut peer, json!({})).await
    });
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let seen: HashSet<&String> = uris.iter().collect();
    assert_eq!(seen.len(), uris.len(), "no duplicates");
    for s in &stable {
        assert!(
            seen.contains(s),
            "{s} existed throughout but was not listed"
        );
    }
    let mut sorted = uris.clone();
    sorted.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    assert_eq!(uris, sorted, "path order");
}
