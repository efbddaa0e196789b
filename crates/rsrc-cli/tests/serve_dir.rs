//! `rsrc serve DIR…` end to end: directories on the command line, over stdio, and the
//! server's memory while it lists a 100,000-file tree.

use std::collections::HashSet;
use std::process::Stdio;
use std::time::Duration;

use rsrc::protocol::Body;
use rsrc_client::{Client, ClientOptions};
use tokio::process::Command;

mod common;
use common::status_kib;

fn rsrc(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    cmd.args(args).stderr(Stdio::null());
    cmd
}

fn write(root: &std::path::Path, rel: &str, content: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[tokio::test]
async fn one_directory_is_served_at_file_root_and_several_by_name() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    write(one.path(), "notes/todo.md", "- ship");
    write(two.path(), "main.rs", "fn main() {}");

    let dir = one.path().to_str().unwrap();
    let (client, _child) = Client::spawn(&mut rsrc(&["serve", dir]), ClientOptions::default())
        .await
        .unwrap();
    let all = client.list_all_resources(None, 10).await.unwrap();
    assert_eq!(
        all.items.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        ["file:///notes/todo.md"]
    );
    let read = client.read("file:///notes/todo.md").await.unwrap();
    assert_eq!(read.contents[0].body, Body::Text("- ship".into()));

    let named = format!("code={}", two.path().display());
    let (client, _child) =
        Client::spawn(&mut rsrc(&["serve", dir, &named]), ClientOptions::default())
            .await
            .unwrap();
    let all = client.list_all_resources(None, 10).await.unwrap();
    let one_name = rsrc_providers_root_name(one.path());
    assert_eq!(
        all.items.iter().map(|r| r.uri.clone()).collect::<Vec<_>>(),
        [
            format!("file:///{one_name}/notes/todo.md"),
            "file:///code/main.rs".to_owned()
        ]
    );
    let roots = client
        .list_all_resources(Some("file:///"), 10)
        .await
        .unwrap();
    assert_eq!(roots.items.len(), 2);
    assert!(roots.items.iter().all(|r| r.is_collection()));
}

fn rsrc_providers_root_name(path: &std::path::Path) -> String {
    path.canonicalize()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_missing_directory_is_a_clear_startup_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "/definitely/not/here"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/definitely/not/here") && err.contains("not a directory"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing but protocol on stdout");
}

/// A tree of 100,000 files (90 directories of 1,000, and one flat directory of 10,000) is
/// listed through every page; the server's peak memory stays within a bound that does not
/// depend on the tree: at most the listing cache's budget plus a few pages.
#[tokio::test]
async fn listing_100k_files_keeps_server_memory_bounded() {
    // Creating 100,000 files on a virtual disk can take minutes; memory-backed when possible.
    let shm = std::path::Path::new("/dev/shm");
    let tree = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    for d in 0..90 {
        let dir = tree.path().join(format!("d{d:02}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("f{f:04}.txt")), "x").unwrap();
        }
    }
    let flat = tree.path().join("flat");
    std::fs::create_dir(&flat).unwrap();
    for f in 0..10_000 {
        std::fs::write(flat.join(format!("g{f:05}.txt")), "y").unwrap();
    }
    let dir = tree.path().to_str().unwrap();
    let (client, child) = Client::spawn(&mut rsrc(&["serve", dir]), ClientOptions::default())
        .await
        .unwrap();
    let pid = child.id().unwrap();
    let first = client.list_resources(None, None).await.unwrap();
    let baseline = status_kib(pid, "VmRSS:");
    let mut seen: HashSet<String> = first.resources.into_iter().map(|r| r.uri).collect();
    let mut cursor = first.next_cursor;
    let mut pages = 1;
    while let Some(c) = cursor {
        let page = client.list_resources(Some(c), None).await.unwrap();
        for r in page.resources {
            assert!(seen.insert(r.uri), "a duplicate");
        }
        cursor = page.next_cursor;
        pages += 1;
    }
    assert_eq!(seen.len(), 100_000);
    assert_eq!(pages, 100);
    let peak = status_kib(pid, "VmHWM:");
    let growth_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!(
        "server RSS after the first page {baseline} KiB, peak after {pages} pages {peak} KiB"
    );
    // The listing cache holds at most 65,536 entries (about 20 MiB); pages are ~100 KiB.
    assert!(
        growth_mib < 40,
        "peak {peak} KiB, {growth_mib} MiB over the first page's {baseline} KiB"
    );
    assert!(peak / 1024 < 64, "peak {} MiB", peak / 1024);
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output()).await;
}
