//! The git provider on real repositories written by the tests with gix (no git command):
//! refs, trees and blobs at branches, tags and commit ids, text/binary detection, bad ref
//! names and traversal (nothing outside the repository is reachable), refs moving and
//! appearing (updates and list changes), completion, metadata, several repositories, and
//! the 2026-07-28 wire. Every server message is validated against the official schema by
//! the test peer.
#![cfg(feature = "git")]

mod common;
#[path = "common/gitrepo.rs"]
mod gitrepo;

use std::time::Duration;

use base64::Engine as _;
use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Server, ServerConfig};
use rsrc_providers::git::{GitConfig, GitProvider, META_KEY, PREFIX};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{is_not_found, list_changes, peer_for, read, updates, walk};
use gitrepo::{FIRST_COMMIT_TIME, Fixture, Item, SECRET};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01";

/// A repository with `main` (two commits), `feature/x`, a lightweight tag `v1` and an
/// annotated tag `v1-annotated` at the first commit. Returns (fixture, first, second).
fn sample() -> (Fixture, gix::ObjectId, gix::ObjectId) {
    let f = Fixture::new();
    let first = f.commit(
        "main",
        "first\n\nwith a body",
        &[
            Item::File("README.md", b"# Project v1\n"),
            Item::File("src/main.rs", b"fn main() {}\n"),
        ],
    );
    let second = f.commit(
        "main",
        "second commit",
        &[
            Item::File("README.md", b"# Project v2\n"),
            Item::File("a-b.txt", b"dash"),
            Item::File("a/b.txt", b"slash"),
            Item::File("src/main.rs", b"fn main() {}\n"),
            Item::File("src/lib/mod.rs", b"// lib\n"),
            Item::Exe("run.sh", b"#!/bin/sh\necho hi\n"),
            Item::File("data/image.png", PNG),
            Item::File("data/blob.bin", &[0u8, 159, 146, 150, 255]),
            Item::File("data/nul.txt", b"text\0with a NUL"),
            Item::Link("link-to-readme", "README.md"),
            Item::Link("escape", "../secret.txt"),
        ],
    );
    f.set_ref("refs/heads/feature/x", first);
    f.set_ref("refs/tags/v1", first);
    f.annotated_tag("v1-annotated", first);
    (f, first, second)
}

fn quiet() -> GitConfig {
    GitConfig {
        poll_interval: None,
        ..GitConfig::default()
    }
}

fn server_with(providers: Vec<GitProvider>, page_size: usize) -> Server {
    let mut b = Server::builder("git-test", "0").config(ServerConfig {
        page_size,
        ..ServerConfig::default()
    });
    for p in providers {
        let prefix = p.prefix().to_owned();
        b = b.mount(prefix, p);
    }
    b.build().unwrap()
}

async fn serve(f: &Fixture, config: GitConfig) -> (Server, Peer) {
    let server = server_with(vec![GitProvider::open(f.path(), config).unwrap()], 1000);
    let peer = peer_for(&server).await;
    (server, peer)
}

fn resources(resp: &Value) -> Vec<Value> {
    resp["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp}"))
        .clone()
}

