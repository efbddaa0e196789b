//! The index of a directory tree that the server lists: every regular file under the
//! root, walked once at startup without following symlinks, with its `file:///` URI,
//! name, MIME type and size.
//!
//! Invariant: every entry's path is a regular file found under the root by the walk,
//! and its URI is the percent-encoded path relative to the root; a URI given back by
//! a client resolves to a path under the root or to nothing.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rmcp::model::Resource;

/// The scheme and empty authority every URI starts with.
pub(crate) const URI_PREFIX: &str = "file:///";

/// One file of the tree: where it is and what `resources/list` says of it.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The file's path on disk (the root joined with the relative path).
    pub(crate) path: PathBuf,
    /// The listing entry: URI, name, MIME type, size.
    pub(crate) resource: Resource,
}

/// The files under a root, in the order of their relative paths, with a map from URI
/// to position.
#[derive(Debug)]
pub(crate) struct Index {
    /// The root, canonical (absolute, no symlinks).
    pub(crate) root: PathBuf,
    /// The files, sorted by relative path.
    pub(crate) entries: Vec<Entry>,
    by_uri: HashMap<String, usize>,
}

/// Why a URI names no file of the tree.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resolve {
    /// Not a `file:///` URI, badly encoded, or no such regular file.
    NotFound,
    /// A `..` segment (or a symlink) would leave the root.
    Escapes,
}

impl Index {
    /// Walks `root` (depth first, symlinks not followed) and indexes its regular files.
    pub(crate) fn build(root: &Path) -> io::Result<Self> {
        let root = root.canonicalize()?;
        let mut files = Vec::new();
        walk(&root, &mut Vec::new(), &mut files)?;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut entries = Vec::with_capacity(files.len());
        let mut by_uri = HashMap::with_capacity(files.len());
        for (rel, size) in files {
            let uri = uri_of(&rel);
            let rel_path = Path::new(OsStr::from_bytes(&rel));
            let name = rel_path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let resource = Resource::new(uri.clone(), name)
                .with_mime_type(mime_of(rel_path))
                .with_size(size);
            by_uri.insert(uri, entries.len());
            entries.push(Entry {
                path: root.join(rel_path),
                resource,
            });
        }
        Ok(Self {
            root,
            entries,
            by_uri,
        })
    }

    /// The indexed file with this URI.
    pub(crate) fn get(&self, uri: &str) -> Option<&Entry> {
        self.by_uri.get(uri).map(|&at| &self.entries[at])
    }

    /// What the template `file:///{+path}` names: the regular file at the decoded
    /// relative path, if it is under the root (a file added since startup included).
    pub(crate) fn resolve(&self, uri: &str) -> Result<PathBuf, Resolve> {
        let rel = uri.strip_prefix(URI_PREFIX).ok_or(Resolve::NotFound)?;
        let rel = percent_decode(rel).ok_or(Resolve::NotFound)?;
        let mut path = self.root.clone();
        for segment in rel.split(|&byte| byte == b'/') {
            match segment {
                b".." => return Err(Resolve::Escapes),
                b"" | b"." => {}
                _ => path.push(OsStr::from_bytes(segment)),
            }
        }
        let meta = std::fs::symlink_metadata(&path).map_err(|_| Resolve::NotFound)?;
        if !meta.is_file() {
            return Err(Resolve::NotFound);
        }
        // A symlinked directory on the way could lead out of the root.
        let real = path.canonicalize().map_err(|_| Resolve::NotFound)?;
        if !real.starts_with(&self.root) {
            return Err(Resolve::Escapes);
        }
        Ok(path)
    }
}

/// Collects `(relative path bytes, size)` for every regular file under `dir`.
fn walk(dir: &Path, rel: &mut Vec<u8>, out: &mut Vec<(Vec<u8>, u64)>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // DirEntry::file_type does not follow symlinks.
        let kind = entry.file_type()?;
        let len = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(entry.file_name().as_bytes());
        if kind.is_dir() {
            walk(&entry.path(), rel, out)?;
        } else if kind.is_file() {
            out.push((rel.clone(), entry.metadata()?.len()));
        }
        rel.truncate(len);
    }
    Ok(())
}

/// `file:///` and the relative path, each byte outside RFC 3986's unreserved and
/// sub-delims characters and `/` percent-encoded.
pub(crate) fn uri_of(rel: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut uri = String::with_capacity(URI_PREFIX.len() + rel.len());
    uri.push_str(URI_PREFIX);
    for &byte in rel {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push('%');
            uri.push(char::from(HEX[usize::from(byte >> 4)]));
            uri.push(char::from(HEX[usize::from(byte & 15)]));
        }
    }
    uri
}

/// The bytes a percent-encoded string stands for; `None` for a bad escape.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    Some(out)
}

/// The MIME type for a file name's extension: the benchmark's fixed table, the same in
/// every reference server, `application/octet-stream` for anything else.
pub(crate) fn mime_of(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .map(|ext| ext.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_is_not_unreserved_or_a_sub_delim() {
        assert_eq!(uri_of(b"a b/c%d.txt"), "file:///a%20b/c%25d.txt");
        assert_eq!(uri_of(b"x/y-z_~!.txt"), "file:///x/y-z_~!.txt");
        assert_eq!(percent_decode("a%20b/c%25d.txt").unwrap(), b"a b/c%d.txt");
        assert_eq!(percent_decode("bad%2"), None);
    }

    #[test]
    fn mime_types_come_from_the_table() {
        assert_eq!(mime_of(Path::new("a/b.TXT")), "text/plain");
        assert_eq!(mime_of(Path::new("a/b.bin")), "application/octet-stream");
        assert_eq!(mime_of(Path::new("noext")), "application/octet-stream");
    }
}
