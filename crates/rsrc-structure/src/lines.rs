//! Files too long to read as one job. Invariant: every `.rs` file the sources hold is
//! counted, tests and fuzz targets too.

use crate::source::Sources;

/// The most lines a source file may have.
pub const MAX_LINES: usize = 700;

/// Every file of `sources` over [`MAX_LINES`] lines, with its count.
pub fn long_files(sources: &Sources) -> Vec<(String, usize)> {
    sources
        .files()
        .map(|(path, text)| (path.to_owned(), text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect()
}
