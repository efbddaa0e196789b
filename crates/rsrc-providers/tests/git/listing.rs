//! Listing a repository: its refs, a ref's tree in name order, pages, several
//! repositories side by side.
//!
//! Invariant: every file of a tree is listed once, in name order, across pages.

use super::*;

#[tokio::test]
async fn the_repository_lists_its_refs() {
    let (f, first, second) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let refs = list(&mut peer, "git:///").await;
    assert_eq!(
        uris(&refs),
        [
            "git:///HEAD",
            "git:///feature%2Fx",
            "git:///main",
            "git:///v1",
            "git:///v1-annotated",
        ]
    );
    let all = resources(&refs);
    let main = &all[2];
    assert_eq!(main["name"], "main");
    assert_eq!(main["resourceType"], "collection");
    assert_eq!(main["capabilities"]["list"], true);
    assert_eq!(main["mimeType"], "inode/directory");
    assert_eq!(main["description"], "second commit");
    assert_eq!(
        main["annotations"]["lastModified"], "2024-01-02T03:05:05Z",
        "the second commit's time"
    );
    assert_eq!(all[1]["name"], "feature/x");
    assert_eq!(
        all[4]["description"], "first",
        "the annotated tag is peeled"
    );
    // The default listing is the refs.
    assert_eq!(walk(&mut peer, json!({})).await, uris(&refs));
    let _ = (first, second);
}

#[tokio::test]
async fn a_branch_lists_its_tree_in_name_order_and_reads_its_files() {
    let (f, _, second) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let root = list(&mut peer, "git:///main").await;
    assert_eq!(
        uris(&root),
        [
            "git:///main/README.md",
            "git:///main/a",
            "git:///main/a-b.txt",
            "git:///main/data",
            "git:///main/escape",
            "git:///main/link-to-readme",
            "git:///main/run.sh",
            "git:///main/src",
        ]
    );
    let entries = resources(&root);
    assert_eq!(entries[0]["resourceType"], "document");
    assert_eq!(entries[0]["size"], 13);
    assert_eq!(entries[0]["mimeType"], "text/markdown");
    assert_eq!(entries[1]["resourceType"], "collection");
    assert_eq!(entries[1]["mimeType"], "inode/directory");
    assert!(entries[0]["annotations"]["lastModified"].is_string());
    // Nested trees.
    let nested = list(&mut peer, "git:///main/src").await;
    assert_eq!(
        uris(&nested),
        ["git:///main/src/lib", "git:///main/src/main.rs"]
    );
    let deeper = list(&mut peer, "git:///main/src/lib/").await;
    assert_eq!(uris(&deeper), ["git:///main/src/lib/mod.rs"]);
    // A file read.
    let readme = read(&mut peer, "git:///main/README.md").await;
    assert_eq!(text_of(&readme), "# Project v2\n");
    let c = &readme["result"]["contents"][0];
    assert_eq!(c["uri"], "git:///main/README.md");
    assert_eq!(c["name"], "README.md");
    assert_eq!(c["mimeType"], "text/markdown");
    assert_eq!(c["size"], 13);
    assert_eq!(c["_meta"][META_KEY]["commit"], second.to_string());
    assert_eq!(c["_meta"][META_KEY]["ref"], "refs/heads/main");
    assert_eq!(c["_meta"][META_KEY]["mode"], "100644");
    let nested = read(&mut peer, "git:///main/src/lib/mod.rs").await;
    assert_eq!(text_of(&nested), "// lib\n");
    let exe = read(&mut peer, "git:///main/run.sh").await;
    assert_eq!(
        exe["result"]["contents"][0]["_meta"][META_KEY]["mode"],
        "100755"
    );
    // Listing a file is refused; a missing path is not found.
    let file = list(&mut peer, "git:///main/README.md").await;
    assert_eq!(file["error"]["code"], -32602);
    let missing = read(&mut peer, "git:///main/nope.txt").await;
    assert!(is_not_found(&missing, "git:///main/nope.txt"), "{missing}");
    let through_file = read(&mut peer, "git:///main/README.md/x").await;
    assert!(is_not_found(&through_file, "git:///main/README.md/x"));
}

#[tokio::test]
async fn children_and_refs_are_paginated() {
    let f = Fixture::new();
    let names: Vec<String> = (0..25).map(|i| format!("many/f{i:02}.txt")).collect();
    let items: Vec<Item<'_>> = names.iter().map(|n| Item::File(n, b"x")).collect();
    let tip = f.commit("main", "many", &items);
    for i in 0..9 {
        f.set_ref(&format!("refs/heads/b{i}"), tip);
    }
    let server = server_with(vec![GitProvider::open(f.path(), quiet()).unwrap()], 4);
    let mut peer = peer_for(&server).await;
    let all = walk(&mut peer, json!({"uri": "git:///main/many"})).await;
    let expected: Vec<String> = (0..25)
        .map(|i| format!("git:///main/many/f{i:02}.txt"))
        .collect();
    assert_eq!(all, expected);
    let refs = walk(&mut peer, json!({"uri": "git:///"})).await;
    assert_eq!(refs.len(), 11, "HEAD, main and b0..b8: {refs:?}");
    assert_eq!(walk(&mut peer, json!({})).await, refs);
}

#[tokio::test]
async fn several_repositories_mount_side_by_side() {
    let (a, ..) = sample();
    let b = Fixture::bare();
    b.commit("trunk", "bare", &[Item::File("b.txt", b"from b")]);
    assert!(GitProvider::open_named("Bad Name", b.path(), quiet()).is_err());
    let pa = GitProvider::open_named("alpha", a.path(), quiet()).unwrap();
    let pb = GitProvider::open_named("beta", b.path(), quiet()).unwrap();
    assert_eq!(pa.prefix(), "git://alpha/");
    assert_eq!(pb.template(), "git://beta/{ref}/{+path}");
    let server = server_with(vec![pa, pb], 1000);
    let mut peer = peer_for(&server).await;
    let ra = read(&mut peer, "git://alpha/main/README.md").await;
    assert_eq!(text_of(&ra), "# Project v2\n");
    let rb = read(&mut peer, "git://beta/trunk/b.txt").await;
    assert_eq!(text_of(&rb), "from b");
    let cross = read(&mut peer, "git://beta/main/README.md").await;
    assert!(is_not_found(&cross, "git://beta/main/README.md"));
    let refs = uris(&list(&mut peer, "git://beta/").await);
    assert!(refs.contains(&"git://beta/trunk".to_owned()), "{refs:?}");
    let _ = PREFIX;
}

#[test]
fn a_path_that_is_not_a_repository_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = GitProvider::open(dir.path(), GitConfig::default()).unwrap_err();
    assert!(
        err.to_string().contains("cannot open the git repository"),
        "{err}"
    );
}
