//! Exempted imports: an edge a check lets through, named by its two files and given a
//! reason. Invariant: an exemption covers exactly one edge, so a new import inside a knot
//! is never covered by an old entry, and one that covers nothing any more is reported.

use crate::imports::Imports;

/// One import the checks let through.
#[derive(Debug, Clone, Copy)]
pub struct Allowed {
    /// The importing file.
    pub from: &'static str,
    /// The imported file.
    pub to: &'static str,
    /// Why this import stays.
    pub why: &'static str,
}

/// Takes every allowed edge out of `imports`; the entries that matched no edge, each
/// told as a failure (the list only shrinks).
pub fn stale(allowed: &[Allowed], imports: &mut Imports) -> Vec<String> {
    allowed
        .iter()
        .filter(|a| !imports.remove(a.from, a.to))
        .map(|a| {
            format!(
                "allowed import no longer found: {} -> {}: take it out of the list",
                a.from, a.to
            )
        })
        .collect()
}
