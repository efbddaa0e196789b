//! Matching: URI to variable values, the inverse of expansion.
//!
//! A template is split once, at parse time, into up to three sections:
//!
//! - the *path section*, matched in place by an automaton ([`mod@compile`], [`pike`]);
//! - an optional *query section* (a trailing `{?a,b}{&c}`, or a literal `?k=v` followed by
//!   `{&c}`), matched as an unordered set of `&`-separated parameters;
//! - an optional *fragment section* (from a trailing `{#f}` or a literal `#`), matched in
//!   place like the path.
//!
//! Templates whose query part does not have that shape (say `?q={q}` or `{?a}/x`) have no
//! query section: they are matched in place as a whole. Every step is linear in the URI
//! length; raw text is split into values on unencoded separators first, and each value is
//! percent-decoded once afterwards ([`values`]).
//!
//! This file only declares and re-exports: the sections and the match are in `matcher.rs`
//! ([`Matcher`]), above the automaton's compiler, its runner and the values' decoding.

mod compile;
mod matcher;
mod pike;
mod values;

pub(crate) use matcher::Matcher;
