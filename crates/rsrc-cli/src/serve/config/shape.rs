//! The shape of `rsrc serve`'s configuration: the top level and its sections, as the
//! `--config` file writes them. Invariant: every key is known (`deny_unknown_fields`),
//! and a number outside what the command line's flag takes is refused.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use crate::serve::sources::SourceConfig;
use crate::serve::values::{Dur, Freshness, Listen, Size};
use crate::telemetry::TracingSection;

/// The whole configuration. Its scalar keys are the server's settings and the defaults
/// of every source; `[tools]`, `[http]` and `[[sources]]` follow.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Config {
    /// Resources per `resources/list` page.
    #[serde(deserialize_with = "bounded::<_, u32, 1, 100_000>")]
    pub(crate) page_size: u32,
    /// Longest accepted message.
    pub(crate) max_message: Size,
    /// Most requests handled at once per stdio connection or HTTP session.
    pub(crate) max_in_flight: usize,
    /// Most bytes of content all requests together may hold.
    pub(crate) read_budget: Size,
    /// Most bytes of child content returned when a directory or table is read.
    pub(crate) collection_budget: Size,
    /// How long requests in flight may finish at shutdown.
    pub(crate) shutdown_grace: Dur,
    /// After a shutdown signal, how long the server goes on serving while `/readyz`
    /// says it is not ready.
    pub(crate) drain_delay: Dur,
    /// Whether sources are watched and polled for changes.
    pub(crate) watch: bool,
    /// Changes to one file within this window are notified once.
    pub(crate) watch_window: Dur,
    /// How a directory listing the server cached is known to be current.
    pub(crate) listing_freshness: Freshness,
    /// Whether the directories are scanned into the listing cache at the start.
    pub(crate) warm_listing: bool,
    /// Whether SEP-2093 is served, as the declared extension
    /// `dev.rsrc/resource-metadata`; off, only the standard shapes are.
    pub(crate) resource_metadata: bool,
    /// Whether the conformance suite's fixture is served too.
    pub(crate) conformance_fixtures: bool,
    /// Default of every directory: serve hidden files.
    pub(crate) hidden: bool,
    /// Default of every directory: honour `.gitignore` and `.ignore`.
    pub(crate) ignore_files: bool,
    /// Default of every directory: serve only files matching one of these globs.
    pub(crate) include: Vec<String>,
    /// Default of every directory: never serve what matches one of these globs.
    pub(crate) exclude: Vec<String>,
    /// Default of every source: the largest file, row or blob read.
    pub(crate) max_read: Size,
    /// Default of every database: the longest a request may keep it busy.
    pub(crate) db_timeout: Dur,
    /// Default of every database: how often it is checked for commits.
    pub(crate) db_poll: Dur,
    /// Accept secret files that their group or others may read.
    pub(crate) allow_open_secrets: bool,
    /// The tools bridge.
    pub(crate) tools: ToolsSection,
    /// Streamable HTTP.
    pub(crate) http: HttpSection,
    /// Several instances serving the same sources.
    pub(crate) cluster: ClusterSection,
    /// The admin listener (metrics, health, readiness).
    pub(crate) admin: AdminSection,
    /// OpenTelemetry traces.
    pub(crate) tracing: TracingSection,
    /// What is served.
    pub(crate) sources: Vec<SourceConfig>,
    /// The file this configuration was read from (`--config`), if any.
    #[serde(skip)]
    pub(crate) file: Option<PathBuf>,
}

/// `[cluster]`: what instances of one deployment share (see `docs/deployment.md`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ClusterSection {
    /// The Redis that carries changes and leases between instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bus: Option<String>,
    /// The keys that authenticate what the instances write to Redis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bus_key_file: Option<PathBuf>,
    /// The file holding the Redis password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bus_password_file: Option<PathBuf>,
    /// The certificate authority Redis's certificate must chain to (`rediss://`), instead
    /// of the system's roots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bus_ca_file: Option<PathBuf>,
    /// Prefix of the bus's channel and keys.
    pub(crate) namespace: String,
    /// The file holding the keys that seal cursors (the first seals, all open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor_key_file: Option<PathBuf>,
}

/// `[admin]`: the listener of `/metrics`, `/healthz` and `/readyz`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct AdminSection {
    /// Where to listen; no admin listener when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) listen: Option<Listen>,
}

/// `[tools]`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ToolsSection {
    /// Whether the resources are also offered as tools.
    pub(crate) enabled: bool,
    /// Most characters of text one `read_resource` call returns.
    pub(crate) max_text: usize,
}

/// `[http]`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct HttpSection {
    /// Where to serve Streamable HTTP; stdio when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) listen: Option<Listen>,
    pub(crate) allow_remote: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_body: Size,
    pub(crate) max_connections: usize,
    pub(crate) max_streams: usize,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle: Dur,
    pub(crate) header_timeout: Dur,
    pub(crate) write_timeout: Dur,
    #[serde(deserialize_with = "bounded::<_, u16, 1, 1024>")]
    pub(crate) threads: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) public_url: Option<String>,
    #[serde(deserialize_with = "one_way")]
    pub(crate) auth: AuthSection,
}

/// A number within `LO..=HI`, as the command line's flag takes it.
fn bounded<'de, D, T, const LO: u64, const HI: u64>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Into<u64> + Copy,
{
    let n = T::deserialize(d)?;
    if (LO..=HI).contains(&n.into()) {
        Ok(n)
    } else {
        Err(serde::de::Error::custom(format!(
            "{} is not in {LO}..={HI}",
            n.into()
        )))
    }
}

/// `[http.auth]` with at most one way to authenticate.
fn one_way<'de, D: Deserializer<'de>>(d: D) -> Result<AuthSection, D::Error> {
    let auth = AuthSection::deserialize(d)?;
    let ways = [
        auth.bearer_token_file.is_some(),
        auth.jwt_secret_file.is_some(),
        auth.jwt_public_key.is_some(),
    ];
    if ways.into_iter().filter(|set| *set).count() > 1 {
        return Err(serde::de::Error::custom(
            "set one of bearer_token_file, jwt_secret_file and jwt_public_key",
        ));
    }
    Ok(auth)
}

/// `[http.auth]`: at most one of the token file, the JWT secret and the JWT key.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct AuthSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bearer_token_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) jwt_secret_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) jwt_public_key: Option<PathBuf>,
    pub(crate) jwt_audience: Vec<String>,
    pub(crate) jwt_issuer: Vec<String>,
    pub(crate) authorization_servers: Vec<String>,
}
