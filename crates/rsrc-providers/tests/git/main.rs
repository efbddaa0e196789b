//! The git provider on real repositories written by the tests with gix (no git command):
//! refs, trees and blobs at branches, tags and commit ids, text/binary detection, bad ref
//! names and traversal (nothing outside the repository is reachable), refs moving and
//! appearing (updates and list changes), completion, metadata, several repositories, and
//! the 2026-07-28 wire. Every server message is validated against the official schema by
//! the test peer.
#![cfg(feature = "git")]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/gitrepo.rs"]
mod gitrepo;

use std::time::Duration;

use base64::Engine as _;
use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Server, ServerConfig};
use rsrc_providers::git::{GitConfig, GitProvider, META_KEY, PREFIX};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{is_not_found, list_changes, peer_for, read, updates, walk};
use gitrepo::{FIRST_COMMIT_TIME, Fixture, Item, SECRET};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01";

/// A repository with `main` (two commits), `feature/x`, a lightweight tag `v1` and an
/// annotated tag `v1-annotated` at the first commit. Returns (fixture, first, second).
fn sample() -> (Fixture, gix::ObjectId, gix::ObjectId) {
    let f = Fixture::new();
    let first = f.commit(
        "main",
        "first\n\nwith a body",
        &[
            Item::File("README.md", b"# Project v1\n"),
            Item::File("src/main.rs", b"fn main() {}\n"),
        ],
    );
    let second = f.commit(
        "main",
        "second commit",
        &[
            Item::File("README.md", b"# Project v2\n"),
            Item::File("a-b.txt", b"dash"),
            Item::File("a/b.txt", b"slash"),
            Item::File("src/main.rs", b"fn main() {}\n"),
            Item::File("src/lib/mod.rs", b"// lib\n"),
            Item::Exe("run.sh", b"#!/bin/sh\necho hi\n"),
            Item::File("data/image.png", PNG),
            Item::File("data/blob.bin", &[0u8, 159, 146, 150, 255]),
            Item::File("data/nul.txt", b"text\0with a NUL"),
            Item::Link("link-to-readme", "README.md"),
            Item::Link("escape", "../secret.txt"),
        ],
    );
    f.set_ref("refs/heads/feature/x", first);
    f.set_ref("refs/tags/v1", first);
    f.annotated_tag("v1-annotated", first);
    (f, first, second)
}

fn quiet() -> GitConfig {
    GitConfig {
        poll_interval: None,
        ..GitConfig::default()
    }
}

fn server_with(providers: Vec<GitProvider>, page_size: usize) -> Server {
    let mut b = Server::builder("git-test", "0").config(ServerConfig {
        page_size,
        ..ServerConfig::default()
    });
    for p in providers {
        let prefix = p.prefix().to_owned();
        b = b.mount(prefix, p);
    }
    b.build().unwrap()
}

async fn serve(f: &Fixture, config: GitConfig) -> (Server, Peer) {
    let server = server_with(vec![GitProvider::open(f.path(), config).unwrap()], 1000);
    let peer = peer_for(&server).await;
    (server, peer)
}

fn resources(resp: &Value) -> Vec<Value> {
    resp["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp}"))
        .clone()
}

fn uris(resp: &Value) -> Vec<String> {
    resources(resp)
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

async fn list(peer: &mut Peer, uri: &str) -> Value {
    peer.request("resources/list", json!({"uri": uri})).await
}

fn text_of(resp: &Value) -> &str {
    resp["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {resp}"))
}

/// Every way a ref name could be read as an option, a revision expression or a path.
const BAD_REFS: &[&str] = &[
    "--output=x",
    "--output%3Dx",
    "-c",
    "-",
    "..%2Fx",
    "..",
    "HEAD~1",
    "HEAD%7E1",
    "main%5E",
    "main%5E%7B%7D",
    "main%3Asecret.txt",
    "main:secret.txt",
    "%3A%2Fsecret",
    "%40%7B-1%7D",
    "main%40%7B1%7D",
    "%40",
    "refs%2F..%2Fx",
    "refs%2Fheads%2F..%2F..%2Fconfig",
    "main%00",
    "ma%00in",
    "main%0A",
    "%2E%2E%2F%2E%2E%2Fsecret.txt",
    "%2Fetc%2Fpasswd",
    "config",
    "refs%2Fremotes%2Forigin%2Fmain",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "COMMIT_EDITMSG",
    "objects",
    ".git",
    "main.lock",
    "main%2F",
    "~",
    "*",
    "main%5B0%5D",
];

async fn modern_peer(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    peer.speak(ProtocolVersion::V2026_07_28);
    peer
}

// ---- changes ----

const POLL: Duration = Duration::from_millis(40);
/// Long enough for a few polls.
const SETTLE: Duration = Duration::from_millis(400);

fn polling() -> GitConfig {
    GitConfig {
        poll_interval: Some(POLL),
        ..GitConfig::default()
    }
}

async fn subscribe(peer: &mut Peer, uri: &str) {
    let ok = peer
        .request("resources/subscribe", json!({"uri": uri}))
        .await;
    assert_eq!(ok["result"], json!({}), "{uri}: {ok}");
}

mod content;
mod listing;
mod refs;
mod watching;
mod wire;