fn uris(resp: &Value) -> Vec<String> {
    resources(resp)
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

async fn list(peer: &mut Peer, uri: &str) -> Value {
    peer.request("resources/list", json!({"uri": uri})).await
}

fn text_of(resp: &Value) -> &str {
    resp["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {resp}"))
}

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
async fn tags_and_commit_ids_serve_the_tree_they_point_to() {
    let (f, first, second) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    for r in [
        "v1",
        "v1-annotated",
        "feature%2Fx",
        "tags%2Fv1",
        "refs%2Ftags%2Fv1",
    ] {
        let resp = read(&mut peer, &format!("git:///{r}/README.md")).await;
        assert_eq!(text_of(&resp), "# Project v1\n", "{r}");
        let children = list(&mut peer, &format!("git:///{r}")).await;
        assert_eq!(resources(&children).len(), 2, "{r}: README.md and src");
    }
    let by_id = read(&mut peer, &format!("git:///{first}/README.md")).await;
    assert_eq!(text_of(&by_id), "# Project v1\n");
    assert_eq!(
        by_id["result"]["contents"][0]["_meta"][META_KEY]["commit"],
        first.to_string()
    );
    let by_id = read(&mut peer, &format!("git:///{second}/src/main.rs")).await;
    assert_eq!(text_of(&by_id), "fn main() {}\n");
    let children = list(&mut peer, &format!("git:///{first}/src")).await;
    assert_eq!(uris(&children), [format!("git:///{first}/src/main.rs")]);
    // HEAD is the checked-out branch.
    let head = read(&mut peer, "git:///HEAD/README.md").await;
    assert_eq!(text_of(&head), "# Project v2\n");
    // An abbreviated id, an uppercase id or an id that is not a commit name nothing.
    let short = &first.to_string()[..12];
    let upper = first.to_string().to_uppercase();
    let blob = f.blob(b"# Project v1\n");
    for bad in [short.to_owned(), upper, blob.to_string()] {
        let uri = format!("git:///{bad}/README.md");
        let resp = read(&mut peer, &uri).await;
        assert!(is_not_found(&resp, &uri), "{resp}");
    }
}

#[tokio::test]
async fn a_ref_name_with_a_slash_is_one_encoded_segment() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let ok = read(&mut peer, "git:///feature%2Fx/src/main.rs").await;
    assert_eq!(text_of(&ok), "fn main() {}\n");
    // Unencoded, `feature` would be the ref and `x/src/main.rs` the path.
    let split = read(&mut peer, "git:///feature/x/src/main.rs").await;
    assert!(is_not_found(&split, "git:///feature/x/src/main.rs"));
}

#[tokio::test]
async fn a_tag_shadows_a_branch_of_the_same_name_as_in_git_and_both_stay_reachable() {
    let (f, first, second) = sample();
    f.set_ref("refs/tags/main", first);
    let (_s, mut peer) = serve(&f, quiet()).await;
    let refs = uris(&list(&mut peer, "git:///").await);
    assert!(refs.contains(&"git:///heads%2Fmain".to_owned()), "{refs:?}");
    assert!(refs.contains(&"git:///main".to_owned()), "{refs:?}");
    let tag = read(&mut peer, "git:///main/README.md").await;
    assert_eq!(text_of(&tag), "# Project v1\n", "the tag");
    let branch = read(&mut peer, "git:///heads%2Fmain/README.md").await;
    assert_eq!(text_of(&branch), "# Project v2\n", "the branch");
    assert_eq!(
        branch["result"]["contents"][0]["_meta"][META_KEY]["commit"],
        second.to_string()
    );
}

#[tokio::test]
async fn text_is_text_and_everything_else_is_a_blob() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let png = read(&mut peer, "git:///main/data/image.png").await;
    let c = &png["result"]["contents"][0];
    assert!(c.get("text").is_none());
    assert_eq!(c["mimeType"], "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(c["blob"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, PNG);
    let bin = read(&mut peer, "git:///main/data/blob.bin").await;
    let c = &bin["result"]["contents"][0];
    assert_eq!(c["mimeType"], "application/octet-stream");
    assert!(c["blob"].is_string());
    let nul = read(&mut peer, "git:///main/data/nul.txt").await;
    assert!(
        nul["result"]["contents"][0]["blob"].is_string(),
        "a NUL is binary"
    );
    // A symbolic link is a document holding its target; it is not followed.
    let link = read(&mut peer, "git:///main/link-to-readme").await;
    assert_eq!(text_of(&link), "README.md");
    assert_eq!(link["result"]["contents"][0]["mimeType"], "inode/symlink");
    assert_eq!(
        link["result"]["contents"][0]["_meta"][META_KEY]["mode"],
        "120000"
    );
    let escape = read(&mut peer, "git:///main/escape").await;
    assert_eq!(
        text_of(&escape),
        "../secret.txt",
        "the target, never the file"
    );
}

