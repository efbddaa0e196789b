//! Reading files and directories: text or a blob, names, metadata, budgets, read caps,
//! format alternatives, and times RFC 3339 cannot write.
//!
//! Invariant: a read returns a whole file or a clear refusal, never a truncated one.

use super::*;

#[tokio::test]
async fn text_is_text_and_everything_else_is_a_blob() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let text = read(&mut peer, "file:///src/main.rs").await;
    let c = &text["result"]["contents"][0];
    assert_eq!(c["text"], "fn main() {}\n");
    assert_eq!(c["mimeType"], "text/x-rust");
    assert_eq!(c["name"], "main.rs");
    assert_eq!(c["size"], 13);
    assert!(c["annotations"]["lastModified"].is_string());
    let blob = read(&mut peer, "file:///data/blob.bin").await;
    let c = &blob["result"]["contents"][0];
    assert!(c.get("text").is_none());
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(c["blob"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, [0u8, 159, 146, 150, 255]);
    assert_eq!(c["mimeType"], "application/octet-stream");
    let png = read(&mut peer, "file:///data/image.png").await;
    assert_eq!(png["result"]["contents"][0]["mimeType"], "image/png");
}

#[tokio::test]
async fn nul_bytes_make_a_file_binary() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "nul.txt", "abc\0def");
    let mut peer = serve_dir(dir.path()).await;
    let resp = read(&mut peer, "file:///nul.txt").await;
    assert!(resp["result"]["contents"][0]["blob"].is_string());
}

#[tokio::test]
async fn unusual_names_round_trip_through_uris() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "with space & 100%.md", "spaces");
    write(dir.path(), "ünïcödé/名前.txt", "unicode");
    write(dir.path(), "q?#[x].txt", "delims");
    let raw = dir.path().join(OsStr::from_bytes(b"latin1-\xe9.txt"));
    std::fs::write(&raw, "not utf-8 name").unwrap();
    let mut peer = serve_dir(dir.path()).await;
    let uris = walk(&mut peer, json!({})).await;
    assert_eq!(uris.len(), 4, "{uris:?}");
    for uri in &uris {
        let resp = read(&mut peer, uri).await;
        assert!(
            resp["result"]["contents"][0]["text"].is_string(),
            "{uri}: {resp}"
        );
    }
    assert!(uris.contains(&"file:///latin1-%E9.txt".to_owned()));
    assert!(uris.contains(&"file:///with%20space%20&%20100%25.md".to_owned()));
}

#[tokio::test]
async fn metadata_matches_the_listing_without_content() {
    let dir = sample_tree();
    let mut peer = serve_dir(dir.path()).await;
    let listed = peer
        .request("resources/list", json!({"uri": "file:///"}))
        .await["result"]["resources"][0]
        .clone();
    let meta = peer
        .request("resources/metadata", json!({"uri": listed["uri"]}))
        .await;
    assert_eq!(meta["result"]["resource"], listed);
    let dir_meta = peer
        .request("resources/metadata", json!({"uri": "file:///src"}))
        .await;
    assert_eq!(dir_meta["result"]["resource"]["resourceType"], "collection");
    assert_eq!(
        dir_meta["result"]["resource"]["mimeType"],
        "inode/directory"
    );
}

#[tokio::test]
async fn reading_a_directory_returns_whole_child_documents_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d/a.txt", "a".repeat(40));
    write(dir.path(), "d/b.txt", "b".repeat(100));
    write(dir.path(), "d/c.txt", "c".repeat(40));
    write(dir.path(), "d/sub/deep.txt", "deep");
    let config = FsConfig {
        collection_budget: 90,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), config, 1000).await;
    let resp = read(&mut peer, "file:///d").await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    let uris: Vec<&str> = contents
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    // b.txt does not fit the remaining budget; c.txt does; subdirectories are not inlined.
    assert_eq!(uris, ["file:///d/a.txt", "file:///d/c.txt"]);
    assert!(
        contents
            .iter()
            .all(|c| c["text"].as_str().unwrap().len() == 40),
        "whole files only"
    );
}

