//! Ignore files that are hostile or broken: a FIFO named `.gitignore` must not hang the
//! server, and a non-UTF-8 or oversized ignore file still applies every rule it holds.

mod common;

use std::time::Duration;

use serde_json::json;

use common::{is_not_found, read, serve_dir, walk, write};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_named_gitignore_neither_hangs_the_server_nor_hides_anything() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/a.txt", "a");
    let fifo = dir.path().join("sub/.gitignore");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Should the server open the FIFO for reading and block, a writer opening it later
    // lets the blocked thread go, so that a failing test ends instead of hanging.
    struct Unblock(std::path::PathBuf);
    impl Drop for Unblock {
        fn drop(&mut self) {
            use std::os::unix::fs::OpenOptionsExt as _;
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(&self.0);
        }
    }
    let _unblock = Unblock(fifo.clone());
    let mut peer = serve_dir(dir.path()).await;
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        let r = read(&mut peer, "file:///sub/a.txt").await;
        let listed = walk(&mut peer, json!({})).await;
        (r, listed)
    })
    .await
    .expect("a request under a directory whose .gitignore is a FIFO is answered");
    assert_eq!(answered.0["result"]["contents"][0]["text"], "a");
    assert_eq!(answered.1, ["file:///sub/a.txt"]);
}

#[tokio::test]
async fn a_partly_invalid_ignore_file_still_applies_every_readable_rule() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".gitignore",
        b"*.log\n\xff\xfe\x80 broken\nsecret.txt\n[unclosed\n",
    );
    write(dir.path(), "x.log", "log");
    write(dir.path(), "secret.txt", "secret");
    write(dir.path(), "kept.md", "kept");
    let mut peer = serve_dir(dir.path()).await;
    assert_eq!(walk(&mut peer, json!({})).await, ["file:///kept.md"]);
    for uri in ["file:///x.log", "file:///secret.txt"] {
        assert!(is_not_found(&read(&mut peer, uri).await, uri), "{uri}");
    }
}

#[tokio::test]
async fn an_oversized_ignore_file_applies_its_first_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = b"secret.txt\n".to_vec();
    while text.len() <= 1024 * 1024 {
        text.extend_from_slice(b"# padding padding padding padding padding padding padding\n");
    }
    write(dir.path(), ".ignore", &text);
    write(dir.path(), "secret.txt", "secret");
    write(dir.path(), "kept.md", "kept");
    let mut peer = serve_dir(dir.path()).await;
    assert_eq!(walk(&mut peer, json!({})).await, ["file:///kept.md"]);
    assert!(is_not_found(
        &read(&mut peer, "file:///secret.txt").await,
        "file:///secret.txt"
    ));
}