#[tokio::test]
async fn submodules_are_left_out() {
    let f = Fixture::new();
    let inner = f.commit("other", "elsewhere", &[Item::File("x", b"x")]);
    f.commit(
        "main",
        "with a submodule",
        &[
            Item::File("a.txt", b"a"),
            Item::Submodule("vendor/lib", inner),
        ],
    );
    let (_s, mut peer) = serve(&f, quiet()).await;
    let vendor = list(&mut peer, "git:///main/vendor").await;
    assert_eq!(uris(&vendor), Vec::<String>::new());
    let sub = read(&mut peer, "git:///main/vendor/lib").await;
    assert!(is_not_found(&sub, "git:///main/vendor/lib"));
}

/// Every way a ref name could be read as an option, a revision expression or a path.
const BAD_REFS: &[&str] = &[
    "--output=x",
    "--output%3Dx",
    "-c",
    "-",
    "..%2Fx",
    "..",
    "HEAD~1",
    "HEAD%7E1",
    "main%5E",
    "main%5E%7B%7D",
    "main%3Asecret.txt",
    "main:secret.txt",
    "%3A%2Fsecret",
    "%40%7B-1%7D",
    "main%40%7B1%7D",
    "%40",
    "refs%2F..%2Fx",
    "refs%2Fheads%2F..%2F..%2Fconfig",
    "main%00",
    "ma%00in",
    "main%0A",
    "%2E%2E%2F%2E%2E%2Fsecret.txt",
    "%2Fetc%2Fpasswd",
    "config",
    "refs%2Fremotes%2Forigin%2Fmain",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "COMMIT_EDITMSG",
    "objects",
    ".git",
    "main.lock",
    "main%2F",
    "~",
    "*",
    "main%5B0%5D",
];

#[tokio::test]
async fn bad_ref_names_are_not_found_and_nothing_outside_the_repository_is_readable() {
    let (f, ..) = sample();
    // Things that exist on disk but not as served refs.
    std::fs::write(f.path().join("uncommitted.txt"), "work tree only").unwrap();
    std::fs::write(f.path().join(".git/ORIG_HEAD"), "0".repeat(40)).unwrap();
    std::fs::write(f.path().join(".git/COMMIT_EDITMSG"), "not a ref\n").unwrap();
    std::fs::write(
        f.path().join(".git/FETCH_HEAD"),
        format!("{}\t\tbranch 'main' of elsewhere\n", "1".repeat(40)),
    )
    .unwrap();
    let (_s, mut peer) = serve(&f, quiet()).await;
    for bad in BAD_REFS {
        for uri in [
            format!("git:///{bad}"),
            format!("git:///{bad}/README.md"),
            format!("git:///{bad}/secret.txt"),
        ] {
            let resp = read(&mut peer, &uri).await;
            assert!(
                is_not_found(&resp, &uri),
                "{uri}: must answer like a missing resource: {resp}"
            );
            assert!(!resp.to_string().contains(SECRET));
            let listed = list(&mut peer, &uri).await;
            assert!(is_not_found(&listed, &uri), "{uri}: {listed}");
        }
    }
}

#[tokio::test]
async fn path_traversal_is_not_found() {
    let (f, ..) = sample();
    std::fs::write(f.path().join("uncommitted.txt"), "work tree only").unwrap();
    let (_s, mut peer) = serve(&f, quiet()).await;
    for path in [
        "..",
        "../secret.txt",
        "../../secret.txt",
        "%2E%2E/secret.txt",
        "src/..",
        "src/../README.md",
        "src/%2E%2E/README.md",
        "src%2F..%2F..%2Fsecret.txt",
        "%2F..%2Fsecret.txt",
        "a%2Fb.txt",
        ".",
        "./README.md",
        "src//main.rs",
        "README.md%00",
        ".git/config",
        ".git",
        "uncommitted.txt",
        "escape/x",
        "link-to-readme/x",
    ] {
        let uri = format!("git:///main/{path}");
        let resp = read(&mut peer, &uri).await;
        assert!(is_not_found(&resp, &uri), "{uri}: {resp}");
        assert!(!resp.to_string().contains(SECRET));
        assert!(!resp.to_string().contains("work tree only"));
    }
}

