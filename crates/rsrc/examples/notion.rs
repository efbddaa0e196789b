//! The framework guide's Notion resources (its PHP `#[McpResource]` example), written with
//! `#[resources]`: the workspace, any page by id (cached for five minutes, listed,
//! completed) and any database's schema, on rsrc's own server. See
//! `docs/writing-resources.md`.
//!
//! The resources and the fake Notion client behind them are in `shared/notion.rs`, which
//! the rmcp example (`crates/rsrc-rmcp/examples/rmcp-notion.rs`) serves too: the client
//! serves one call at a time, each taking 100 ms (`NOTION_FAKE_LATENCY_MS` overrides), so
//! the cache and its single flight show from outside.
//!
//! ```sh
//! cargo run -p rsrc --example notion                                   # stdio
//! ```
//!
//! The same server is served over Streamable HTTP by the `rsrc-http` crate
//! (`rsrc_http::serve_http`).

// `FakeNotion::create_page` is for the rmcp example's tool.
#[allow(dead_code, unreachable_pub)]
#[path = "shared/notion.rs"]
mod shared;

use std::sync::Arc;

pub use shared::{FakeNotion, Notion};

/// The server of this example.
pub fn server(client: Arc<FakeNotion>) -> Result<rsrc::Server, rsrc::BuildError> {
    rsrc::Server::builder("notion-example", "1.0")
        .mount("notion:", Notion { client })
        .build()
}

#[allow(dead_code)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server(Arc::new(FakeNotion::from_env()))?;
    if std::env::args().len() > 1 {
        eprintln!("usage: notion (it serves on stdio)");
        std::process::exit(2);
    }
    rsrc::transport::serve_stdio(&server, &Default::default()).await?;
    Ok(())
}
