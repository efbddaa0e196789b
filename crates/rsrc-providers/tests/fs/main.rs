//! The filesystem provider's behaviour on real temporary trees: listings, collections,
//! metadata, text/binary detection, format alternatives, ignore rules, read caps, several
//! roots, and pagination stability under a concurrent writer.

#[path = "../common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use rsrc_providers::fs::{FsConfig, FsProvider, ListingFreshness, VisibilityConfig};
use serde_json::json;

use common::{is_not_found, peer_for, read, serve_dir, serve_dir_with, server_for, walk, write};

fn sample_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "README.md", "# Project\n");
    write(root, "src/main.rs", "fn main() {}\n");
    write(root, "src/lib/mod.rs", "// lib\n");
    write(root, "a-b.txt", "dash");
    write(root, "a/b.txt", "slash");
    write(root, "data/blob.bin", [0u8, 159, 146, 150, 255]);
    write(
        root,
        "data/image.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    );
    write(root, "empty/.keep", "");
    dir
}

mod exposure;
mod listing;
mod reading;
