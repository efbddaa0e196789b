//! The inspection commands as the command line names them, and how one runs: to
//! completion on a single-threaded runtime, after which the server it started (if any)
//! is reaped. Invariant: every command reaches its server through `target.rs`, and its
//! outcome is a [`Failure`] or nothing.

use clap::Subcommand;

use super::complete::{self, CompleteArgs};
use super::failure::{Failure, io_failure};
use super::ls::{self, LsArgs};
use super::read::{self, ReadArgs};
use super::stat::{self, StatArgs};
use super::target;
use super::templates::{self, TemplatesArgs};
use super::watch::{self, WatchArgs};

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
