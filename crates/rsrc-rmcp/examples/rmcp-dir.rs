//! An rmcp server serving a directory through rsrc's filesystem provider: the jail (no
//! path outside it, no escaping link), the visibility rules (hidden and `.gitignore`d
//! files are not served), format alternatives, and `notifications/resources/updated` on
//! file writes (Linux), over subscribe (2025) and listen (2026-07-28).
//!
//! ```sh
//! cargo run -p rsrc-rmcp --example rmcp-dir -- DIR                          # stdio
//! cargo run -p rsrc-rmcp --example rmcp-dir -- DIR --http 127.0.0.1:8080    # Streamable HTTP
//! ```
//!
//! `--conformance-fixtures` also serves the `test://` resources of the official
//! conformance suite's resource scenarios (`rsrc serve`'s fixture, the same file), as
//! `scripts/rmcp` runs it.

mod common;

// `rsrc serve --conformance-fixtures`'s fixture; only its resources are reached here
// (rmcp answers tools/list and prompts/list itself).
#[allow(dead_code)]
#[path = "../../rsrc-cli/src/conformance.rs"]
mod conformance;

use std::path::PathBuf;

use rmcp::ServerHandler;
use rsrc_providers::fs::{FsConfig, FsProvider, PREFIX, default_root_name};
use rsrc_rmcp::{Resources, resource_handler};

/// The whole server: resources only.
#[derive(Clone)]
struct FsServer {
    resources: Resources,
}

#[resource_handler]
impl ServerHandler for FsServer {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(Default::default())
            .with_server_info(rmcp::model::Implementation::new("rsrc-rmcp-fs", "0.1.0"))
    }
}

// rmcp runs each request on a task of its own: as rmcp's examples, on every core.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let (mut args, http) = common::args();
    let fixtures = args.iter().any(|a| a == "--conformance-fixtures");
    args.retain(|a| a != "--conformance-fixtures");
    let [dir] = args.as_slice() else {
        eprintln!("usage: rmcp-dir DIR [--http ADDR] [--conformance-fixtures]");
        std::process::exit(2);
    };
    let dir = PathBuf::from(dir);
    let provider = FsProvider::new(vec![(default_root_name(&dir), dir)], FsConfig::default())?;
    let mut builder = rsrc::Server::builder("rsrc-rmcp-fs", "0.1.0").mount(PREFIX, provider);
    if fixtures {
        builder = conformance::mount(builder);
    }
    let server = builder.build()?;
    let handler = FsServer {
        resources: Resources::new(server),
    };
    // The tree is indexed at start, as a hand-written server would: the listing is walked
    // once before serving (filling the provider's listing cache and the adapter's table),
    // so the first listing a client asks for is as fast as the next ones.
    handler.resources.prepare_listing(1000).await;
    common::serve(handler, http.as_deref()).await
}
