//! Naming what is served: branches, tags and commit ids, encoded and shadowing names, and
//! names and paths that must reach nothing.
//!
//! Invariant: a bad ref name or a traversal is a plain not-found, and nothing outside the
//! repository is ever read.

use super::*;

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
