//! The jail: no byte outside a root is served, listed, or confirmed to exist. Each class
//! of attack from the issue has its test on a real temporary tree, plus a property test
//! over generated URIs. A refused path must answer exactly like a missing one.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;

use proptest::prelude::*;
use rsrc::Provider;
use rsrc::RequestContext;
use rsrc_providers::fs::{FsConfig, FsProvider};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{is_not_found, read, serve_dir, walk, write};

const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-ROOT";

/// `base/root` is served; `base/root-evil`, `base/outside` and `base` hold secrets.
fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    write(&root, "inside.txt", "inside");
    write(&root, "docs/guide.md", "# guide");
    write(base.path(), "secret.txt", SECRET);
    write(base.path(), "root-evil/secret.txt", SECRET);
    write(base.path(), "outside/secret.txt", SECRET);
    (base, root)
}

fn assert_no_secret(resp: &Value) {
    assert!(!resp.to_string().contains(SECRET), "leaked: {resp}");
}

/// A refusal must look exactly like a miss: same code, same message, the URI as data.
async fn assert_refused(peer: &mut Peer, uri: &str) {
    let resp = read(peer, uri).await;
    assert_no_secret(&resp);
    assert!(is_not_found(&resp, uri), "{uri}: {resp}");
    assert_eq!(resp["error"]["message"], "Resource not found");
    let meta = peer
        .request("resources/metadata", json!({"uri": uri}))
        .await;
    assert!(is_not_found(&meta, uri), "metadata {uri}: {meta}");
}

#[tokio::test]
async fn dot_dot_in_every_spelling_is_refused() {
    let (_base, root) = tree();
    let mut peer = serve_dir(&root).await;
    for uri in [
        "file:///../secret.txt",
        "file:///docs/../../secret.txt",
        "file:///%2e%2e/secret.txt",
        "file:///%2E%2E/secret.txt",
        "file:///.%2e/secret.txt",
        "file:///..%2Fsecret.txt",
        "file:///docs%2F..%2F..%2Fsecret.txt",
        "file:///../root-evil/secret.txt",
        "file:///../outside/secret.txt",
        "file:///./inside.txt",
    ] {
        assert_refused(&mut peer, uri).await;
    }
}

#[tokio::test]
async fn double_encoding_stays_literal() {
    let (_base, root) = tree();
    write(
        &root,
        "%2e%2e/literal.txt",
        "a directory really named %2e%2e",
    );
    let mut peer = serve_dir(&root).await;
    let resp = read(&mut peer, "file:///%252e%252e/literal.txt").await;
    assert_eq!(
        resp["result"]["contents"][0]["text"],
        "a directory really named %2e%2e"
    );
    assert_refused(&mut peer, "file:///%252e%252e/..%252Fsecret.txt").await;
}

#[tokio::test]
async fn symlinks_out_of_the_root_direct_and_chained_are_refused() {
    let (base, root) = tree();
    symlink(base.path().join("secret.txt"), root.join("direct")).unwrap();
    symlink(base.path().join("outside"), root.join("outdir")).unwrap();
    symlink("../secret.txt", root.join("relative")).unwrap();
    // A chain that starts inside and ends outside.
    symlink("hop2", root.join("hop1")).unwrap();
    symlink("docs/../../secret.txt", root.join("hop2")).unwrap();
    symlink("/etc/passwd", root.join("absolute")).unwrap();
    let mut peer = serve_dir(&root).await;
    for uri in [
        "file:///direct",
        "file:///outdir/secret.txt",
        "file:///relative",
        "file:///hop1",
        "file:///hop2",
        "file:///absolute",
    ] {
        assert_refused(&mut peer, uri).await;
    }
    let listing = walk(&mut peer, json!({})).await;
    assert_eq!(
        listing,
        ["file:///docs/guide.md", "file:///inside.txt"],
        "escaping links are not listed"
    );
    let children = peer
        .request("resources/list", json!({"uri": "file:///outdir"}))
        .await;
    assert!(is_not_found(&children, "file:///outdir"), "{children}");
}

