//! What a read returns: text or a blob, submodules left out, caps and collection budgets.
//!
//! Invariant: a read returns whole blobs only, within the caps.

use super::*;

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
