//! A path beneath a served directory, as validated components, and its URI form. Shared
//! by the providers that serve directories through a capability handle (`fs`, `skills`).
//!
//! A [`RelPath`] is a list of components, each non-empty, never `.` or `..`, never holding
//! `/` or NUL. URIs are parsed segment by segment and each segment is percent-decoded
//! exactly once *after* splitting on `/`, so `%2F` can never act as a separator and `..`
//! (plain or encoded) is refused rather than resolved. File names that are not UTF-8 are
//! written as percent-encoded bytes and read back byte for byte.
//!
//! Invariant: `encode` and `decode` are inverse on every [`RelPath`]; two different
//! components never encode to the same segment.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
#[cfg(feature = "fs")]
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

#[cfg(feature = "fs")]
use super::segment::decode;
use super::segment::push_path_segment;

/// A path inside a root, as validated components, ordered component by component.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RelPath(Vec<OsString>);

impl RelPath {
    /// The root itself.
    pub(crate) fn root() -> Self {
        RelPath(Vec::new())
    }

    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn components(&self) -> &[OsString] {
        &self.0
    }

    /// The last component, if any.
    pub(crate) fn name(&self) -> Option<&OsStr> {
        self.0.last().map(OsString::as_os_str)
    }

    /// Descends into `name`, in place.
    #[cfg(feature = "fs")]
    pub(crate) fn push(&mut self, name: &OsStr) {
        self.0.push(name.to_os_string());
    }

    pub(crate) fn join(&self, name: &OsStr) -> RelPath {
        let mut c = self.0.clone();
        c.push(name.to_os_string());
        RelPath(c)
    }

    #[cfg(feature = "skills")]
    pub(crate) fn parent(&self) -> Option<RelPath> {
        (!self.0.is_empty()).then(|| RelPath(self.0[..self.0.len() - 1].to_vec()))
    }

    /// A path the filesystem gave relative to the root (a canonical one: no `.`, `..` or
    /// absolute parts); `None` for anything else.
    pub(crate) fn from_canonical(path: &std::path::Path) -> Option<RelPath> {
        use std::path::Component;
        path.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(RelPath)
    }

    /// The path for the filesystem, relative to the root directory (`.` for the root).
    pub(crate) fn to_path(&self) -> PathBuf {
        if self.0.is_empty() {
            PathBuf::from(".")
        } else {
            self.0.iter().collect()
        }
    }

    /// The percent-encoded segments joined by `/` (empty for the root).
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                out.push('/');
            }
            push_path_segment(&mut out, c.as_bytes());
        }
        out
    }

    /// The bytes of the path with `/` between components: a keyset position.
    #[cfg(feature = "fs")]
    pub(crate) fn to_position(&self) -> Vec<u8> {
        self.0
            .iter()
            .map(|c| c.as_bytes())
            .collect::<Vec<_>>()
            .join(&b'/')
    }

    /// Reads back [`RelPath::to_position`]; `None` if the bytes are not one.
    #[cfg(feature = "fs")]
    pub(crate) fn from_position(bytes: &[u8]) -> Option<RelPath> {
        if bytes.is_empty() {
            return Some(RelPath::root());
        }
        bytes
            .split(|&b| b == b'/')
            .map(|c| check_component(c).map(|c| OsString::from_vec(c.to_vec())))
            .collect::<Option<Vec<_>>>()
            .map(RelPath)
    }

    /// Parses the path part of a URI (after the root's prefix): `/`-separated segments,
    /// each percent-decoded once. One trailing `/` is accepted (`dir/` is `dir`).
    #[cfg(feature = "fs")]
    pub(crate) fn decode(path: &str) -> Result<RelPath, String> {
        let path = path.strip_suffix('/').unwrap_or(path);
        if path.is_empty() {
            return Ok(RelPath::root());
        }
        if path.contains(['?', '#']) {
            return Err("file URIs take no query or fragment".into());
        }
        let mut components = Vec::new();
        for segment in path.split('/') {
            let bytes = decode(segment);
            if check_component(&bytes).is_none() {
                return Err(match bytes.as_slice() {
                    b"" => "empty path segment".into(),
                    b"." | b".." => format!("path segment {segment:?} is not allowed"),
                    _ => format!("path segment {segment:?} decodes to a separator or NUL"),
                });
            }
            components.push(OsString::from_vec(bytes));
        }
        Ok(RelPath(components))
    }
}

#[cfg(feature = "fs")]
fn check_component(c: &[u8]) -> Option<&[u8]> {
    let ok = !c.is_empty() && c != b"." && c != b".." && !c.contains(&b'/') && !c.contains(&0);
    ok.then_some(c)
}

#[cfg(all(test, feature = "fs"))]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_and_decoded_once() {
        let p = RelPath::decode("docs/a%20b/%2541.txt").unwrap();
        assert_eq!(p.components(), ["docs", "a b", "%41.txt"]);
        assert_eq!(p.encode(), "docs/a%20b/%2541.txt");
        let odd = RelPath(vec![
            OsString::from("100% [x]#?.md"),
            OsString::from_vec(vec![0xff, b'a']),
        ]);
        let encoded = odd.encode();
        assert!(!encoded.contains(['[', '#', '?', ' ']));
        assert_eq!(RelPath::decode(&encoded).unwrap(), odd);
        assert_eq!(RelPath::decode("dir/").unwrap().components(), ["dir"]);
        assert!(RelPath::decode("").unwrap().is_root());
    }

    #[test]
    fn traversal_and_smuggled_separators_are_refused() {
        for bad in [
            "..",
            "a/../b",
            "a/%2e%2e/b",
            "%2E%2E",
            ".",
            "a/./b",
            "a//b",
            "..%2Fetc%2Fpasswd",
            "a%2Fb",
            "a%00b",
            "a?x=1",
            "a#frag",
        ] {
            assert!(RelPath::decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn positions_round_trip_and_reject_garbage() {
        let p = RelPath::decode("d000/f00001.txt").unwrap();
        assert_eq!(RelPath::from_position(&p.to_position()), Some(p));
        assert_eq!(RelPath::from_position(b"a//b"), None);
        assert_eq!(RelPath::from_position(b"a/../b"), None);
        assert_eq!(RelPath::from_position(b""), Some(RelPath::root()));
    }

    #[test]
    fn component_order_is_not_string_order() {
        // "a/b" < "a-c" component-wise ("a" < "a-c"), although "a-c" < "a/b" as strings.
        let ab = RelPath::decode("a/b").unwrap();
        let ac = RelPath::decode("a-c").unwrap();
        assert!(ab < ac);
    }
}
