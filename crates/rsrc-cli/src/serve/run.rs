//! Running `rsrc serve`: the configuration loaded (or printed), telemetry installed, the
//! server built and served over stdio or Streamable HTTP, then the shutdown sequence.
//!
//! Invariant: unless told to use more threads, the whole server runs on one thread (a
//! current-thread runtime), so a request is decoded, served and encoded without a thread
//! hop.

use std::sync::Arc;

use rsrc::transport::{StreamConfig, serve_stdio};

use super::admin;
use super::args::ServeArgs;
use super::build::build;
use super::config::Config;
use super::drain::Drain;
use super::http::serve_http;
use super::values::Listen;
use crate::telemetry::{self, LogFormat, TraceSettings};

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
    verbose: u8,
    log_format: LogFormat,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::load(args, matches)?;
    if args.print_config {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(config.to_toml()?.as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    let traces = TraceSettings::resolve(&config.tracing, |name| std::env::var(name).ok())?;
    let telemetry = telemetry::init(verbose, log_format, traces.as_ref())?;
    // Installed before the server is built, so that nothing it records is lost.
    let metrics = match config.admin.listen {
        Some(_) => Some(admin::install_recorder()?),
        None => None,
    };
    let runtime = serving_runtime(&config)?;
    let server = build(&config, &runtime, telemetry.request_tracing())?;
    let health = Arc::new(admin::Health::default());
    if let (Some(Listen(addr)), Some(metrics)) = (config.admin.listen, metrics) {
        let listener = runtime.block_on(admin::bind(addr, config.http.allow_remote))?;
        let _in_runtime = runtime.enter();
        admin::spawn(listener, &server, &health, metrics);
    }
    let drains = config.admin.listen.is_some();
    let drain = Drain::new(Arc::clone(&health), drains.then_some(config.drain_delay.0));
    if let Some(Listen(addr)) = config.http.listen {
        return serve_http(&config, &server, addr, &runtime, drain);
    }
    let stream = StreamConfig {
        max_line: usize::try_from(config.max_message.0).unwrap_or(usize::MAX),
        max_in_flight: config.max_in_flight.max(1),
        shutdown_grace: config.shutdown_grace.0,
        ..StreamConfig::default()
    };
    let served = runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        health.listening();
        let served = serve_stdio(&server, &stream);
        let served = if drains {
            tokio::select! {
                served = served => served,
                () = drain.then_stop() => Ok(()),
            }
        } else {
            served.await
        };
        server.leave_cluster().await;
        served
    });
    // Stopped by a signal, stdin may still be read by a blocking thread (a terminal):
    // the runtime does not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(served?)
}