#[tokio::test]
async fn symlinks_inside_the_root_are_followed() {
    let (_base, root) = tree();
    symlink("inside.txt", root.join("alias.txt")).unwrap();
    symlink("docs", root.join("docs-link")).unwrap();
    let mut peer = serve_dir(&root).await;
    let resp = read(&mut peer, "file:///alias.txt").await;
    assert_eq!(resp["result"]["contents"][0]["text"], "inside");
    let resp = read(&mut peer, "file:///docs-link/guide.md").await;
    assert_eq!(resp["result"]["contents"][0]["text"], "# guide");
    // The recursive listing lists the linked file but does not descend into the linked
    // directory (cycles), while listing that directory's children works.
    let listing = walk(&mut peer, json!({})).await;
    assert!(listing.contains(&"file:///alias.txt".to_owned()));
    assert!(!listing.iter().any(|u| u.starts_with("file:///docs-link/")));
    let children = walk(&mut peer, json!({"uri": "file:///docs-link"})).await;
    assert_eq!(children, ["file:///docs-link/guide.md"]);
}

#[tokio::test]
async fn symlink_loops_neither_hang_nor_leak() {
    let (_base, root) = tree();
    symlink("loop-b", root.join("loop-a")).unwrap();
    symlink("loop-a", root.join("loop-b")).unwrap();
    symlink(".", root.join("self")).unwrap();
    let mut peer = serve_dir(&root).await;
    assert_refused(&mut peer, "file:///loop-a").await;
    let deep = format!("file:///{}inside.txt", "self/".repeat(50));
    let resp = read(&mut peer, &deep).await;
    assert!(
        resp.get("result").is_some() || is_not_found(&resp, &deep),
        "{resp}"
    );
    let listing = walk(&mut peer, json!({})).await;
    assert_eq!(listing.len(), 2, "{listing:?}");
}

#[tokio::test]
async fn prefix_sibling_directories_are_outside() {
    let (base, root) = tree();
    // `root-evil` shares the root's name as a prefix.
    symlink(
        base.path().join("root-evil/secret.txt"),
        root.join("sibling"),
    )
    .unwrap();
    let mut peer = serve_dir(&root).await;
    assert_refused(&mut peer, "file:///sibling").await;
    assert_refused(&mut peer, "file:///..%2froot-evil%2fsecret.txt").await;
}

#[tokio::test]
async fn nul_bytes_backslashes_and_authority_tricks_are_refused() {
    let (_base, root) = tree();
    let mut peer = serve_dir(&root).await;
    for uri in [
        "file:///inside.txt%00.md",
        "file:///%00",
        "file:///..%5c..%5csecret.txt",
        "file:///%5c..%5csecret.txt",
        "file:////etc/passwd",
        "file:///%2Fetc%2Fpasswd",
        "file://localhost/etc/passwd",
        "file://host/inside.txt",
        "file:/etc/passwd",
        "file:///inside.txt?x=1",
        "file:///inside.txt#frag",
    ] {
        assert_refused(&mut peer, uri).await;
    }
    // A raw backslash is not a URI character at all: refused before the provider.
    let resp = read(&mut peer, "file:///..\\..\\secret.txt").await;
    assert_eq!(resp["error"]["code"], -32602);
    assert_no_secret(&resp);
}

#[tokio::test]
async fn fifos_sockets_and_devices_are_refused_without_blocking() {
    let (_base, root) = tree();
    let fifo = root.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let _listener = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
    symlink("/dev/zero", root.join("zero")).unwrap();
    symlink("/dev/null", root.join("null")).unwrap();
    let mut peer = serve_dir(&root).await;
    for uri in [
        "file:///pipe",
        "file:///sock",
        "file:///zero",
        "file:///null",
    ] {
        assert_refused(&mut peer, uri).await;
    }
    let listing = walk(&mut peer, json!({})).await;
    assert_eq!(
        listing.len(),
        2,
        "special files are not listed: {listing:?}"
    );
    let children = walk(&mut peer, json!({"uri": "file:///"})).await;
    assert!(
        !children
            .iter()
            .any(|u| u.ends_with("pipe") || u.ends_with("sock")),
        "{children:?}"
    );
}

