//! Reaching Redis: the client for a URL and the bus's options (TLS, password, TCP
//! keepalive), a connection within the bus's timeout, and the backoff between attempts.
//!
//! Invariants: a connection whose peer vanished is closed within seconds (keepalive
//! probes and a limit on unacknowledged data), not hours; a CA file is only ever used
//! with TLS; retries wait from [`MIN_BACKOFF`] doubling to [`MAX_BACKOFF`].

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::io::tcp::{TcpSettings, socket2::TcpKeepalive};
use redis::{AsyncConnectionConfig, IntoConnectionInfo as _};

use crate::options::{RedisBusError, RedisBusOptions};

/// The first wait before trying again.
pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait before trying again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The wait now, doubling `current` for the next time (up to [`MAX_BACKOFF`]).
pub(crate) fn backoff(current: &mut Duration) -> Duration {
    let now = *current;
    *current = (*current * 2).min(MAX_BACKOFF);
    now
}

/// The client for `url` (`redis://[user@]host:port[/db]`, `rediss://…` for TLS,
/// `redis+unix:///path`) with the options' password and CA, and keepalive.
pub(crate) fn client(url: &str, options: &RedisBusOptions) -> Result<redis::Client, RedisBusError> {
    let info = url
        .into_connection_info()
        .map_err(|e| RedisBusError(format!("bad Redis URL: {e}")))?;
    let mut redis_settings = info.redis_settings().clone();
    if let Some(password) = &options.password {
        redis_settings = redis_settings.set_password(password);
    }
    // Keepalive probes and a limit on unacknowledged data: a connection whose peer
    // vanished is closed within seconds, not hours.
    let tcp = TcpSettings::default()
        .set_nodelay(true)
        .set_keepalive(
            TcpKeepalive::new()
                .with_time(Duration::from_secs(5))
                .with_interval(Duration::from_secs(2))
                .with_retries(3),
        )
        .set_user_timeout(Duration::from_secs(10));
    let info = info
        .set_tcp_settings(tcp)
        .set_redis_settings(redis_settings);
    let tls = matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. });
    match (&options.ca_pem, tls) {
        (Some(pem), true) => redis::Client::build_with_tls(
            info,
            redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem.clone()),
            },
        ),
        (Some(_), false) => {
            return Err(RedisBusError(
                "a CA file is for TLS: use a rediss:// URL".into(),
            ));
        }
        (None, _) => redis::Client::open(info),
    }
    .map_err(|e| RedisBusError(format!("bad Redis URL or CA: {e}")))
}

/// A multiplexed connection, connecting and answering within `timeout`.
pub(crate) async fn connect(
    client: &redis::Client,
    timeout: Duration,
) -> redis::RedisResult<MultiplexedConnection> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
}
