//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: unless told to use more threads, the whole server runs on one thread (a
//! current-thread runtime), so a request is decoded, served and encoded without a thread
//! hop.
//!
//! This file runs the server (the runtime, stdio); beside it, `args.rs` holds the flags,
//! `sources.rs` reads a source argument, `build.rs` builds the server from the
//! configuration, `secrets.rs` reads secret files and masks passwords, and `http.rs`
//! serves it over Streamable HTTP.

mod args;
mod build;
mod http;
mod secrets;
mod sources;

use rsrc::transport::{StreamConfig, serve_stdio};

use crate::config::{Config, Listen};
pub(crate) use args::{HttpArgs, ServeArgs};
pub(crate) use build::CONVERT_WORKER;
use build::build;
use http::serve_http;
pub(crate) use secrets::{check_private, redact};
pub(crate) use sources::{absolute_source, parse_source};

/// The runtime that serves: one thread, unless HTTP is given more.
fn serving_runtime(config: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    let threads = config.http.threads;
    if config.http.listen.is_none() || threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(threads))
            .enable_all()
            .build()
    }
}

pub(crate) fn run(
    args: &ServeArgs,
    matches: &clap::ArgMatches,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::load(args, matches)?;
    if args.print_config {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(config.to_toml()?.as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    let runtime = serving_runtime(&config)?;
    let server = build(&config, &runtime)?;
    if let Some(Listen(addr)) = config.http.listen {
        return serve_http(&config, &server, addr, &runtime);
    }
    let stream = StreamConfig {
        max_line: usize::try_from(config.max_message.0).unwrap_or(usize::MAX),
        max_in_flight: config.max_in_flight.max(1),
        shutdown_grace: config.shutdown_grace.0,
        ..StreamConfig::default()
    };
    runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        let served = serve_stdio(&server, &stream).await;
        server.leave_cluster().await;
        served
    })?;
    Ok(())
}
