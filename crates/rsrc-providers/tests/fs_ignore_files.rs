//! Ignore files that are hostile or broken: a FIFO named `.gitignore` must not hang the
//! server, a non-UTF-8 ignore file still applies every rule it holds, and one that cannot
//! be read whole (a FIFO, one over the size limit) fails closed: nothing in its directory
//! is served.

mod common;

use std::time::Duration;

use serde_json::json;

use common::{is_not_found, read, serve_dir, walk, write};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_named_gitignore_neither_hangs_the_server_nor_exposes_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/a.txt", "a");
    write(dir.path(), "b.txt", "b");
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
    // Its rules cannot be read: what they might hide stays hidden.
    assert!(
        is_not_found(&answered.0, "file:///sub/a.txt"),
        "{}",
        answered.0
    );
    assert_eq!(answered.1, ["file:///b.txt"]);
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

/// The review's reproduction: 3 MiB of comments, then `*.secret`. Only the first MiB
/// could be read, so the rule at the end was never seen and `y.secret` was served.
#[tokio::test]
async fn an_ignore_file_too_large_to_read_whole_hides_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    while text.len() <= 3 * 1024 * 1024 {
        text.extend_from_slice(b"# padding padding padding padding padding padding padding\n");
    }
    text.extend_from_slice(b"*.secret\n");
    write(dir.path(), "docs/.gitignore", &text);
    write(dir.path(), "docs/y.secret", "secret");
    write(dir.path(), "docs/kept.md", "kept");
    write(dir.path(), "docs/sub/deep.md", "deep");
    write(dir.path(), "other/z.md", "other");
    let mut peer = serve_dir(dir.path()).await;
    assert_eq!(walk(&mut peer, json!({})).await, ["file:///other/z.md"]);
    for uri in [
        "file:///docs/y.secret",
        "file:///docs/kept.md",
        "file:///docs/sub/deep.md",
    ] {
        assert!(is_not_found(&read(&mut peer, uri).await, uri), "{uri}");
    }
    let listed = peer
        .call("resources/list", json!({"uri": "file:///docs/sub/"}))
        .await;
    assert!(
        listed["result"]["resources"]
            .as_array()
            .is_none_or(|r| r.is_empty()),
        "{listed}"
    );
    let read_other = read(&mut peer, "file:///other/z.md").await;
    assert_eq!(read_other["result"]["contents"][0]["text"], "other");
}
