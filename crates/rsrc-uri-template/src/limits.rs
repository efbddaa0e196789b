//! Limits enforced by [`UriTemplate::parse`](crate::UriTemplate::parse), which bound the
//! work of every operation. Invariant: a template within them is parsed, matched and
//! expanded in time linear in its length and the URI's.

/// Longest template, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 2048;
/// Most expressions (`{...}`) in one template.
pub const MAX_EXPRESSIONS: usize = 64;
/// Most variables in one template, counting every occurrence.
pub const MAX_VARIABLES: usize = 64;
/// Longest variable name, in bytes (as written, pct-encoded triplets included).
pub const MAX_VARNAME_LEN: usize = 128;
/// Largest prefix length `N` of `{var:N}` (set by RFC 6570).
pub const MAX_PREFIX: u16 = 9999;
