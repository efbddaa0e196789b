//! The admin listener (`--admin ADDR`): `GET /metrics` (the Prometheus text format),
//! `GET /healthz` (liveness) and `GET /readyz` (readiness), apart from the MCP endpoint,
//! for stdio servers too.
//!
//! Invariants:
//! - It binds loopback unless remote serving is allowed (`--allow-remote`); a bad
//!   address or one in use fails at start, naming the admin listener. Bound to loopback,
//!   it refuses requests naming another host than a loopback one (403), so a web page
//!   cannot read it through a DNS name rebound to 127.0.0.1.
//! - It runs on the runtime that serves requests, so a wedged runtime cannot answer
//!   `/healthz` and the probe fails.
//! - Ready means: the MCP listener is bound (or stdio is being read), every mount's
//!   watcher is armed, and no shutdown signal has come. The bus being away does not
//!   make an instance unready (reads still work, and an outage of Redis must not take
//!   every instance out of its balancer at once); it is reported in the body.
//! - It serves nothing else and reads no body; every answer is small and bounded.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use rsrc::Server;
use rsrc::observe;
use serde_json::json;

/// What readiness depends on besides the server: the MCP listener, and the drain.
#[derive(Debug, Default)]
pub(super) struct Health {
    listening: AtomicBool,
    draining: AtomicBool,
}

impl Health {
    /// The MCP endpoint accepts requests (the HTTP listener is bound, or stdio is read).
    pub(super) fn listening(&self) {
        self.listening.store(true, Ordering::Release);
    }

    /// A shutdown signal came: `/readyz` says 503 from now on.
    pub(super) fn drain(&self) {
        self.draining.store(true, Ordering::Release);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }
}

/// Installs the Prometheus recorder (before the server is built, so that nothing it
/// records is lost) with the engine's help texts and buckets.
pub(super) fn install_recorder() -> Result<PrometheusHandle, String> {
    let handle = PrometheusBuilder::new()
        .set_buckets(observe::DURATION_BUCKETS)
        .map_err(|e| format!("metrics: {e}"))?
        .install_recorder()
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
    observe::describe();
    metrics::gauge!(observe::BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    Ok(handle)
}

/// The rule for every listener of `rsrc serve` (`what`): a loopback address, unless
/// remote serving is allowed (`--allow-remote`).
pub(super) fn may_bind(what: &str, addr: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        return Err(format!(
            "refusing to bind {what} to {addr}: not a loopback address (pass --allow-remote to serve other hosts)"
        ));
    }
    tracing::warn!(%addr, "{what} serves a non-loopback address: anyone who can reach it can use it");
    Ok(())
}

/// Binds the admin address: loopback, unless `allow_remote`.
pub(super) async fn bind(
    addr: SocketAddr,
    allow_remote: bool,
) -> Result<tokio::net::TcpListener, String> {
    may_bind("the admin listener", addr, allow_remote)?;
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot bind the admin listener to {addr}: {e}"))
}

#[derive(Clone)]
struct Admin {
    server: Server,
    health: Arc<Health>,
    metrics: PrometheusHandle,
    /// Whether it is bound to loopback (then only loopback `Host`s are answered).
    local: bool,
}

/// Whether `host` (a `Host` header) names the loopback interface.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses, when bound to loopback, a request naming another host than a loopback one.
async fn local_only(
    State(admin): State<Admin>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    // A browser always names the host; a health checker speaking HTTP/1.0 may not.
    if admin.local && host.is_some_and(|host| !loopback_host(host)) {
        return (StatusCode::FORBIDDEN, "Host not allowed\n").into_response();
    }
    next.run(request).await
}

/// Serves the admin endpoints on `listener` until the process ends, and keeps the
/// recorder's histograms drained between scrapes.
pub(super) fn spawn(
    listener: tokio::net::TcpListener,
    server: &Server,
    health: &Arc<Health>,
    metrics: PrometheusHandle,
) {
    let upkeep = metrics.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    let local = listener
        .local_addr()
        .map_or(true, |addr| addr.ip().is_loopback());
    let state = Admin {
        server: server.clone(),
        health: Arc::clone(health),
        metrics,
        local,
    };
    let app = Router::new()
        .route("/metrics", get(scrape))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            local_only,
        ))
        .with_state(state);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(address = %addr, "serving /metrics, /healthz and /readyz");
    }
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the admin listener failed");
        }
    });
}

