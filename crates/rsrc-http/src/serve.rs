//! [`serve_http`]: the accept loop of a standalone server.
//!
//! Invariants:
//! - At most `max_connections` connections are served at once; more wait in the listen
//!   backlog. Each has `TCP_NODELAY`, a header-read timeout (which also reaps idle
//!   keep-alive connections) and a writer that must make progress (`stall.rs`).
//! - Idle legacy sessions are expired periodically, whatever the traffic.
//! - Shutdown stops accepting, ends the standalone streams, lets requests in flight
//!   finish within the grace period, then cancels what is left.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use rsrc::server::Server;

use crate::config::HttpConfig;
use crate::service::HttpService;
use crate::stall;

/// Serves `server` on `listener` until `shutdown` completes, then stops accepting, lets
/// in-flight requests finish within [`HttpConfig::shutdown_grace`], and closes streams.
pub async fn serve_http<F>(
    server: &Server,
    listener: TcpListener,
    config: HttpConfig,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let bound = listener.local_addr()?;
    let grace = config.shutdown_grace;
    let idle = config.session_idle;
    let write_stall = config.write_stall_timeout;
    let limit = Arc::new(tokio::sync::Semaphore::new(config.max_connections.max(1)));
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .keep_alive(true)
        .max_headers(100);
    let service = HttpService::new(server, config, bound);
    let app = service.router();
    let graceful = GracefulShutdown::new();
    let reaper = {
        let service = service.clone();
        tokio::spawn(async move {
            let period = (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
            loop {
                tokio::time::sleep(period).await;
                service.expire_sessions();
            }
        })
    };
    tracing::info!(address = %bound, path = %service.path(), "serving Streamable HTTP");
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&limit).acquire_owned() => p.map_err(io::Error::other)?,
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY");
        }
        let stream = stall::Progress::new(stream, write_stall);
        let conn =
            http1.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
            drop(permit);
        });
    }
    drop(listener);
    reaper.abort();
    tracing::info!("shutting down: no new connections; finishing requests in flight");
    // Long-lived streams end now; requests in flight get the grace period.
    service.close();
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            ?grace,
            "requests still in flight after the grace period: abandoned"
        );
    }
    // Whatever still runs (a request whose client went away) is cancelled.
    service.end_sessions();
    Ok(())
}
