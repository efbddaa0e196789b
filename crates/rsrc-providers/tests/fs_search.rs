//! The filesystem provider answers `search_resources` (the tools bridge) itself, from its
//! walk and listing cache: every matching file in walk order across pages, never a hidden,
//! ignored or excluded one.
#![cfg(feature = "fs")]

mod common;

use rsrc::protocol::ProtocolVersion;
use rsrc::{Server, ToolsConfig};
use rsrc_providers::fs::{FsConfig, FsProvider, PREFIX};

use common::{search_all, write};

#[tokio::test]
async fn search_finds_every_matching_file_across_pages_and_nothing_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = Vec::new();
    for d in 0..30 {
        for f in 0..200 {
            let rel = if f % 37 == 0 {
                format!("d{d:02}/Meeting-notes-{f:03}.md")
            } else {
                format!("d{d:02}/file-{f:03}.txt")
            };
            write(dir.path(), &rel, "x");
            if f % 37 == 0 {
                expected.push(format!("{PREFIX}{rel}"));
            }
        }
    }
    write(dir.path(), ".hidden/meeting-notes.md", "secret");
    write(dir.path(), "logs/meeting-notes.log", "ignored");
    write(dir.path(), ".gitignore", "*.log\n");
    let provider = FsProvider::single(dir.path(), FsConfig::default()).unwrap();
    let server = Server::builder("fs-search", "0")
        .mount(PREFIX, provider)
        .tools(ToolsConfig {
            page: 7,
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = common::peer_for(&server).await;
    peer.speak(ProtocolVersion::V2025_11_25);
    let found = search_all(&mut peer, "MEETING notes").await;
    assert_eq!(found, expected);
    assert!(search_all(&mut peer, "nothing-like-this").await.is_empty());
    // A word spanning the directory and the name matches the path.
    let one = search_all(&mut peer, "d07/meeting-notes-037").await;
    assert_eq!(one, [format!("{PREFIX}d07/Meeting-notes-037.md")]);
}
