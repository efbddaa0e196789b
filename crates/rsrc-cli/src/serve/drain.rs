//! The first step of shutdown: on SIGTERM or SIGINT the server is not ready at once
//! (`/readyz` answers 503) while everything is still served for the drain delay, so that
//! balancers stop sending requests before it stops accepting them; then the transport's
//! own shutdown runs (stop accepting, requests in flight within the grace period, listen
//! streams ended).
//!
//! Invariants: the server is unready before it stops accepting, never after; the drain
//! runs once, and only where something can see it (an admin listener); a second signal
//! during it ends it at once.

use std::sync::Arc;
use std::time::Duration;

use super::admin::Health;

/// The first step of shutdown: on a signal, not ready at once, still serving for the
/// drain delay.
pub(super) struct Drain {
    health: Arc<Health>,
    /// The drain delay; `None` without an admin listener (nothing would see the drain).
    delay: Option<Duration>,
}

impl Drain {
    pub(super) fn new(health: Arc<Health>, delay: Option<Duration>) -> Drain {
        Drain { health, delay }
    }

    /// Completes after SIGTERM or SIGINT, having marked the server not ready when the
    /// signal came, and the drain delay after it (cut short by a second signal).
    pub(super) async fn then_stop(self) {
        shutdown_signal().await;
        self.health.drain();
        let Some(delay) = self.delay else { return };
        tracing::info!(
            ?delay,
            "shutdown signal: not ready; serving on while the balancers take this instance out"
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shutdown_signal() => tracing::info!("second signal: the drain ends now"),
        }
    }

    /// The MCP endpoint accepts requests now.
    pub(super) fn listening(&self) {
        self.health.listening();
    }
}

/// Completes on SIGINT or SIGTERM.
#[cfg(unix)]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "SIGTERM cannot be handled");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Completes on Ctrl-C (Ctrl-Break on Windows); there is no SIGTERM elsewhere than Unix.
#[cfg(not(unix))]
async fn shutdown_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
