//! `rsrc ui`: a resource explorer in the browser for any MCP server, served by this process
//! on loopback.
//!
//! Invariants:
//! - The first line on stdout is the page's URL, carrying the random token; nothing else is
//!   printed there. Logs go to stderr.
//! - Every request needs the token (`guard.rs`): no page, asset, API answer or event
//!   reaches a caller without it, or from a Host other than an IP literal or `localhost`
//!   with our port, or from another Origin.
//! - Nothing a server sends runs in the page: the page is plain ES modules and CSS embedded
//!   in the binary under a strict Content-Security-Policy with Trusted Types, server text is
//!   only ever set as text, and Markdown is rendered and sanitised here (`render.rs`).
//! - Every call to a server is bounded by the timeout; a server that dies or stops
//!   answering is shown as disconnected, with a retry (`servers.rs`).
//!
//! This file holds the command's arguments and its run; beside it, `guard.rs` the token
//! and the checks on every request, `assets.rs` the embedded page, `servers.rs` the
//! connected targets (status, retry, live updates), `api.rs` the routes of the JSON API
//! and the event stream, `app.rs` what the routes share, `browse.rs`, `reads.rs` and
//! `search.rs` the API's work, `render.rs` how contents are prepared for the page,
//! `bundle.rs` the context basket's export.

mod api;
mod app;
mod assets;
mod browse;
mod bundle;
mod guard;
mod reads;
mod render;
mod search;
mod servers;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rsrc_client::{ClientOptions, EraPreference};

use servers::{Servers, Spec};

/// `rsrc ui`'s arguments.
#[derive(Args, Debug)]
pub(crate) struct UiArgs {
    /// Servers to explore by their Streamable HTTP endpoint (`http://…` or `https://…`).
    /// With no server at all, the bundled sample is explored.
    #[arg(value_name = "URL")]
    urls: Vec<String>,

    /// A stdio server to explore, as one command line (split like a shell would);
    /// repeatable.
    #[arg(short = 'c', long = "command", value_name = "COMMAND LINE")]
    commands: Vec<String>,

    /// A stdio server to explore: its command, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// Also open the page in the system's browser.
    #[arg(long)]
    open: bool,

    /// Where the page is served. Keep it on loopback: the token is all that guards it.
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR:PORT")]
    listen: SocketAddr,

    /// How long to wait for each answer from a server.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    timeout: Duration,

    /// Which protocol revision to speak: `auto` tries 2026-07-28 and falls back to
    /// `initialize`.
    #[arg(long, default_value = "auto", value_parser = crate::inspect::parse_era)]
    era: EraPreference,

    /// An HTTP header for every request to the HTTP servers, as `Name: value`; repeatable.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = crate::inspect::parse_header)]
    headers: Vec<(String, String)>,
}

impl UiArgs {
    /// The servers named on the command line, in order (URLs, `--command`s, then the
    /// command after `--`); the bundled sample when none is.
    fn specs(&self) -> Result<Vec<Spec>, String> {
        let mut specs = Vec::new();
        for url in &self.urls {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "{url}: a server is an http(s):// URL, a --command, or a command after `--`"
                ));
            }
            specs.push(Spec::Http(url.clone()));
        }
        for line in &self.commands {
            match shlex::split(line) {
                Some(argv) if !argv.is_empty() => specs.push(Spec::Stdio(argv)),
                _ => return Err(format!("--command {line:?}: not a command line")),
            }
        }
        if !self.command.is_empty() {
            specs.push(Spec::Stdio(self.command.clone()));
        }
        if specs.is_empty() {
            specs.push(Spec::Sample);
        }
        Ok(specs)
    }
}

/// Ends on Ctrl-C, or on SIGTERM where there are signals.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Runs `rsrc ui` until interrupted.
pub(crate) fn run(args: &UiArgs) -> Result<(), Box<dyn std::error::Error>> {
    let specs = args.specs()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let options = ClientOptions {
        request_timeout: args.timeout,
        probe_timeout: args.timeout.min(Duration::from_secs(5)),
        era: args.era,
        http_headers: args.headers.clone(),
        // Large enough for the largest preview; a larger answer is refused, not buffered.
        max_message: app::MAX_READ,
        trace_context: crate::telemetry::client_trace_context(),
        ..ClientOptions::default()
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen).await?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            tracing::warn!(%addr, "serving the page beyond loopback: anyone with the URL can use it");
        }
        let guard = guard::Guard::new(addr.port())?;
        let url = guard.url(addr);
        let servers = Servers::start(specs, &options)?;
        let app = api::router(Arc::clone(&servers), guard);
        {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{url}")?;
            out.flush()?;
        }
        if args.open
            && let Err(e) = open::that_detached(&url)
        {
            tracing::warn!(error = %e, "cannot open the browser: open the URL yourself");
        }
        // On Ctrl-C or SIGTERM: the event streams end (so the open pages let go), the
        // connections close, and the stdio servers are killed.
        let stopping = Arc::clone(&servers);
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                interrupted().await;
                stopping.stop();
            })
            .await?;
        Ok(())
    })
}
