//! The benchmark's reference server on rmcp, the official Rust SDK (bench/servers/README.md):
//! every regular file under a directory as a `file:///` resource, over stdio or, with
//! `--http ADDR`, over Streamable HTTP at `/mcp` with stateful sessions.
//!
//! Invariant: it serves only the regular files under the directory it is given, lists
//! the index built once at startup and reads each file from disk at every request;
//! stdout carries only protocol messages (errors go to stderr).

mod handler;
mod index;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use axum::serve::ListenerExt as _;
use rmcp::ServiceExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::handler::FileServer;
use crate::index::Index;

/// The command line: `ROOT [--http ADDR]`.
struct Args {
    root: PathBuf,
    http: Option<SocketAddr>,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: mcp-bench-rmcp ROOT [--http 127.0.0.1:PORT]";
    let mut root = None;
    let mut http = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--http" {
            let addr = args.next().ok_or(usage)?;
            let addr = addr.to_str().ok_or(usage)?;
            http = Some(addr.parse().map_err(|e| format!("--http {addr}: {e}"))?);
        } else if root.is_none() {
            root = Some(PathBuf::from(arg));
        } else {
            return Err(usage.to_owned());
        }
    }
    Ok(Args {
        root: root.ok_or(usage)?,
        http,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let index = match Index::build(&args.root) {
        Ok(index) => Arc::new(index),
        Err(error) => {
            eprintln!("mcp-bench-rmcp: {}: {error}", args.root.display());
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-bench-rmcp: runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = match args.http {
        None => runtime.block_on(serve_stdio(index)),
        Some(addr) => runtime.block_on(serve_http(index, addr)),
    };
    // A blocking stdin read may still be pending: do not wait for it.
    runtime.shutdown_background();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-bench-rmcp: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Serves one client on stdin/stdout until stdin closes.
async fn serve_stdio(index: Arc<Index>) -> Result<(), Box<dyn std::error::Error>> {
    // Non-blocking pipes where stdin and stdout are pipes, as MCP clients launch servers.
    let service = FileServer::new(index)
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}

/// Serves Streamable HTTP at `http://ADDR/mcp` until SIGTERM or SIGINT.
async fn serve_http(index: Arc<Index>, addr: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let config = StreamableHttpServerConfig::default();
    let sessions_cancel = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(FileServer::new(index.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?.tap_io(|tcp| {
        // Small JSON-RPC messages: send each at once.
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("mcp-bench-rmcp: listening on http://{addr}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            // Ends the sessions' open SSE streams so the graceful shutdown can finish.
            sessions_cancel.cancel();
        })
        .await?;
    Ok(())
}

/// Resolves at the first SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
