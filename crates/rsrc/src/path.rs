//! [`RelativePath`]: a path taken from a URI that is safe to join onto a directory.
//!
//! Invariant: a `RelativePath` is zero or more segments, none of them empty, `.` or `..`,
//! and none holding `/` or NUL (nor, on Windows, `\` or `:`), so joining it onto a base
//! never leaves the base lexically. Symbolic links inside the base are the caller's
//! affair: a provider that must stay inside a directory opens files beneath it (as
//! `rsrc-providers`' file provider does), not only joins paths.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A relative path from a URI, checked segment by segment: what a template variable such
/// as `{+path}` or `{/segments*}` should become before it meets the filesystem.
///
/// ```
/// use rsrc::declare::RelativePath;
///
/// let p: RelativePath = "notes/2024/todo.md".parse().unwrap();
/// assert_eq!(p.join_to("/srv/data"), std::path::Path::new("/srv/data/notes/2024/todo.md"));
/// for bad in ["../etc/passwd", "/etc/passwd", "a//b", "a/./b", "a\0b"] {
///     assert!(bad.parse::<RelativePath>().is_err(), "{bad:?}");
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelativePath {
    /// The segments joined by `/`; empty for no segment.
    text: String,
}

/// Why a value is not a [`RelativePath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidPath {
    segment: String,
}

impl fmt::Display for InvalidPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a path segment: segments are not empty, `.` or `..`, and hold no `/` or NUL",
            self.segment
        )
    }
}

impl std::error::Error for InvalidPath {}

fn check_segment(segment: &str) -> Result<(), InvalidPath> {
    let bad = matches!(segment, "" | "." | "..")
        || segment.contains(['/', '\0'])
        || (cfg!(windows) && segment.contains(['\\', ':']));
    if bad {
        return Err(InvalidPath {
            segment: segment.to_owned(),
        });
    }
    Ok(())
}

impl RelativePath {
    /// A path from its segments, each checked.
    pub fn from_segments<S: AsRef<str>>(
        segments: impl IntoIterator<Item = S>,
    ) -> Result<Self, InvalidPath> {
        let mut text = String::new();
        for s in segments {
            let s = s.as_ref();
            check_segment(s)?;
            if !text.is_empty() {
                text.push('/');
            }
            text.push_str(s);
        }
        Ok(RelativePath { text })
    }

    /// The segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.text.split('/').filter(|s| !s.is_empty())
    }

    /// Whether the path has no segment (it names the base itself).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The segments joined by `/`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `base` with this path's segments appended: a path at or below `base`.
    pub fn join_to(&self, base: impl AsRef<Path>) -> PathBuf {
        let mut out = base.as_ref().to_path_buf();
        out.extend(self.segments());
        out
    }
}

/// Parses segments separated by `/` (no leading or trailing `/`); the empty string is the
/// empty path.
impl FromStr for RelativePath {
    type Err = InvalidPath;

    fn from_str(s: &str) -> Result<Self, InvalidPath> {
        if s.is_empty() {
            return Ok(RelativePath::default());
        }
        RelativePath::from_segments(s.split('/'))
    }
}

impl fmt::Display for RelativePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl AsRef<str> for RelativePath {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_that_could_leave_the_base_are_refused() {
        for bad in ["..", "a/../b", "/abs", "a/", "a//b", ".", "a/./b", "nul\0"] {
            assert!(bad.parse::<RelativePath>().is_err(), "{bad:?}");
        }
        assert!(RelativePath::from_segments(["a/b"]).is_err());
        assert!(RelativePath::from_segments(["..", "x"]).is_err());
    }

    #[test]
    fn a_valid_path_joins_below_its_base() {
        let p = RelativePath::from_segments(["docs", "a b.md"]).unwrap();
        assert_eq!(p.as_str(), "docs/a b.md");
        assert_eq!(p.segments().collect::<Vec<_>>(), ["docs", "a b.md"]);
        assert_eq!(p.join_to("/base"), Path::new("/base/docs/a b.md"));
        let empty: RelativePath = "".parse().unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.join_to("/base"), Path::new("/base"));
        assert_eq!(empty.segments().count(), 0);
    }
}
