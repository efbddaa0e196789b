//! The PostgreSQL backend's settings ([`PostgresConfig`]) and why a database could not be
//! served ([`PostgresError`]). Invariant: plain values with their defaults.

use std::time::Duration;

/// Settings of the PostgreSQL provider.
#[derive(Clone, Debug)]
pub struct PostgresConfig {
    /// Most connections open at once (default 8).
    pub pool_size: usize,
    /// Longest a statement may run (default 5 s).
    pub statement_timeout: Duration,
    /// Longest wait for a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Largest row read, in bytes (default 32 MiB).
    pub max_row_bytes: usize,
    /// Most bytes of child documents returned when a collection is read (default 1 MiB).
    pub collection_budget: usize,
    /// Most rows rendered when a relation is read (default 256).
    pub collection_max_rows: usize,
    /// Whether the database is polled for changes (default: yes).
    pub watch: bool,
    /// How often (default 500 ms).
    pub poll_interval: Duration,
    /// Most subscribed URIs digested per change; others are simply updated (default 1024).
    pub max_watched: usize,
    /// Most completion values (default 100).
    pub completion_limit: usize,
    /// The password, when the connection string holds none (default: none), so that it
    /// can be kept out of command lines and configuration files.
    pub password: Option<String>,
}

impl Default for PostgresConfig {
    fn default() -> Self {
        PostgresConfig {
            pool_size: 8,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            max_row_bytes: 32 * 1024 * 1024,
            collection_budget: 1024 * 1024,
            collection_max_rows: 256,
            watch: true,
            poll_interval: Duration::from_millis(500),
            max_watched: 1024,
            completion_limit: 100,
            password: None,
        }
    }
}

/// Why a PostgreSQL database could not be served.
#[derive(Debug)]
pub struct PostgresError(pub(super) String);

impl std::fmt::Display for PostgresError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PostgresError {}
