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
//! cargo run -p rsrc --example notion --features http -- --http 127.0.0.1:8080
//! ```

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
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => rsrc::transport::serve_stdio(&server, &Default::default()).await?,
        [flag, addr] if flag == "--http" => serve_http(&server, addr).await?,
        _ => {
            eprintln!("usage: notion [--http ADDR]");
            std::process::exit(2);
        }
    }
    Ok(())
}

#[cfg(feature = "http")]
async fn serve_http(server: &rsrc::Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving http://{}/mcp", listener.local_addr()?);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    rsrc::transport::http::serve_http(server, listener, Default::default(), stop).await?;
    Ok(())
}

#[cfg(not(feature = "http"))]
async fn serve_http(_: &rsrc::Server, _: &str) -> Result<(), Box<dyn std::error::Error>> {
    Err(
        "built without HTTP: cargo run -p rsrc --example notion --features http -- --http ADDR"
            .into(),
    )
}
