//! The filesystem provider's behaviour on real temporary trees: listings, collections,
//! metadata, text/binary detection, format alternatives, ignore rules, read caps, several
//! roots, and pagination stability under a concurrent writer.

mod common;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use rsrc_providers::fs::{FilterConfig, FsConfig, FsProvider};
use serde_json::json;

use common::{is_not_found, peer_for, read, serve_dir, serve_dir_with, server_for, walk, write};

fn sample_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "README.md", "# Project\n");
    write(root, "src/main.rs", "fn main() {}\n");
    write(root, "src/lib/mod.rs", "// lib\n");
    write(root, "a-b.txt", "dash");
    write(root, "a/b.txt", "slash");
    write(root, "data/blob.bin", [0u8, 159, 146, 150, 255]);
    write(
        root,
        "data/image.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    );
    write(root, "empty/.keep", "");
    dir
}

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
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    assert_eq!(walk(&mut peer, json!({})).await.len(), 7);
    write(dir.path(), "src/new.rs", "// new");
    std::fs::remove_file(dir.path().join("a-b.txt")).unwrap();
    let uris = walk(&mut peer, json!({})).await;
    assert!(uris.contains(&"file:///src/new.rs".to_owned()));
    assert!(!uris.contains(&"file:///a-b.txt".to_owned()));
    // A change inside a file shows once the cached listing expires (the time-to-live).
    let short = FsConfig {
        listing_cache_ttl: std::time::Duration::from_millis(50),
        ..FsConfig::default()
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
async fn text_is_text_and_everything_else_is_a_blob() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let text = read(&mut peer, "file:///src/main.rs").await;
    let c = &text["result"]["contents"][0];
    assert_eq!(c["text"], "fn main() {}\n");
    assert_eq!(c["mimeType"], "text/x-rust");
    assert_eq!(c["name"], "main.rs");
    assert_eq!(c["size"], 13);
    assert!(c["annotations"]["lastModified"].is_string());
    let blob = read(&mut peer, "file:///data/blob.bin").await;
    let c = &blob["result"]["contents"][0];
    assert!(c.get("text").is_none());
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(c["blob"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, [0u8, 159, 146, 150, 255]);
    assert_eq!(c["mimeType"], "application/octet-stream");
    let png = read(&mut peer, "file:///data/image.png").await;
    assert_eq!(png["result"]["contents"][0]["mimeType"], "image/png");
}

#[tokio::test]
async fn nul_bytes_make_a_file_binary() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "nul.txt", "abc\0def");
    let mut peer = serve_dir(dir.path()).await;
    let resp = read(&mut peer, "file:///nul.txt").await;
    assert!(resp["result"]["contents"][0]["blob"].is_string());
}

#[tokio::test]
async fn unusual_names_round_trip_through_uris() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "with space & 100%.md", "spaces");
    write(dir.path(), "ünïcödé/名前.txt", "unicode");
    write(dir.path(), "q?#[x].txt", "delims");
    let raw = dir.path().join(OsStr::from_bytes(b"latin1-\xe9.txt"));
    std::fs::write(&raw, "not utf-8 name").unwrap();
    let mut peer = serve_dir(dir.path()).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(uris.len(), 4, "{uris:?}");
    for uri in &uris {
        let resp = read(&mut peer, uri).await;
        assert!(
            resp["result"]["contents"][0]["text"].is_string(),
            "{uri}: {resp}"
        );
    }
    assert!(uris.contains(&"file:///latin1-%E9.txt".to_owned()));
    assert!(uris.contains(&"file:///with%20space%20&%20100%25.md".to_owned()));
}

#[tokio::test]
async fn metadata_matches_the_listing_without_content() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let listed = peer
        .request("resources/list", json!({"uri": "file:///"}))
        .await["result"]["resources"][0]
        .clone();
    let meta = peer
        .request("resources/metadata", json!({"uri": listed["uri"]}))
        .await;
    assert_eq!(meta["result"]["resource"], listed);
    let dir_meta = peer
        .request("resources/metadata", json!({"uri": "file:///src"}))
        .await;
    assert_eq!(dir_meta["result"]["resource"]["resourceType"], "collection");
    assert_eq!(
        dir_meta["result"]["resource"]["mimeType"],
        "inode/directory"
    );
}

#[tokio::test]
async fn reading_a_directory_returns_whole_child_documents_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d/a.txt", "a".repeat(40));
    write(dir.path(), "d/b.txt", "b".repeat(100));
    write(dir.path(), "d/c.txt", "c".repeat(40));
    write(dir.path(), "d/sub/deep.txt", "deep");
    let config = FsConfig {
        collection_budget: 90,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), config, 1000).await;
    let resp = read(&mut peer, "file:///d").await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    let uris: Vec<&str> = contents
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    // b.txt does not fit the remaining budget; c.txt does; subdirectories are not inlined.
    assert_eq!(uris, ["file:///d/a.txt", "file:///d/c.txt"]);
    assert!(
        contents
            .iter()
            .all(|c| c["text"].as_str().unwrap().len() == 40),
        "whole files only"
    );
}

