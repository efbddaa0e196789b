//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: on stdio the whole server runs on one thread (a current-thread runtime), so
//! a request is decoded, served and encoded without a thread hop.

use std::time::Duration;

use clap::Args;
use rsrc::transport::{StreamConfig, serve_stdio};
use rsrc::{Server, ServerConfig};

/// Options of `rsrc serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Resources per `resources/list` page.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    page_size: u32,

    /// Longest accepted message, in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    max_message: usize,

    /// Most requests handled at once per connection.
    #[arg(long, default_value_t = 128)]
    max_in_flight: usize,

    /// How long requests in flight may finish after stdin closes.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,
}

const INSTRUCTIONS: &str = "This server exposes resources. Use resources/list to browse, \
resources/list with a collection's uri to list its children, resources/metadata for \
metadata without content, and resources/read for content.";

fn build(args: &ServeArgs) -> Result<Server, Box<dyn std::error::Error>> {
    let config = ServerConfig {
        page_size: args.page_size as usize,
        ..ServerConfig::default()
    };
    let server = Server::builder("rsrc", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .mount(crate::sample::PREFIX, crate::sample::sample())
        .config(config)
        .build()?;
    Ok(server)
}

pub(crate) fn run(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let server = build(args)?;
    let stream = StreamConfig {
        max_line: args.max_message,
        max_in_flight: args.max_in_flight.max(1),
        shutdown_grace: args.shutdown_grace,
        ..StreamConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        serve_stdio(&server, &stream).await
    })?;
    Ok(())
}