async fn scrape(State(admin): State<Admin>) -> Response {
    admin.server.record_gauges();
    report(&admin);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        admin.metrics.render(),
    )
        .into_response()
}

/// Readiness now, with its reasons: also the gauges `rsrc_ready`, `rsrc_draining` and
/// `rsrc_bus_connected`.
fn report(admin: &Admin) -> (bool, serde_json::Value) {
    let listening = admin.health.listening.load(Ordering::Acquire);
    let draining = admin.health.is_draining();
    let mounts = admin.server.mounts_ready();
    let armed = mounts.iter().all(|(_, ready)| *ready);
    let ready = listening && armed && !draining;
    let bus = admin.server.bus_connected();
    metrics::gauge!(observe::READY).set(f64::from(u8::from(ready)));
    metrics::gauge!(observe::DRAINING).set(f64::from(u8::from(draining)));
    if let Some(connected) = bus {
        metrics::gauge!(observe::BUS_CONNECTED).set(f64::from(u8::from(connected)));
    }
    let body = json!({
        "ready": ready,
        "draining": draining,
        "listening": listening,
        "mounts": mounts
            .iter()
            .map(|(prefix, ready)| ((*prefix).to_owned(), json!({ "ready": ready })))
            .collect::<serde_json::Map<_, _>>(),
        "bus": { "configured": bus.is_some(), "connected": bus.unwrap_or(false) },
    });
    (ready, body)
}

async fn readyz(State(admin): State<Admin>) -> Response {
    let (ready, body) = report(&admin);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use rsrc::protocol::Resource;
    use rsrc::{ListRequest, Page, Provider, ReadOutput, RequestContext, ResourceError};

    use super::*;

    /// A provider whose watcher is armed when the test says so.
    struct Arming(Arc<AtomicBool>);

    impl Provider for Arming {
        fn armed(&self) -> bool {
            self.0.load(Ordering::Acquire)
        }

        async fn list(
            &self,
            _: &RequestContext,
            _: ListRequest<'_>,
        ) -> Result<Page, ResourceError> {
            Ok(Page::default())
        }

        async fn metadata(&self, _: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
            Err(ResourceError::not_found(uri))
        }

        async fn read(&self, _: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
            Err(ResourceError::not_found(uri))
        }
    }

    #[test]
    fn only_loopback_hosts_are_loopback() {
        for host in [
            "localhost",
            "LOCALHOST:9464",
            "127.0.0.1:9464",
            "127.1.2.3",
            "[::1]:9464",
        ] {
            assert!(loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:9464",
            "10.0.0.1:9464",
            "[::2]:1",
            "",
            ":9464",
        ] {
            assert!(!loopback_host(host), "{host}");
        }
    }

    #[tokio::test]
    async fn not_ready_until_listening_and_every_watcher_is_armed_nor_once_draining() {
        let armed = Arc::new(AtomicBool::new(false));
        let server = Server::builder("t", "1")
            .mount("test://", Arming(Arc::clone(&armed)))
            .build()
            .unwrap();
        let admin = Admin {
            server,
            health: Arc::new(Health::default()),
            metrics: PrometheusBuilder::new().build_recorder().handle(),
            local: true,
        };
        let ready = |admin: &Admin| report(admin).0;
        assert!(!ready(&admin), "nothing listens yet");
        admin.health.listening();
        assert!(!ready(&admin), "the watcher is not armed");
        let (_, body) = report(&admin);
        assert_eq!(body["mounts"]["test://"]["ready"], false);
        assert_eq!(body["listening"], true);
        armed.store(true, Ordering::Release);
        assert!(ready(&admin));
        // A bus that is away would not change this: without one, none is reported.
        assert_eq!(report(&admin).1["bus"]["configured"], false);
        admin.health.drain();
        assert!(!ready(&admin), "draining");
        assert_eq!(report(&admin).1["draining"], true);
    }
}