#[tokio::test]
async fn ignore_files_hidden_files_and_globs_decide_what_is_exposed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n!keep.log\n");
    write(root, "target/out.bin", "x");
    write(root, "app.log", "x");
    write(root, "keep.log", "kept");
    write(root, "sub/.gitignore", "secret.md\n");
    write(root, "sub/secret.md", "x");
    write(root, "sub/public.md", "x");
    write(root, "sub/.ignore", "!secret.md\n");
    write(root, "other/secret.md", "not ignored here");
    write(root, ".hidden/x.txt", "x");
    write(root, "notes.txt", "x");
    let mut peer = serve_dir(root).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(
        uris,
        [
            "file:///keep.log",
            "file:///notes.txt",
            "file:///other/secret.md",
            "file:///sub/public.md",
            "file:///sub/secret.md"
        ],
        ".ignore re-includes what .gitignore excluded in the same directory"
    );
    // Reads apply the same rules, ancestor by ancestor, the deepest deciding.
    for (uri, exposed) in [
        ("file:///keep.log", true),
        ("file:///sub/secret.md", true),
        ("file:///other/secret.md", true),
        ("file:///app.log", false),
        ("file:///target/out.bin", false),
        ("file:///.hidden/x.txt", false),
    ] {
        let resp = read(&mut peer, uri).await;
        let outcome = if exposed {
            resp["result"]["contents"][0]["uri"] == uri
        } else {
            is_not_found(&resp, uri)
        };
        assert!(outcome, "{uri} (exposed: {exposed}): {resp}");
    }

    let everything = FsConfig {
        filter: FilterConfig {
            include_hidden: true,
            respect_ignore_files: false,
            ..FilterConfig::standard()
        },
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(root, everything, 1000).await;
    let uris = walk(&mut peer, json!({})).await;
    assert!(uris.contains(&"file:///.hidden/x.txt".to_owned()));
    assert!(uris.contains(&"file:///target/out.bin".to_owned()));
    assert!(!uris.iter().any(|u| u.contains("/.git/")));

    let globs = FsConfig {
        filter: FilterConfig {
            include: vec!["**/*.md".into()],
            exclude: vec!["other".into()],
            ..FilterConfig::standard()
        },
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(root, globs, 1000).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(uris, ["file:///sub/public.md", "file:///sub/secret.md"]);
    assert!(is_not_found(
        &read(&mut peer, "file:///notes.txt").await,
        "file:///notes.txt"
    ));
}

#[tokio::test]
async fn the_deepest_ignore_file_decides_and_anchored_patterns_match_from_their_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "*.log\n/sub/private.md\n");
    write(root, "sub/.gitignore", "!debug.log\n/secret.md\n");
    for file in [
        "app.log",
        "sub/debug.log",
        "sub/other.log",
        "sub/private.md",
        "sub/secret.md",
        "sub/deeper/secret.md",
        "sub/deeper/private.md",
    ] {
        write(root, file, "x");
    }
    let exposed = [
        "file:///sub/debug.log",
        "file:///sub/deeper/private.md",
        "file:///sub/deeper/secret.md",
    ];
    let mut peer = serve_dir(root).await;
    assert_eq!(walk(&mut peer, json!({})).await, exposed);
    for file in [
        "app.log",
        "sub/other.log",
        "sub/private.md",
        "sub/secret.md",
    ] {
        let uri = format!("file:///{file}");
        let resp = read(&mut peer, &uri).await;
        assert!(is_not_found(&resp, &uri), "{uri} is ignored: {resp}");
    }
    for uri in exposed {
        let resp = read(&mut peer, uri).await;
        assert_eq!(resp["result"]["contents"][0]["uri"], uri, "{resp}");
    }
}

#[tokio::test]
async fn files_over_the_read_cap_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", "x".repeat(2000));
    write(dir.path(), "small.txt", "x".repeat(10));
    let config = FsConfig {
        max_read: 1000,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), config, 1000).await;
    let resp = read(&mut peer, "file:///big.txt").await;
    assert_eq!(resp["error"]["code"], -32602);
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2000") && message.contains("1000"),
        "{message}"
    );
    assert!(
        !message.contains(dir.path().to_str().unwrap()),
        "no host path: {message}"
    );
    assert!(read(&mut peer, "file:///small.txt").await["result"].is_object());
}

