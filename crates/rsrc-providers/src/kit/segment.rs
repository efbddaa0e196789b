//! URI segment encoding, shared by every provider that writes names into URIs: file and
//! directory names (`fs`, `git` paths, `skills`), and values a template variable stands for
//! (database names and keys, git refs).
//!
//! Two ways of writing one segment:
//! - [`push_path_segment`] keeps every character RFC 3986 allows in a path segment
//!   (`pchar`) and percent-encodes the rest, `%` included: `a b+c.md` is `a%20b+c.md`.
//! - [`push_expanded`] keeps only RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`),
//!   exactly what RFC 6570 simple expansion (`{var}`) writes, so that a URI a provider
//!   lists equals the one a client builds from its template: `feature/x` is `feature%2Fx`.
//!
//! Invariant: each writes one segment only — `/`, `?`, `#` and `%` are always encoded —
//! and [`decode`] gives back exactly the bytes written (non-UTF-8 bytes included), so a
//! name never turns into a separator and two names never share a segment.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};

/// Characters kept in a path segment: RFC 3986 `pchar` minus `%`.
#[cfg(any(feature = "fs", feature = "git", feature = "skills"))]
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// Characters kept by RFC 6570 simple expansion: RFC 3986's unreserved characters.
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "git"))]
const EXPANDED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Appends `name` as one path segment (see the module docs).
#[cfg(any(feature = "fs", feature = "git", feature = "skills"))]
pub(crate) fn push_path_segment(out: &mut String, name: &[u8]) {
    out.extend(percent_encode(name, PATH_SEGMENT));
}

/// Appends `value` as RFC 6570 simple expansion writes it (see the module docs).
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "git"))]
pub(crate) fn push_expanded(out: &mut String, value: &[u8]) {
    out.extend(percent_encode(value, EXPANDED));
}

/// The bytes of one raw segment, percent-decoded once.
#[cfg(any(
    feature = "fs",
    feature = "sqlite",
    feature = "postgres",
    feature = "git"
))]
pub(crate) fn decode(raw: &str) -> Vec<u8> {
    std::borrow::Cow::from(percent_encoding::percent_decode_str(raw)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(feature = "fs", feature = "git", feature = "skills"))]
    #[test]
    fn a_path_segment_keeps_pchar_and_round_trips() {
        let mut s = String::new();
        push_path_segment(&mut s, "a b+c,d@e:f=g.md".as_bytes());
        assert_eq!(s, "a%20b+c,d@e:f=g.md");
        for name in [&b"100% [x]#?/.md"[..], &[0xff, b'a', 0], "ü".as_bytes()] {
            let mut s = String::new();
            push_path_segment(&mut s, name);
            assert!(!s.contains(['/', '?', '#', '[', ' ']), "{s}");
            assert_eq!(decode(&s), name);
        }
    }

    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "git"))]
    #[test]
    fn an_expanded_value_keeps_only_unreserved_characters() {
        let mut s = String::new();
        push_expanded(&mut s, b"feature/x,y$z~-._");
        assert_eq!(s, "feature%2Fx%2Cy%24z~-._");
        assert_eq!(decode(&s), b"feature/x,y$z~-._");
    }
}
