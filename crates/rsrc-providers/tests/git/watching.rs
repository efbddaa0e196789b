//! Changes: refs that move, appear and go, packed refs, the 2026 listen stream, and no
//! change capability without polling.
//!
//! Invariant: a subscriber hears of a change to what it subscribed to, and only that.

use super::*;

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