#[tokio::test]
async fn blobs_over_the_cap_are_refused_and_trees_read_within_their_budget() {
    let (f, ..) = sample();
    let small = GitConfig {
        max_blob: 8,
        poll_interval: None,
        ..GitConfig::default()
    };
    let (_s, mut peer) = serve(&f, small).await;
    let big = read(&mut peer, "git:///main/README.md").await;
    assert_ne!(
        big["error"]["code"], -32002,
        "not a missing resource: {big}"
    );
    assert!(big.get("error").is_some());
    let ok = read(&mut peer, "git:///main/a-b.txt").await;
    assert_eq!(text_of(&ok), "dash");
    // Reading a tree returns its child documents (whole ones, within the budget).
    let (_s, mut peer) = serve(&f, quiet()).await;
    let tree = read(&mut peer, "git:///main/a").await;
    let contents = tree["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0]["uri"], "git:///main/a/b.txt");
    assert_eq!(contents[0]["text"], "slash");
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
async fn refs_and_paths_complete() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    let templates = peer.request("resources/templates/list", json!({})).await;
    let t = &templates["result"]["resourceTemplates"][0];
    assert_eq!(t["uriTemplate"], "git:///{ref}/{+path}");
    let complete = |arg: &str, value: &str, context: Value| {
        json!({"ref": {"type": "ref/resource", "uri": "git:///{ref}/{+path}"},
               "argument": {"name": arg, "value": value},
               "context": {"arguments": context}})
    };
    let values = |resp: &Value| resp["result"]["completion"]["values"].clone();
    let r = peer
        .request("completion/complete", complete("ref", "", json!({})))
        .await;
    assert_eq!(
        values(&r),
        json!(["HEAD", "feature/x", "main", "v1", "v1-annotated"])
    );
    let r = peer
        .request("completion/complete", complete("ref", "v", json!({})))
        .await;
    assert_eq!(values(&r), json!(["v1", "v1-annotated"]));
    let r = peer
        .request(
            "completion/complete",
            complete("path", "", json!({"ref": "main"})),
        )
        .await;
    assert_eq!(
        values(&r),
        json!([
            "README.md",
            "a/",
            "a-b.txt",
            "data/",
            "escape",
            "link-to-readme",
            "run.sh",
            "src/"
        ])
    );
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/", json!({"ref": "main"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/lib/", "src/main.rs"]));
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/m", json!({"ref": "feature/x"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/main.rs"]));
    // At the tag, src/lib does not exist yet.
    let r = peer
        .request(
            "completion/complete",
            complete("path", "src/", json!({"ref": "v1"})),
        )
        .await;
    assert_eq!(values(&r), json!(["src/main.rs"]));
    // Without a ref in the context, HEAD.
    let r = peer
        .request("completion/complete", complete("path", "d", json!({})))
        .await;
    assert_eq!(values(&r), json!(["data/"]));
    for (ctx, value) in [("--output=x", ""), ("main", "../"), ("HEAD~1", "")] {
        let r = peer
            .request(
                "completion/complete",
                complete("path", value, json!({"ref": ctx})),
            )
            .await;
        assert_eq!(values(&r), json!([]), "{ctx} {value}");
    }
}

async fn modern_peer(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    peer.speak(ProtocolVersion::V2026_07_28);
    peer
}