#[tokio::test]
async fn the_cap_holds_for_a_file_that_grows_while_being_read() {
    // Files in /proc report a size of 0 but produce content when read: exactly a file that
    // grows between the size check and the read.
    let config = FsConfig {
        max_read: 64,
        ..FsConfig::default()
    };
    let provider = FsProvider::single("/proc/self", config).unwrap();
    let mut peer = peer_for(&server_for(provider, 1000)).await;
    let resp = read(&mut peer, "file:///status").await;
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    assert!(resp["error"]["message"].as_str().unwrap().contains("64"));
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
    let mut peer = serve_dir_with(dir.path(), FsConfig::default(), 2).await;
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

#[cfg(feature = "pdf")]
#[tokio::test]
async fn a_pdf_also_reads_as_extracted_text_with_its_own_size() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = rsrc_testkit::fixtures::pdf("Quarterly Report");
    write(dir.path(), "report.pdf", &bytes);
    write(
        dir.path(),
        "broken.pdf",
        b"%PDF-1.4 this is not really a pdf",
    );
    let mut peer = serve_dir(dir.path()).await;
    let resp = read(&mut peer, "file:///report.pdf").await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2, "{resp}");
    assert!(
        contents
            .iter()
            .all(|c| c["uri"] == "file:///report.pdf" && c["name"] == "report.pdf")
    );
    assert_eq!(contents[0]["mimeType"], "application/pdf");
    assert_eq!(contents[0]["size"], bytes.len());
    assert!(contents[0]["blob"].is_string());
    assert_eq!(contents[1]["mimeType"], "text/plain");
    let text = contents[1]["text"].as_str().unwrap();
    assert!(text.contains("Quarterly Report"), "{text:?}");
    assert_eq!(contents[1]["size"], text.len());
    // A PDF that cannot be parsed is still served, without the alternative.
    let broken = read(&mut peer, "file:///broken.pdf").await;
    assert_eq!(broken["result"]["contents"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_served_directory_declares_the_completions_it_answers() {
    // The file template completes paths, so a client that honours capabilities must be
    // told it may ask (it once was not).
    let dir = sample_tree();
    let provider = FsProvider::single(dir.path(), FsConfig::default()).unwrap();
    let server = server_for(provider, 1000);
    let (r, w) = tokio::io::split(rsrc::transport::serve_in_memory(
        &server,
        rsrc::transport::StreamConfig::default(),
    ));
    let mut peer = rsrc_testkit::Peer::new(r, w);
    let init = peer
        .initialize(rsrc::protocol::ProtocolVersion::V2025_11_25)
        .await;
    assert_eq!(init["capabilities"]["completions"], json!({}), "{init}");
    peer.speak(rsrc::protocol::ProtocolVersion::V2026_07_28);
    let discover = peer.modern("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["capabilities"]["completions"],
        json!({}),
        "{discover}"
    );
}

#[tokio::test]
async fn the_file_template_is_listed_and_completes_path_segments() {
    let dir = sample_tree();
    write(dir.path(), ".secret/key", "x");
    let mut peer = serve_dir(dir.path()).await;
    let templates = peer.request("resources/templates/list", json!({})).await;
    let t = &templates["result"]["resourceTemplates"][0];
    assert_eq!(t["uriTemplate"], "file:///{+path}");
    assert_eq!(t["capabilities"]["list"], true);
    let complete = |value: &str| json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": value}});
    let resp = peer.request("completion/complete", complete("s")).await;
    assert_eq!(resp["result"]["completion"]["values"], json!(["src/"]));
    let resp = peer.request("completion/complete", complete("src/")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["src/lib/", "src/main.rs"])
    );
    let resp = peer.request("completion/complete", complete("src/m")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["src/main.rs"])
    );
    assert_eq!(resp["result"]["completion"]["total"], 1);
    let resp = peer.request("completion/complete", complete(".")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!([]),
        "hidden entries are not offered"
    );
    let resp = peer.request("completion/complete", complete("../")).await;
    assert_eq!(resp["result"]["completion"]["values"], json!([]));
    // Reading through the template's URI is reading the file.
    assert_eq!(
        read(&mut peer, "file:///src/main.rs").await["result"]["contents"][0]["text"],
        "fn main() {}\n"
    );
}

#[tokio::test]
async fn a_file_dated_before_1970_is_served_without_a_modification_time() {
    use std::time::{Duration, UNIX_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.txt", "from 1960");
    write(dir.path(), "now.txt", "today");
    let old = std::fs::File::options()
        .write(true)
        .open(dir.path().join("old.txt"))
        .unwrap();
    old.set_modified(UNIX_EPOCH - Duration::from_secs(10 * 365 * 86_400))
        .unwrap();
    let mut peer = serve_dir(dir.path()).await;
    for _ in 0..2 {
        let children = peer
            .request("resources/list", json!({"uri": "file:///"}))
            .await;
        let resources = children["result"]["resources"].as_array().unwrap();
        let entry = |uri: &str| resources.iter().find(|r| r["uri"] == uri).unwrap().clone();
        assert!(entry("file:///old.txt")["annotations"]["lastModified"].is_null());
        assert!(entry("file:///now.txt")["annotations"]["lastModified"].is_string());
    }
    let r = read(&mut peer, "file:///old.txt").await;
    assert_eq!(r["result"]["contents"][0]["text"], "from 1960", "{r}");
    let meta = peer
        .request("resources/metadata", json!({"uri": "file:///old.txt"}))
        .await;
    assert!(meta["result"].is_object(), "{meta}");
}
