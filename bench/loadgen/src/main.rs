//! `mcp-bench`: a reproducible benchmark of MCP servers' resources (docs/benchmark.md).
//!
//! Invariant: a wrong answer is never counted as speed.

fn main() {}
