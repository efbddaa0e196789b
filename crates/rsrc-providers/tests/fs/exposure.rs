//! What is exposed and how it is offered: ignore files, hidden files and globs, and
//! completion of the file template.
//!
//! Invariant: completion sees exactly what listing sees.

use super::*;

#[tokio::test]
async fn ignore_files_hidden_files_and_globs_decide_what_is_exposed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n!keep.log\n");
    write(root, "target/out.bin", "x");
    write(root, "app.log", "x");
    write(root, "keep.log", "kept");
    write(root, "sub/.gitignore", "secret.md\n");
    write(root, "sub/secret.md", "x");
    write(root, "sub/public.md", "x");
    write(root, "sub/.ignore", "!secret.md\n");
    write(root, "other/secret.md", "not ignored here");
    write(root, ".hidden/x.txt", "x");
    write(root, "notes.txt", "x");
    let mut peer = serve_dir(root).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(
        uris,
        [
            "file:///keep.log",
            "file:///notes.txt",
            "file:///other/secret.md",
            "file:///sub/public.md",
            "file:///sub/secret.md"
        ],
        ".ignore re-includes what .gitignore excluded in the same directory"
    );
    // Reads apply the same rules, ancestor by ancestor, the deepest deciding.
    for (uri, exposed) in [
        ("file:///keep.log", true),
        ("file:///sub/secret.md", true),
        ("file:///other/secret.md", true),
        ("file:///app.log", false),
        ("file:///target/out.bin", false),
        ("file:///.hidden/x.txt", false),
    ] {
        let resp = read(&mut peer, uri).await;
        let outcome = if exposed {
            resp["result"]["contents"][0]["uri"] == uri
        } else {
            is_not_found(&resp, uri)
        };
        assert!(outcome, "{uri} (exposed: {exposed}): {resp}");
    }

    let everything = FsConfig {
        visibility: VisibilityConfig {
            include_hidden: true,
            respect_ignore_files: false,
            ..VisibilityConfig::standard()
        },
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(root, everything, 1000).await;
    let uris = walk(&mut peer, json!({})).await;
    assert!(uris.contains(&"file:///.hidden/x.txt".to_owned()));
    assert!(uris.contains(&"file:///target/out.bin".to_owned()));
    assert!(!uris.iter().any(|u| u.contains("/.git/")));

    let globs = FsConfig {
        visibility: VisibilityConfig {
            include: vec!["**/*.md".into()],
            exclude: vec!["other".into()],
            ..VisibilityConfig::standard()
        },
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(root, globs, 1000).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(uris, ["file:///sub/public.md", "file:///sub/secret.md"]);
    assert!(is_not_found(
        &read(&mut peer, "file:///notes.txt").await,
        "file:///notes.txt"
    ));
}

#[tokio::test]
async fn the_deepest_ignore_file_decides_and_anchored_patterns_match_from_their_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "*.log\n/sub/private.md\n");
    write(root, "sub/.gitignore", "!debug.log\n/secret.md\n");
    for file in [
        "app.log",
        "sub/debug.log",
        "sub/other.log",
        "sub/private.md",
        "sub/secret.md",
        "sub/deeper/secret.md",
        "sub/deeper/private.md",
    ] {
        write(root, file, "x");
    }
    let exposed = [
        "file:///sub/debug.log",
        "file:///sub/deeper/private.md",
        "file:///sub/deeper/secret.md",
    ];
    let mut peer = serve_dir(root).await;
    assert_eq!(walk(&mut peer, json!({})).await, exposed);
    for file in [
        "app.log",
        "sub/other.log",
        "sub/private.md",
        "sub/secret.md",
    ] {
        let uri = format!("file:///{file}");
        let resp = read(&mut peer, &uri).await;
        assert!(is_not_found(&resp, &uri), "{uri} is ignored: {resp}");
    }
    for uri in exposed {
        let resp = read(&mut peer, uri).await;
        assert_eq!(resp["result"]["contents"][0]["uri"], uri, "{resp}");
    }
}

#[tokio::test]
async fn a_served_directory_declares_the_completions_it_answers() {
    // The file template completes paths, so a client that honours capabilities must be
    // told it may ask (it once was not).
    let dir = sample_tree();
    let provider = FsProvider::single(dir.path(), FsConfig::default()).unwrap();
    let server = server_for(provider, 1000);
    let (r, w) = tokio::io::split(rsrc::transport::serve_in_memory(
        &server,
        rsrc::transport::StreamConfig::default(),
    ));
    let mut peer = rsrc_testkit::Peer::new(r, w);
    let init = peer
        .initialize(rsrc::protocol::ProtocolVersion::V2025_11_25)
        .await;
    assert_eq!(init["capabilities"]["completions"], json!({}), "{init}");
    peer.speak(rsrc::protocol::ProtocolVersion::V2026_07_28);
    let discover = peer.modern("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["capabilities"]["completions"],
        json!({}),
        "{discover}"
    );
}

#[tokio::test]
async fn the_file_template_is_listed_and_completes_path_segments() {
    let dir = sample_tree();
    write(dir.path(), ".secret/key", "x");
    let mut peer = serve_dir(dir.path()).await;
    let templates = peer.request("resources/templates/list", json!({})).await;
    let t = &templates["result"]["resourceTemplates"][0];
    assert_eq!(t["uriTemplate"], "file:///{+path}");
    assert_eq!(t["capabilities"]["list"], true);
    let complete = |value: &str| json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": value}});
    let resp = peer.request("completion/complete", complete("s")).await;
    assert_eq!(resp["result"]["completion"]["values"], json!(["src/"]));
    let resp = peer.request("completion/complete", complete("src/")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["src/lib/", "src/main.rs"])
    );
    let resp = peer.request("completion/complete", complete("src/m")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["src/main.rs"])
    );
    assert_eq!(resp["result"]["completion"]["total"], 1);
    let resp = peer.request("completion/complete", complete(".")).await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!([]),
        "hidden entries are not offered"
    );
    let resp = peer.request("completion/complete", complete("../")).await;
    assert_eq!(resp["result"]["completion"]["values"], json!([]));
    // Reading through the template's URI is reading the file.
    assert_eq!(
        read(&mut peer, "file:///src/main.rs").await["result"]["contents"][0]["text"],
        "fn main() {}\n"
    );
}