#[tokio::test]
async fn metadata_on_the_2026_wire_is_full_and_validated() {
    let (f, first, second) = sample();
    let server = server_with(vec![GitProvider::open(f.path(), quiet()).unwrap()], 1000);
    let mut peer = modern_peer(&server).await;
    let meta = peer
        .modern(
            "resources/metadata",
            json!({"uri": "git:///main/src/main.rs"}),
        )
        .await;
    let r = &meta["result"]["resource"];
    assert_eq!(r["uri"], "git:///main/src/main.rs", "{meta}");
    assert_eq!(r["name"], "main.rs");
    assert_eq!(r["mimeType"], "text/x-rust");
    assert_eq!(r["size"], 13);
    assert_eq!(r["resourceType"], "document");
    assert_eq!(r["annotations"]["lastModified"], "2024-01-02T03:05:05Z");
    assert_eq!(r["_meta"][META_KEY]["commit"], second.to_string());
    assert_eq!(r["_meta"][META_KEY]["mode"], "100644");
    assert!(r["_meta"][META_KEY]["object"].as_str().unwrap().len() == 40);
    let branch = peer
        .modern("resources/metadata", json!({"uri": "git:///feature%2Fx"}))
        .await;
    let r = &branch["result"]["resource"];
    assert_eq!(r["resourceType"], "collection");
    assert_eq!(r["capabilities"]["list"], true);
    assert_eq!(r["name"], "feature/x");
    assert_eq!(r["description"], "first");
    assert_eq!(r["_meta"][META_KEY]["ref"], "refs/heads/feature/x");
    assert_eq!(r["_meta"][META_KEY]["commit"], first.to_string());
    let repo = peer
        .modern("resources/metadata", json!({"uri": "git:///"}))
        .await;
    assert_eq!(repo["result"]["resource"]["name"], "repo");
    assert_eq!(repo["result"]["resource"]["resourceType"], "collection");
    // A missing resource is a result error of its own kind on this revision.
    let missing = peer
        .modern(
            "resources/read",
            json!({"uri": "git:///--output=x/README.md"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(
        missing["error"]["data"]["uri"],
        "git:///--output=x/README.md"
    );
    // What a commit id names never changes: its reads may be cached.
    let pinned = peer
        .modern(
            "resources/read",
            json!({"uri": format!("git:///{first}/README.md")}),
        )
        .await;
    assert_eq!(pinned["result"]["ttlMs"], 3_600_000, "{pinned}");
    let moving = peer
        .modern("resources/read", json!({"uri": "git:///main/README.md"}))
        .await;
    assert_eq!(moving["result"]["ttlMs"], 0);
    let _ = FIRST_COMMIT_TIME;
}

#[tokio::test]
async fn raw_json_lines_get_schema_valid_answers() {
    let (f, ..) = sample();
    let (_s, mut peer) = serve(&f, quiet()).await;
    peer.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"resources/read\",\"params\":{\"uri\":\"git:///v1/README.md\"}}\n\
          {\"jsonrpc\":\"2.0\",\"id\":\"r2\",\"method\":\"resources/read\",\"params\":{\"uri\":\"git:///-c/README.md\"}}\n\
          {\"jsonrpc\":\"2.0\",\"id\":\"r3\",\"method\":\"resources/list\",\"params\":{\"uri\":\"git:///main/data\"}}\n",
    )
    .await;
    let mut got = std::collections::HashMap::new();
    for _ in 0..3 {
        let m = peer.recv().await;
        got.insert(m["id"].as_str().unwrap().to_owned(), m);
    }
    assert_eq!(got["r1"]["result"]["contents"][0]["text"], "# Project v1\n");
    assert!(is_not_found(&got["r2"], "git:///-c/README.md"));
    assert_eq!(
        uris(&got["r3"]),
        [
            "git:///main/data/blob.bin",
            "git:///main/data/image.png",
            "git:///main/data/nul.txt"
        ]
    );
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

// ---- changes ----

const POLL: Duration = Duration::from_millis(40);
/// Long enough for a few polls.
const SETTLE: Duration = Duration::from_millis(400);

fn polling() -> GitConfig {
    GitConfig {
        poll_interval: Some(POLL),
        ..GitConfig::default()
    }
}

async fn subscribe(peer: &mut Peer, uri: &str) {
    let ok = peer
        .request("resources/subscribe", json!({"uri": uri}))
        .await;
    assert_eq!(ok["result"], json!({}), "{uri}: {ok}");
}

#[tokio::test]
async fn a_moving_ref_updates_the_ref_and_the_subscribed_files_it_changed_only() {
    let f = Fixture::new();
    f.commit(
        "main",
        "one",
        &[
            Item::File("changed.txt", b"before"),
            Item::File("same.txt", b"same"),
            Item::File("dir/inner.txt", b"inner"),
        ],
    );
    let tip = f
        .repo
        .find_reference("refs/heads/main")
        .unwrap()
        .id()
        .detach();
    f.set_ref("refs/tags/v1", tip);
    let (_s, mut peer) = serve(&f, polling()).await;
    let init = peer.request("ping", json!(null)).await;
    assert!(init.get("result").is_some());
    for uri in [
        "git:///main",
        "git:///main/changed.txt",
        "git:///main/same.txt",
        "git:///main/dir",
        "git:///v1/changed.txt",
    ] {
        subscribe(&mut peer, uri).await;
    }
    let unchanged = peer.drain(SETTLE).await;
    assert_eq!(
        updates(&unchanged),
        Vec::<String>::new(),
        "nothing moved yet"
    );
    f.commit(
        "main",
        "two",
        &[
            Item::File("changed.txt", b"after"),
            Item::File("same.txt", b"same"),
            Item::File("dir/inner.txt", b"inner"),
        ],
    );
    let got = peer.drain(SETTLE).await;
    assert_eq!(
        updates(&got),
        ["git:///main", "git:///main/changed.txt"],
        "{got:?}"
    );
    assert_eq!(list_changes(&got), 0, "no ref appeared or vanished");
    let now = read(&mut peer, "git:///main/changed.txt").await;
    assert_eq!(text_of(&now), "after");
    // Deeper changes reach a subscribed tree.
    f.commit(
        "main",
        "three",
        &[
            Item::File("changed.txt", b"after"),
            Item::File("same.txt", b"same"),
            Item::File("dir/inner.txt", b"inner, changed"),
        ],
    );
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["git:///main", "git:///main/dir"], "{got:?}");
}

#[tokio::test]
async fn creating_and_deleting_a_branch_changes_the_list() {
    let (f, first, _) = sample();
    let (_s, mut peer) = serve(&f, polling()).await;
    let caps = peer.request("ping", json!(null)).await;
    assert!(caps.get("result").is_some());
    subscribe(&mut peer, "git:///").await;
    f.set_ref("refs/heads/new", first);
    let got = peer.drain(SETTLE).await;
    assert_eq!(list_changes(&got), 1, "{got:?}");
    assert_eq!(updates(&got), ["git:///"]);
    let refs = uris(&list(&mut peer, "git:///").await);
    assert!(refs.contains(&"git:///new".to_owned()));
    f.delete_ref("refs/heads/new");
    let got = peer.drain(SETTLE).await;
    assert_eq!(list_changes(&got), 1, "{got:?}");
    let refs = uris(&list(&mut peer, "git:///").await);
    assert!(!refs.contains(&"git:///new".to_owned()));
}

#[tokio::test]
async fn a_new_tag_shadowing_a_subscribed_branch_name_updates_it() {
    let (f, first, _) = sample();
    let (_s, mut peer) = serve(&f, polling()).await;
    subscribe(&mut peer, "git:///main/README.md").await;
    subscribe(&mut peer, "git:///heads%2Fmain/README.md").await;
    f.set_ref("refs/tags/main", first);
    let got = peer.drain(SETTLE).await;
    assert_eq!(
        updates(&got),
        ["git:///main/README.md"],
        "`main` now names the tag; `heads/main` still the branch: {got:?}"
    );
}

#[tokio::test]
async fn the_2026_listen_stream_hears_a_ref_move() {
    let f = Fixture::new();
    f.commit("main", "one", &[Item::File("a.txt", b"1")]);
    let server = server_with(vec![GitProvider::open(f.path(), polling()).unwrap()], 1000);
    let mut peer = modern_peer(&server).await;
    peer.send(
        json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {"_meta": rsrc_testkit::modern_meta(), "notifications": {
            "resourcesListChanged": true, "resourceSubscriptions": ["git:///main/a.txt"]}}}),
    )
    .await;
    let ack = peer.recv().await;
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["git:///main/a.txt"])
    );
    f.commit("main", "two", &[Item::File("a.txt", b"2")]);
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["git:///main/a.txt"], "{got:?}");
    for m in &got {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "L"
        );
    }
}

