//! A commit id is served only if a served ref reaches it: a commit amended away (or on a
//! deleted branch) still sits in the object store with whatever secret it held, and must
//! be as missing as an id that never existed.
#![cfg(feature = "git")]

mod common;
#[path = "common/gitrepo.rs"]
mod gitrepo;

use rsrc::{Server, ServerConfig};
use rsrc_providers::git::{GitConfig, GitProvider};
use serde_json::json;

use common::{is_not_found, peer_for, read};
use gitrepo::{Fixture, Item};

#[tokio::test]
async fn an_amended_away_commit_is_not_served_by_its_id() {
    let f = Fixture::new();
    let first = f.commit("main", "first", &[Item::File("README.md", b"v1\n")]);
    let leaked = f.commit(
        "main",
        "oops",
        &[
            Item::File("README.md", b"v1\n"),
            Item::File("secret.txt", b"password=hunter2\n"),
        ],
    );
    // `git commit --amend`: the branch goes back, and a new commit replaces the leak.
    f.set_ref("refs/heads/main", first);
    let fixed = f.commit("main", "first, fixed", &[Item::File("README.md", b"v2\n")]);
    // A deleted branch leaves its commit behind too.
    let gone = f.commit("tmp", "temporary", &[Item::File("tmp.txt", b"tmp\n")]);
    f.delete_ref("refs/heads/tmp");

    let provider = GitProvider::open(
        f.path(),
        GitConfig {
            poll_interval: None,
            ..GitConfig::default()
        },
    )
    .unwrap();
    let prefix = provider.prefix().to_owned();
    let server = Server::builder("git-test", "0")
        .mount(prefix, provider)
        .config(ServerConfig::default())
        .build()
        .unwrap();
    let mut peer = peer_for(&server).await;

    for (id, file) in [(leaked, "secret.txt"), (gone, "tmp.txt")] {
        let uri = format!("git:///{id}/{file}");
        assert!(is_not_found(&read(&mut peer, &uri).await, &uri), "{uri}");
        let meta = peer
            .request("resources/metadata", json!({"uri": uri}))
            .await;
        assert!(is_not_found(&meta, &uri), "{meta}");
        let tree = format!("git:///{id}");
        let list = peer.request("resources/list", json!({"uri": tree})).await;
        assert!(list.get("result").is_none(), "{list}");
    }
    // Commits the refs reach are served by id, the tip and its ancestors alike.
    for (id, text) in [(fixed, "v2\n"), (first, "v1\n")] {
        let uri = format!("git:///{id}/README.md");
        let r = read(&mut peer, &uri).await;
        assert_eq!(r["result"]["contents"][0]["text"], text, "{r}");
    }
    // Once a ref reaches the commit again, it is served.
    f.set_ref("refs/tags/keep", leaked);
    let uri = format!("git:///{leaked}/secret.txt");
    let r = read(&mut peer, &uri).await;
    assert_eq!(
        r["result"]["contents"][0]["text"], "password=hunter2\n",
        "{r}"
    );
}
