//! The rule for source names: what may name a served directory, database or repository
//! (`NAME=…` on the command line, `name` in a configuration file).
//!
//! A source's name is written into its URIs, so the rule is that it stays one thing
//! there:
//! - [`is_segment_name`]: one URI segment that the provider percent-encodes when it writes
//!   it (a directory's root `file:///NAME/…`, a database's `db://NAME/…`): anything but
//!   the empty name, the dot segments `.` and `..` (which URI normalisation removes from a
//!   path, or climbs out of), and names holding `/` (a separator) or NUL. A database's
//!   name is its URI's authority, where dots would be harmless; it follows the same rule
//!   so that one rule covers every name written as a segment.
//! - [`is_host_name`]: a name written *unencoded* as a URI's authority (a repository's
//!   `git://NAME/…`, so that the provider's templates read as the user wrote them):
//!   lowercase ASCII letters, digits, `-`, `.`, `_`, at most 63 bytes, which every URI
//!   parser reads back as the same registered name.
//!
//! Skills follow a third rule on purpose: a skills directory's name is the first segment
//! of a skill's path, so it obeys the Agent Skills naming rules like every other segment
//! there (`skills::manifest::check_name`).
//!
//! Invariant: a name these functions accept round-trips through the URIs of its
//! provider: it parses back as exactly that name and never as a separator or a dot
//! segment.

/// Whether `name` can name a source whose URIs carry it as one percent-encoded segment.
#[cfg(any(feature = "fs", feature = "sqlite", feature = "postgres"))]
pub(crate) fn is_segment_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// Whether `name` can be written unencoded as the authority of a source's URIs.
#[cfg(feature = "git")]
pub(crate) fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(feature = "fs", feature = "sqlite", feature = "postgres"))]
    #[test]
    fn a_segment_name_is_one_segment_and_no_dot_segment() {
        for ok in ["docs", "my db", "a.b", "%41", "ünïcode", "..."] {
            assert!(is_segment_name(ok), "{ok:?}");
        }
        for bad in ["", ".", "..", "a/b", "/", "a\0b"] {
            assert!(!is_segment_name(bad), "{bad:?}");
        }
    }

    #[cfg(feature = "git")]
    #[test]
    fn a_host_name_is_lowercase_and_short() {
        for ok in ["repo", "my-repo.v2_x", "0"] {
            assert!(is_host_name(ok), "{ok:?}");
        }
        for bad in ["", "Repo", "a b", "a/b", "a:1", "ü", &"x".repeat(64)] {
            assert!(!is_host_name(bad), "{bad:?}");
        }
    }
}
