//! [`Endpoint`]: what one HTTP endpoint holds — the engine it serves, its settings, its
//! allowlists, the legacy session table, the places for long-lived streams and the
//! replay budget — shared by every request through an `Arc`.
//!
//! Invariant: this is a leaf of the transport: the rules (`admit.rs`, `modern.rs`,
//! `legacy/`) take an `Endpoint` and call down into it and into the engine, and nothing
//! here calls back up into them or into the service that owns it.

use std::sync::Arc;

use rsrc::server::Server;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::checks::Allowlist;
use crate::config::HttpConfig;
use crate::sse::{Budget, LogLimits};
use crate::table::Sessions;

/// The state of one endpoint.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) hosts: Allowlist,
    pub(crate) origins: Allowlist,
    pub(crate) sessions: Sessions,
    /// Cancelled at shutdown: ends standalone streams, and asks subscription streams to
    /// end gracefully.
    pub(crate) stop: CancellationToken,
    pub(crate) replay_budget: Arc<Budget>,
    pub(crate) streams: Arc<Semaphore>,
}

impl Endpoint {
    /// A place for one more long-lived stream, if the cap allows.
    pub(crate) fn stream_permit(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.streams).try_acquire_owned().ok()
    }

    /// The bounds of a legacy stream's replay log.
    pub(crate) fn log_limits(&self) -> LogLimits {
        LogLimits {
            max_events: self.config.replay_events.max(1),
            max_bytes: self.config.replay_bytes,
            budget: Arc::clone(&self.replay_budget),
        }
    }
}