#[tokio::test]
async fn files_over_the_read_cap_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", "x".repeat(2000));
    write(dir.path(), "small.txt", "x".repeat(10));
    let config = FsConfig {
        max_read: 1000,
        ..FsConfig::default()
    };
    let mut peer = serve_dir_with(dir.path(), config, 1000).await;
    let resp = read(&mut peer, "file:///big.txt").await;
    assert_eq!(resp["error"]["code"], -32602);
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2000") && message.contains("1000"),
        "{message}"
    );
    assert!(
        !message.contains(dir.path().to_str().unwrap()),
        "no host path: {message}"
    );
    assert!(read(&mut peer, "file:///small.txt").await["result"].is_object());
}

#[tokio::test]
async fn the_cap_holds_for_a_file_that_grows_while_being_read() {
    // Files in /proc report a size of 0 but produce content when read: exactly a file that
    // grows between the size check and the read.
    let config = FsConfig {
        max_read: 64,
        ..FsConfig::default()
    };
    let provider = FsProvider::single("/proc/self", config).unwrap();
    let mut peer = peer_for(&server_for(provider, 1000)).await;
    let resp = read(&mut peer, "file:///status").await;
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    assert!(resp["error"]["message"].as_str().unwrap().contains("64"));
}

#[cfg(feature = "pdf")]
#[tokio::test]
async fn a_pdf_also_reads_as_extracted_text_with_its_own_size() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = rsrc_testkit::fixtures::pdf("Quarterly Report");
    write(dir.path(), "report.pdf", &bytes);
    write(
        dir.path(),
        "broken.pdf",
        b"%PDF-1.4 this is not really a pdf",
    );
    let mut peer = serve_dir(dir.path()).await;
    let resp = read(&mut peer, "file:///report.pdf").await;
    let contents = resp["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2, "{resp}");
    assert!(
        contents
            .iter()
            .all(|c| c["uri"] == "file:///report.pdf" && c["name"] == "report.pdf")
    );
    assert_eq!(contents[0]["mimeType"], "application/pdf");
    assert_eq!(contents[0]["size"], bytes.len());
    assert!(contents[0]["blob"].is_string());
    assert_eq!(contents[1]["mimeType"], "text/plain");
    let text = contents[1]["text"].as_str().unwrap();
    assert!(text.contains("Quarterly Report"), "{text:?}");
    assert_eq!(contents[1]["size"], text.len());
    // A PDF that cannot be parsed is still served, without the alternative.
    let broken = read(&mut peer, "file:///broken.pdf").await;
    assert_eq!(broken["result"]["contents"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_file_dated_before_1970_is_served_without_a_modification_time() {
    use std::time::{Duration, UNIX_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.txt", "from 1960");
    write(dir.path(), "now.txt", "today");
    let old = std::fs::File::options()
        .write(true)
        .open(dir.path().join("old.txt"))
        .unwrap();
    old.set_modified(UNIX_EPOCH - Duration::from_secs(10 * 365 * 86_400))
        .unwrap();
    let mut peer = serve_dir(dir.path()).await;
    for _ in 0..2 {
        let children = peer
            .request("resources/list", json!({"uri": "file:///"}))
            .await;
        let resources = children["result"]["resources"].as_array().unwrap();
        let entry = |uri: &str| resources.iter().find(|r| r["uri"] == uri).unwrap().clone();
        assert!(entry("file:///old.txt")["annotations"]["lastModified"].is_null());
        assert!(entry("file:///now.txt")["annotations"]["lastModified"].is_string());
    }
    let r = read(&mut peer, "file:///old.txt").await;
    assert_eq!(r["result"]["contents"][0]["text"], "from 1960", "{r}");
    let meta = peer
        .request("resources/metadata", json!({"uri": "file:///old.txt"}))
        .await;
    assert!(meta["result"].is_object(), "{meta}");
}