#[tokio::test]
async fn very_long_paths_and_deep_trees_are_handled() {
    let (_base, root) = tree();
    let mut deep = root.clone();
    for _ in 0..60 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("leaf.txt"), "leaf").unwrap();
    let mut peer = serve_dir(&root).await;
    let uri = format!("file:///{}leaf.txt", "d/".repeat(60));
    assert_eq!(
        read(&mut peer, &uri).await["result"]["contents"][0]["text"],
        "leaf"
    );
    let listing = walk(&mut peer, json!({})).await;
    assert!(listing.contains(&uri));
    // A name longer than any filesystem allows, and a URI beyond the server's limit.
    let long_name = format!("file:///{}", "n".repeat(300));
    assert_refused(&mut peer, &long_name).await;
    let too_long = format!("file:///{}", "a/".repeat(20_000));
    let resp = read(&mut peer, &too_long).await;
    assert_eq!(resp["error"]["code"], -32602);
}

#[tokio::test]
async fn a_directory_swapped_for_a_symlink_is_not_followed_out() {
    let (base, root) = tree();
    write(&root, "swap/secret.txt", "inside version");
    let mut peer = serve_dir(&root).await;
    assert_eq!(
        read(&mut peer, "file:///swap/secret.txt").await["result"]["contents"][0]["text"],
        "inside version"
    );
    std::fs::remove_dir_all(root.join("swap")).unwrap();
    symlink(base.path().join("outside"), root.join("swap")).unwrap();
    assert_refused(&mut peer, "file:///swap/secret.txt").await;
}

#[tokio::test]
async fn hidden_and_ignored_files_answer_like_missing_ones() {
    let (_base, root) = tree();
    write(&root, ".env", "API_KEY=1");
    write(&root, ".git/config", "[core]");
    write(&root, ".gitignore", "build/\n*.log\n");
    write(&root, "build/out.txt", "artifact");
    write(&root, "debug.log", "log");
    let mut peer = serve_dir(&root).await;
    for uri in [
        "file:///.env",
        "file:///.git/config",
        "file:///build/out.txt",
        "file:///debug.log",
        "file:///build",
    ] {
        assert_refused(&mut peer, uri).await;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    /// Whatever URI is asked, a successful read returns bytes of a file inside the root.
    #[test]
    fn every_resolved_file_lies_inside_the_root(segments in prop::collection::vec(segment(), 0..6)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (base, root) = FIXTURE.with(|f| f.clone());
        let uri = format!("file:///{}", segments.join("/"));
        let provider = FsProvider::single(&root, FsConfig::default()).unwrap();
        let outcome = runtime.block_on(provider.read(&RequestContext::detached(), &uri));
        if let Ok(out) = outcome {
            for c in out.contents {
                let text = String::from_utf8_lossy(c.body.as_bytes()).into_owned();
                prop_assert!(!text.contains(SECRET), "{uri} leaked");
                // The URI of every entry maps to a path under the root.
                let rel = c.resource.uri.trim_start_matches("file:///");
                let on_disk = root.join(percent_decode(rel));
                let canonical = on_disk.canonicalize().unwrap_or(on_disk);
                prop_assert!(canonical.starts_with(root.canonicalize().unwrap()), "{uri} → {}", canonical.display());
            }
        }
        drop(base);
    }
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just("%2e%2e".to_owned()),
        Just("%2E.".to_owned()),
        Just(".".to_owned()),
        Just("".to_owned()),
        Just("%2F".to_owned()),
        Just("..%2F..".to_owned()),
        Just("%00".to_owned()),
        Just("%5C".to_owned()),
        Just("docs".to_owned()),
        Just("inside.txt".to_owned()),
        Just("secret.txt".to_owned()),
        Just("root-evil".to_owned()),
        Just("outside".to_owned()),
        Just("up".to_owned()),
        Just("loop".to_owned()),
        Just("%252e%252e".to_owned()),
        "[a-z.%0-9]{1,6}",
    ]
}

thread_local! {
    /// One tree for all cases, with links that try every way out.
    static FIXTURE: (std::sync::Arc<tempfile::TempDir>, std::path::PathBuf) = {
        let (base, root) = tree();
        symlink(base.path().join("secret.txt"), root.join("secret.txt")).unwrap();
        symlink("..", root.join("up")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink(base.path().join("outside"), root.join("outside")).unwrap();
        assert!(Path::new(&root).is_dir());
        (std::sync::Arc::new(base), root)
    };
}
