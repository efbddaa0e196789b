//! The fixture every server serves: 10,000 small text files in 100 directories, a 1 MiB
//! binary blob and a 10 MiB text, written under `DIR/root`, and what a client must get
//! back for each, held in memory to check every answer.
//!
//! Invariant: the same bytes on every run and every machine (one fixed seed and no
//! clock), so every server is judged on the same files; a stamp names the layout
//! version, and a directory without the right stamp is written again from nothing.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use base64::Engine as _;

/// Directories of small files, and small files in each.
pub(crate) const DIRS: usize = 100;
/// Small files in each directory.
pub(crate) const PER_DIR: usize = 100;
/// The blob's path under the root, and its size.
pub(crate) const BLOB: &str = "blob.bin";
const BLOB_BYTES: usize = 1 << 20;
/// The large text's path under the root, and its size.
pub(crate) const BIG: &str = "big.txt";
const BIG_BYTES: usize = 10 << 20;
/// Changes whenever what is written changes.
const STAMP: &str = "mcp-bench fixture v1: 100x100 small, blob.bin 1 MiB, big.txt 10 MiB\n";

/// Words the texts are made of: some need escaping in JSON (quotes, a backslash, a tab),
/// some are not ASCII.
const WORDS: &[&str] = &[
    "resource",
    "list",
    "read",
    "cursor",
    "template",
    "server",
    "client",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "café",
    "naïve",
    "Straße",
    "東京",
    "→",
    "λ",
    "data",
    "MCP",
    "page",
    "stream",
    "file",
    "uri",
    "{brace}",
    "<angle>",
    "50%",
    "#hash",
    "a&b",
];

/// The path of the small file `index` (0–9,999) under the root.
pub(crate) fn small_path(index: usize) -> String {
    format!("small/d{:02}/f{:04}.txt", index / PER_DIR, index)
}

/// Every file's path under the root, in a fixed order.
#[cfg(test)]
fn all_paths() -> Vec<String> {
    let mut paths: Vec<String> = (0..DIRS * PER_DIR).map(small_path).collect();
    paths.push(BLOB.to_owned());
    paths.push(BIG.to_owned());
    paths
}

/// A line of words, from the generator's state.
fn line(rng: &mut fastrand::Rng, out: &mut String) {
    let words = rng.usize(4..10);
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.usize(..WORDS.len())]);
    }
    out.push('\n');
}

/// A small file's text: lines until it is 180 to 220 bytes long.
fn small_text(rng: &mut fastrand::Rng) -> String {
    let target = rng.usize(180..=220);
    let mut text = String::new();
    while text.len() < target {
        line(rng, &mut text);
    }
    while text.len() > target {
        text.pop();
    }
    text
}

/// Everything the fixture holds: the bytes of each file by path under the root.
pub(crate) struct Fixture {
    /// The directory served.
    pub(crate) root: PathBuf,
    files: HashMap<String, Vec<u8>>,
    /// The blob as a `blob` content carries it: base64, standard alphabet, padded.
    blob_base64: String,
}

impl Fixture {
    /// The bytes of the file at `path` under the root.
    pub(crate) fn bytes(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// The fixture's own copy of `path` (it lives as long as the fixture) and its bytes.
    pub(crate) fn entry(&self, path: &str) -> Option<(&str, &[u8])> {
        self.files
            .get_key_value(path)
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
    }

    /// The blob's bytes in base64 (standard, padded): the one string that decodes to them
    /// (decoding refuses other padding and stray trailing bits).
    pub(crate) fn blob_base64(&self) -> &str {
        &self.blob_base64
    }

    /// A fixture of these files (only in memory), for tests.
    #[cfg(test)]
    pub(crate) fn of(files: HashMap<String, Vec<u8>>) -> Self {
        let blob_base64 = String::new();
        Fixture {
            root: PathBuf::new(),
            files,
            blob_base64,
        }
    }

    /// How many files the root holds.
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }
}

/// The fixture's contents, generated in memory.
fn generate() -> HashMap<String, Vec<u8>> {
    let mut rng = fastrand::Rng::with_seed(0x6d63_702d_6265_6e63);
    let mut files = HashMap::with_capacity(DIRS * PER_DIR + 2);
    for i in 0..DIRS * PER_DIR {
        files.insert(small_path(i), small_text(&mut rng).into_bytes());
    }
    let blob: Vec<u8> = (0..BLOB_BYTES).map(|_| rng.u8(..)).collect();
    files.insert(BLOB.to_owned(), blob);
    let mut big = String::with_capacity(BIG_BYTES + 256);
    while big.len() < BIG_BYTES {
        line(&mut rng, &mut big);
    }
    while big.len() > BIG_BYTES {
        big.pop();
    }
    // Popping whole characters may leave it a few bytes short: made up with ASCII.
    while big.len() < BIG_BYTES {
        big.push('.');
    }
    files.insert(BIG.to_owned(), big.into_bytes());
    files
}

/// Writes the fixture under `dir/root` unless `dir/stamp` says it is there already, and
/// returns it.
pub(crate) fn prepare(dir: &Path) -> io::Result<Fixture> {
    let files = generate();
    let root = dir.join("root");
    let stamp = dir.join("stamp");
    if fs::read_to_string(&stamp).ok().as_deref() != Some(STAMP) {
        if root.exists() {
            fs::remove_dir_all(&root)?;
        }
        for (path, bytes) in &files {
            let file = root.join(path);
            fs::create_dir_all(file.parent().expect("a file under the root"))?;
            fs::write(file, bytes)?;
        }
        fs::write(&stamp, STAMP)?;
    }
    let root = fs::canonicalize(root)?;
    let blob_base64 = base64::engine::general_purpose::STANDARD.encode(&files[BLOB]);
    Ok(Fixture {
        root,
        files,
        blob_base64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_is_the_same_every_time_and_has_its_sizes() {
        let a = generate();
        let b = generate();
        assert_eq!(a.len(), DIRS * PER_DIR + 2);
        assert_eq!(a[BLOB].len(), BLOB_BYTES);
        assert_eq!(a[BIG].len(), BIG_BYTES);
        assert!(std::str::from_utf8(&a[BIG]).is_ok());
        for path in all_paths() {
            assert_eq!(a[&path], b[&path], "{path} differs between two runs");
        }
        let small = &a[&small_path(4242)];
        assert!((180..=220).contains(&small.len()));
        assert!(std::str::from_utf8(small).is_ok());
    }

    /// FNV-1a (64 bits) over every path and its bytes, in path order.
    fn digest(files: &HashMap<String, Vec<u8>>) -> u64 {
        let mut paths: Vec<&String> = files.keys().collect();
        paths.sort();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for path in paths {
            for &byte in path.as_bytes().iter().chain(&[0]).chain(&files[path]) {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        hash
    }

    /// The fixture of every past run, pinned: a change of the generator (or of the random
    /// generator's crate under it) that changes a byte fails here, and then STAMP must
    /// change with this number so that older fixtures are written again.
    #[test]
    fn the_fixture_is_the_one_pinned() {
        assert_eq!(
            digest(&generate()),
            0x409b_789f_eb15_386a,
            "the fixture changed: bump STAMP too"
        );
    }

    #[test]
    fn small_files_are_spread_over_a_hundred_directories() {
        assert_eq!(small_path(0), "small/d00/f0000.txt");
        assert_eq!(small_path(9999), "small/d99/f9999.txt");
        assert_eq!(all_paths().len(), 10_002);
    }
}
