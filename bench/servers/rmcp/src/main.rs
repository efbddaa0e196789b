//! The benchmark's reference server on rmcp (docs/benchmark.md).
//!
//! Invariant: it serves only the regular files under the directory it is given.

fn main() {}
