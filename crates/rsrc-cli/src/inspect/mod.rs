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
//! One file per command (`ls.rs`, `read.rs`, `stat.rs`, `templates.rs`, `complete.rs`,
//! `watch.rs`), each holding its arguments and its run; `target.rs` is how every command
//! reaches its server; this file holds what they share: the failure type that decides the
//! exit code, and the only writers to stdout and stderr.

mod complete;
mod ls;
mod read;
mod render;
mod stat;
mod target;
mod templates;
mod watch;

pub(crate) use render::clean;
pub(crate) use target::{parse_era, parse_header};

use std::io::Write;

use clap::Subcommand;
use rsrc_client::ClientError;

use complete::CompleteArgs;
use ls::LsArgs;
use read::ReadArgs;
use stat::StatArgs;
use templates::TemplatesArgs;
use watch::WatchArgs;

/// The inspection commands.
#[derive(Subcommand, Debug)]
pub(crate) enum InspectCommand {
    /// List a server's resources (or a collection's children) as a table, a tree or JSON.
    #[command(override_usage = "rsrc ls [OPTIONS] <URL>\n       rsrc ls [OPTIONS] -- <COMMAND>...")]
    Ls(LsArgs),
    /// Read a resource: text to stdout, a blob as its bytes.
    #[command(
        override_usage = "rsrc read [OPTIONS] <URL> <URI>\n       rsrc read [OPTIONS] <URI> -- <COMMAND>..."
    )]
    Read(ReadArgs),
    /// Show a resource's metadata (`resources/metadata` where the server declares it, else
    /// its listing entry or its read).
    #[command(
        override_usage = "rsrc stat [OPTIONS] <URL> <URI>\n       rsrc stat [OPTIONS] <URI> -- <COMMAND>..."
    )]
    Stat(StatArgs),
    /// List the server's resource templates.
    #[command(
        override_usage = "rsrc templates [OPTIONS] <URL>\n       rsrc templates [OPTIONS] -- <COMMAND>..."
    )]
    Templates(TemplatesArgs),
    /// Ask the server to complete a template variable.
    #[command(
        override_usage = "rsrc complete [OPTIONS] <URL> <URI-TEMPLATE> <VAR> <PREFIX>\n       rsrc complete [OPTIONS] <URI-TEMPLATE> <VAR> <PREFIX> -- <COMMAND>..."
    )]
    Complete(CompleteArgs),
    /// Subscribe to resources and print each change until interrupted.
    #[command(
        override_usage = "rsrc watch [OPTIONS] <URL> <URI>...\n       rsrc watch [OPTIONS] <URI>... -- <COMMAND>..."
    )]
    Watch(WatchArgs),
}

impl InspectCommand {
    /// The command's name, as typed (`rsrc ls`, …).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            InspectCommand::Ls(_) => "rsrc ls",
            InspectCommand::Read(_) => "rsrc read",
            InspectCommand::Stat(_) => "rsrc stat",
            InspectCommand::Templates(_) => "rsrc templates",
            InspectCommand::Complete(_) => "rsrc complete",
            InspectCommand::Watch(_) => "rsrc watch",
        }
    }
}

/// Why a command failed, and so its exit code.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Exit 1: the server answered with an error.
    Server(String),
    /// Exit 2: bad usage, or the server could not be reached or stopped answering.
    Usage(String),
}

impl Failure {
    /// The process exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Failure::Server(_) => 1,
            Failure::Usage(_) => 2,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Server(m) | Failure::Usage(m) => f.write_str(m),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        // What the server does not offer is the server's answer, as -32601 would be.
        if let ClientError::NotOffered(m) = &e {
            return Failure::Server(m.clone());
        }
        match e.rpc() {
            Some(err) => {
                let mut m = format!("server error {}: {}", err.code.0, err.message);
                if let Some(data) = &err.data {
                    m.push_str(&format!(" ({data})"));
                }
                Failure::Server(m)
            }
            None => Failure::Usage(e.to_string()),
        }
    }
}

fn io_failure(what: &str, e: &std::io::Error) -> Failure {
    Failure::Usage(format!("{what}: {e}"))
}
/// Runs an inspection command to completion on a single-threaded runtime.
pub(crate) fn run(command: InspectCommand) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_failure("cannot start the runtime", &e))?;
    runtime.block_on(async move {
        let done = match command {
            InspectCommand::Ls(a) => ls::run(a).await,
            InspectCommand::Read(a) => read::run(a).await,
            InspectCommand::Stat(a) => stat::run(a).await,
            InspectCommand::Templates(a) => templates::run(a).await,
            InspectCommand::Complete(a) => complete::run(a).await,
            InspectCommand::Watch(a) => watch::run(a).await,
        };
        target::reap().await;
        done
    })
}
fn stdout_write(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe (`rsrc ls … | head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| io_failure("cannot write to stdout", &e)),
    }
}

fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<(), Failure> {
    let mut text = render::json_safe(
        serde_json::to_string_pretty(value)
            .map_err(|e| Failure::Usage(format!("cannot encode JSON: {e}")))?,
    );
    text.push('\n');
    stdout_write(text.as_bytes())
}

/// A message on stderr; it may quote the server, so it is cleaned first.
fn warn(message: &str) {
    eprintln!("rsrc: {}", render::clean(message));
}
