//! Serving over Streamable HTTP: the listening socket, the transport's settings and
//! authentication, and shutdown after the drain.
//!
//! Invariants: a non-loopback address is bound only when allowed (`--allow-remote`);
//! the resource URL (the default JWT audience) names the bound address unless a public
//! URL is given; at most one way to authenticate is configured.

use std::net::SocketAddr;
use std::time::Duration;

use rsrc::Server;
use rsrc_http::{AuthConfig, HttpConfig, JwtVerifier, TokenVerifier};

use super::config::{Config, HttpSection};
use super::drain::Drain;
use super::secrets::{check_key, read_secret, read_text_secret};

fn auth_config(
    h: &HttpSection,
    addr: SocketAddr,
    allow_open_secrets: bool,
) -> Result<Option<AuthConfig>, Box<dyn std::error::Error>> {
    let a = &h.auth;
    let open = allow_open_secrets;
    let verifier = if let Some(path) = &a.bearer_token_file {
        let token = read_text_secret(path, "token", open)?;
        check_key(token.as_bytes(), "bearer token")
            .map_err(|e| format!("{}: {e}", path.display()))?;
        TokenVerifier::Static(token)
    } else if let Some(path) = &a.jwt_secret_file {
        let secret = read_secret(path, open)?;
        check_key(&secret, "JWT HMAC secret").map_err(|e| format!("{}: {e}", path.display()))?;
        TokenVerifier::Jwt(
            JwtVerifier::hmac(&secret)
                .audience(a.jwt_audience.clone())
                .issuer(a.jwt_issuer.clone()),
        )
    } else if let Some(path) = &a.jwt_public_key {
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TokenVerifier::Jwt(
            JwtVerifier::public_key_pem(&pem)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .audience(a.jwt_audience.clone())
                .issuer(a.jwt_issuer.clone()),
        )
    } else {
        return Ok(None);
    };
    let resource = h
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}/mcp"));
    let mut config = AuthConfig::new(verifier, resource);
    for server in &a.authorization_servers {
        config = config.authorization_server(server.clone());
    }
    Ok(Some(config))
}

pub(super) fn serve_http(
    config: &Config,
    server: &Server,
    addr: SocketAddr,
    runtime: &tokio::runtime::Runtime,
    drain: Drain,
) -> Result<(), Box<dyn std::error::Error>> {
    let h = &config.http;
    super::admin::may_bind("the MCP endpoint", addr, h.allow_remote)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot bind {addr}: {e}"))?;
        // The bound address (the port, when 0 was asked for) names the resource.
        let bound = listener.local_addr()?;
        let http_config = HttpConfig {
            allowed_hosts: h.allowed_hosts.clone(),
            allowed_origins: h.allowed_origins.clone(),
            max_body: usize::try_from(h.max_body.0).unwrap_or(usize::MAX),
            max_connections: h.max_connections.max(1),
            max_streams: h.max_streams.max(1),
            max_in_flight: config.max_in_flight.max(1),
            max_sessions: h.max_sessions.max(1),
            session_idle: h.session_idle.0,
            header_read_timeout: h.header_timeout.0,
            write_stall_timeout: h.write_timeout.0.max(Duration::from_millis(100)),
            shutdown_grace: config.shutdown_grace.0,
            auth: auth_config(h, bound, config.allow_open_secrets)?,
            ..HttpConfig::default()
        };
        drain.listening();
        rsrc_http::serve_http(server, listener, http_config, drain.then_stop()).await?;
        server.leave_cluster().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok(())
}
