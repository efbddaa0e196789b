//! `rsrc ls | read | stat | templates | complete | watch`: inspect any MCP server's
//! resources, over Streamable HTTP (a `http(s)://` URL) or stdio (a command after `--`).
//!
//! Invariants:
//! - Exit codes: 0 success, 1 the server answered with an error (its code and message are
//!   printed), 2 a usage error or a connection failure (including timeouts).
//! - stdout carries only the requested output (a table, JSON, or the resource's bytes);
//!   progress, warnings and errors go to stderr, and progress only when stderr is a
//!   terminal.
//! - Every listing follows cursors under a page cap, and `ls --tree` under a depth and a
//!   node cap, so no server can make a command run or grow without bound.
//!
//! This file is a facade. One file per command (`ls.rs`, `read.rs`, `stat.rs`,
//! `templates.rs`, `complete.rs`, `watch.rs`), each holding its arguments and its run;
//! `command.rs` the commands as the command line names them and how one runs;
//! `target.rs` how every command reaches its server; `failure.rs` the failure that
//! decides the exit code; `output.rs` the only writers to stdout and stderr;
//! `render.rs` tables, trees and cleaned text.

mod command;
mod complete;
mod failure;
mod ls;
mod output;
mod read;
mod render;
mod stat;
mod target;
mod templates;
mod watch;

pub(crate) use command::{InspectCommand, run};
pub(crate) use render::clean;
pub(crate) use target::{parse_era, parse_header};