#[tokio::test]
async fn without_polling_no_change_capability_is_declared() {
    let (f, ..) = sample();
    let server = server_with(vec![GitProvider::open(f.path(), quiet()).unwrap()], 1000);
    let (r, w) = tokio::io::split(serve_in_memory(&server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    let resources = &init["capabilities"]["resources"];
    assert!(
        resources.get("subscribe").is_none_or(|v| v == false),
        "{init}"
    );
    assert!(
        resources.get("listChanged").is_none_or(|v| v == false),
        "{init}"
    );
    assert!(init["capabilities"]["completions"].is_object(), "{init}");
}

#[tokio::test]
async fn packed_refs_are_served_and_their_moves_noticed() {
    let (f, first, second) = sample();
    let packed = |target: gix::ObjectId| {
        let text =
            format!("# pack-refs with: peeled fully-peeled sorted \n{target} refs/tags/packed\n");
        std::fs::write(f.path().join(".git/packed-refs"), text).unwrap();
    };
    packed(first);
    let (_s, mut peer) = serve(&f, polling()).await;
    let refs = uris(&list(&mut peer, "git:///").await);
    assert!(refs.contains(&"git:///packed".to_owned()), "{refs:?}");
    let old = read(&mut peer, "git:///packed/README.md").await;
    assert_eq!(text_of(&old), "# Project v1\n");
    subscribe(&mut peer, "git:///packed/README.md").await;
    packed(second);
    // A later write of the file has a later modification time (set, rather than waited
    // for: the file system's clock may be coarse).
    let later = std::time::SystemTime::now() + Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(f.path().join(".git/packed-refs"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let got = peer.drain(SETTLE).await;
    assert_eq!(updates(&got), ["git:///packed/README.md"], "{got:?}");
    let new = read(&mut peer, "git:///packed/README.md").await;
    assert_eq!(text_of(&new), "# Project v2\n");
}

#[tokio::test]
async fn a_ref_name_that_is_a_directory_of_refs_is_not_found() {
    let (f, first, _) = sample();
    f.set_ref("refs/tags/rel/1.0", first);
    f.set_ref("refs/heads/team/a/b", first);
    let (_s, mut peer) = serve(&f, quiet()).await;
    for uri in [
        "git:///rel/README.md",
        "git:///team%2Fa/README.md",
        "git:///team",
    ] {
        let resp = read(&mut peer, uri).await;
        assert!(is_not_found(&resp, uri), "{uri}: {resp}");
    }
    let ok = read(&mut peer, "git:///rel%2F1.0/README.md").await;
    assert_eq!(text_of(&ok), "# Project v1\n");
    let ok = read(&mut peer, "git:///team%2Fa%2Fb/README.md").await;
    assert_eq!(text_of(&ok), "# Project v1\n");
}

#[tokio::test]
async fn names_with_spaces_and_unicode_round_trip_through_their_uris() {
    let f = Fixture::new();
    f.commit(
        "main",
        "names",
        &[
            Item::File("docs/naïve file #1.md", b"# odd"),
            Item::File("docs/100% [x].txt", b"percent"),
        ],
    );
    f.set_ref(
        "refs/heads/release/ü+1",
        f.repo
            .find_reference("refs/heads/main")
            .unwrap()
            .id()
            .detach(),
    );
    let (_s, mut peer) = serve(&f, quiet()).await;
    let listed = uris(&list(&mut peer, "git:///main/docs").await);
    assert_eq!(
        listed,
        [
            "git:///main/docs/100%25%20%5Bx%5D.txt",
            "git:///main/docs/na%C3%AFve%20file%20%231.md"
        ]
    );
    for uri in &listed {
        let resp = read(&mut peer, uri).await;
        assert!(
            resp["result"]["contents"][0]["text"].is_string(),
            "{uri}: {resp}"
        );
    }
    let refs = uris(&list(&mut peer, "git:///").await);
    assert!(
        refs.contains(&"git:///release%2F%C3%BC%2B1".to_owned()),
        "{refs:?}"
    );
    let resp = read(
        &mut peer,
        "git:///release%2F%C3%BC%2B1/docs/100%25%20%5Bx%5D.txt",
    )
    .await;
    assert_eq!(text_of(&resp), "percent");
}
