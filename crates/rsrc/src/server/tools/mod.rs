//! The tools bridge: the resources of a server offered as four tools, for hosts whose model
//! only ever calls tools (most of them read no resource on their own, and several never
//! show templates).
//!
//! `list_resources`, `read_resource`, `search_resources` and `list_resource_templates` are
//! answered by the resource handlers themselves, so a tool sees exactly what the resource
//! methods return, with the same error messages. On top of them the bridge only shapes
//! results for a model: resource links and a compact table, embedded text cut at a limit
//! with an explicit note saying how to read on, pages small enough for a context window.
//!
//! Invariants:
//! - Enabling the bridge changes nothing in the resource methods.
//! - A failure of a tool (a missing resource, a bad argument) is a result with
//!   `isError: true` whose text is the message the resource method gives; only an unknown
//!   tool name is a JSON-RPC error (`-32602`).
//! - Every successful result carries `structuredContent` matching the tool's
//!   `outputSchema`, plus content blocks for hosts that ignore it.
//! - Work per call is bounded: at most `page` items returned, at most `scan` resources
//!   examined by a filter or a search, at most `max_text` characters of text.
//!
//! This file only declares and re-exports. The settings, the methods and the capability
//! are a leaf of the engine (`server/tools_config.rs`, read by the builder and the inside
//! state too); here `call.rs` holds `tools/list` and `tools/call` (the dispatch to each
//! tool and how a failure reads), `args.rs` the arguments and failures every tool shares, `definitions.rs` what
//! `tools/list` says of each tool, `shape.rs` how results are shaped for a model (items,
//! links, the compact table), and `list.rs`, `search.rs` and `read.rs` the tools
//! themselves.

mod args;
mod call;
mod definitions;
mod list;
mod read;
mod search;
mod shape;

pub(super) use call::{call, list};
