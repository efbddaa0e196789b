//! What both examples share: serving one rmcp handler on stdio (rmcp's transport over
//! [`rsrc_rmcp::stdio`]'s non-blocking pipes), or on rmcp's Streamable
//! HTTP service at `http://ADDR/mcp` (every connection with `TCP_NODELAY`, a session per
//! client: the factory clones the handler, and each clone of `rsrc_rmcp::Resources` is a
//! connection of its own).

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt};

/// Serves `handler` on stdio, or on HTTP at `http` (`ADDR:PORT`) until Ctrl-C.
pub(crate) async fn serve<H: ServerHandler + Clone>(
    handler: H,
    http: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(addr) = http else {
        handler.serve(rsrc_rmcp::stdio()?).await?.waiting().await?;
        return Ok(());
    };
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving http://{}/mcp", listener.local_addr()?);
    // Without TCP_NODELAY the small writes of an SSE reply wait for the client's delayed
    // ACK (~40 ms a request).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// `[DIR] [--http ADDR]` from the command line: the positional arguments and the address.
pub(crate) fn args() -> (Vec<String>, Option<String>) {
    let mut positional = Vec::new();
    let mut http = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--http" {
            http = args.next();
        } else {
            positional.push(a);
        }
    }
    (positional, http)
}
