//! `rsrc serve`'s configuration: the TOML file given with `--config`, the command line's
//! flags over it, and the effective result that `--print-config` prints and the server is
//! built from.
//!
//! Invariants:
//! - Defaults live in one place, the command line's definition ([`ServeArgs`]): a key
//!   left out of the file and a flag left off the command line mean the same value.
//! - A flag given on the command line wins over the file, for the server and for every
//!   source; sources named on the command line are served after the file's.
//! - What `--print-config` prints reads back to the same configuration, except that a
//!   password in a connection string is masked.
//! - A file that cannot be used is an error naming the file, the line and the key, and
//!   nothing is served.
//!
//! This file holds the configuration's shape (the top level and its sections); beside
//! it, `values.rs` holds the values written in both the file and the flags (sizes,
//! durations, addresses), `sources.rs` a source and its `[[sources]]` table, `load.rs`
//! reading the file and applying the flags over it, and `effective.rs` every source's
//! settings resolved and the result printed as TOML.
//!
//! [`ServeArgs`]: crate::serve::ServeArgs

mod effective;
mod load;
mod sources;
mod values;

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

pub(crate) use sources::{Location, SourceConfig, SourceOptions};
pub(crate) use values::{Dur, Freshness, Listen, Size, parse_listen, parse_size};

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

/// `[tracing]`: where OpenTelemetry traces go. The standard `OTEL_*` variables, when
/// set, override these keys (see `docs/operations.md`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TracingSection {
    /// The OTLP/HTTP endpoint (`http://collector:4318`); traces go to its `/v1/traces`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint: Option<String>,
    /// The `service.name` of the spans (default `rsrc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) service_name: Option<String>,
    /// The sampler, as `OTEL_TRACES_SAMPLER` names it (default
    /// `parentbased_always_on`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sampler: Option<String>,
    /// The sampler's argument (the ratio of `traceidratio`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sampler_arg: Option<f64>,
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
