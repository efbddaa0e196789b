//! How a [`RedisBus`](crate::RedisBus) runs ([`RedisBusOptions`]) and why it could not
//! start ([`RedisBusError`]).
//!
//! Invariant: the options' `Debug` never shows a secret (the keys are counted, the
//! password masked).

use std::time::Duration;

/// How a [`RedisBus`](crate::RedisBus) runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisBusOptions {
    /// Prefix of the channel and of every key (default `rsrc`): deployments that share a
    /// Redis use different ones.
    pub namespace: String,
    /// The keys that authenticate what the instances write to Redis (messages, session
    /// records, replay logs) and name sessions there (default: none, and
    /// [`RedisBus::connect`](crate::RedisBus::connect) refuses to start without one).
    /// The first signs; every one verifies, so a key is rotated as cursor keys are.
    /// Every instance of the deployment holds the same.
    pub keys: Vec<[u8; 32]>,
    /// The password of the URL's user (or of `default`), when it is not in the URL (it
    /// should not be: a URL ends up in logs and process listings).
    pub password: Option<String>,
    /// With `rediss://`: the certificate authorities (PEM) Redis's certificate must chain
    /// to, instead of the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// What this instance serves, one line per source (its URI prefix first, then what
    /// identifies it: its location and settings). Instances sharing a namespace must
    /// serve the same: one that finds a live instance serving anything else refuses to
    /// start (empty: not checked).
    pub serves: Vec<String>,
    /// How long a lease lasts without renewal (default 3 s).
    pub lease_ttl: Duration,
    /// Most events waiting to be published (default 4096).
    pub queue: usize,
    /// Longest wait for Redis to connect or answer (default 2 s).
    pub timeout: Duration,
}

impl std::fmt::Debug for RedisBusOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBusOptions")
            .field("namespace", &self.namespace)
            .field("keys", &self.keys.len())
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_pem", &self.ca_pem.is_some())
            .field("serves", &self.serves)
            .field("lease_ttl", &self.lease_ttl)
            .field("queue", &self.queue)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Default for RedisBusOptions {
    fn default() -> Self {
        RedisBusOptions {
            namespace: "rsrc".into(),
            keys: Vec::new(),
            password: None,
            ca_pem: None,
            serves: Vec::new(),
            lease_ttl: Duration::from_secs(3),
            queue: 4096,
            timeout: Duration::from_secs(2),
        }
    }
}

/// Why a [`RedisBus`](crate::RedisBus) could not start.
#[derive(Debug)]
pub struct RedisBusError(pub(crate) String);

impl std::fmt::Display for RedisBusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedisBusError {}
