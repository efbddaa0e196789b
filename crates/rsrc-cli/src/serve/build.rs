//! Building the server from the effective configuration: the bus and cursor keys, one
//! provider per kind of source, the tools bridge.
//!
//! Invariants: the server is built from the `Config` alone; a source's own settings win
//! over the top level's; sources kept out of the tools are excluded by the URI their
//! resources are under; a PostgreSQL database's name never shadows a SQLite one's (the
//! longest mount prefix wins); passwords never appear in messages; the server's own
//! configuration and secret files are never served from a served directory.

use std::path::PathBuf;
use std::time::Duration;

use rsrc::protocol::resources::RESOURCE_METADATA_EXTENSION;
use rsrc::{Server, ServerConfig};
use rsrc_providers::db::postgres::{PostgresConfig, PostgresProvider};
use rsrc_providers::db::{self, sqlite};
use rsrc_providers::fs::{self, FsConfig, FsProvider, FsRoot, VisibilityConfig};
use rsrc_providers::git::{GitConfig, GitProvider};
use rsrc_redis::{RedisBus, RedisBusOptions};

use super::config::Config;
use super::secrets::{read_key_file, read_text_secret, redact, redact_error};
use super::sources::Location;
use super::values::{Dur, Size};

/// The instructions for the model: the standard methods, and rsrc's SEP-2093 extension
/// named as what it is, only when it is served.
fn instructions(resource_metadata: bool) -> String {
    let standard = "This server exposes resources. Use resources/list to browse and \
resources/read for content.";
    if !resource_metadata {
        return standard.to_owned();
    }
    format!(
        "{standard} It also serves rsrc's resource metadata extension ({RESOURCE_METADATA_EXTENSION}, \
declared in its capabilities; SEP-2093, not part of the MCP standard): resources/list with a \
collection's uri lists its children, and resources/metadata gives a resource's metadata \
without its content."
    )
}

/// The SQLite provider's settings: the top level's (a database's own are on its
/// source).
fn sqlite_config(c: &Config) -> sqlite::SqliteConfig {
    sqlite::SqliteConfig {
        max_row_bytes: c.max_read.0,
        statement_timeout: c.db_timeout.0,
        collection_budget: c.collection_budget.0,
        watch: c.watch,
        poll_interval: c.db_poll.0,
        ..sqlite::SqliteConfig::default()
    }
}

/// Conversions (PDF text) run in a child process of this binary (`rsrc convert-worker`),
/// under memory and CPU limits; without a path to this binary, there are none.
fn conversions() -> FsConfig {
    match std::env::current_exe() {
        Ok(program) => FsConfig {
            conversion: fs::Isolation::Process(fs::Worker::new(program, [CONVERT_WORKER])),
            ..FsConfig::default()
        },
        Err(e) => {
            tracing::warn!(error = %e, "this program's path is unknown: files are served without converted alternatives");
            FsConfig {
                converters: Vec::new(),
                ..FsConfig::default()
            }
        }
    }
}

/// The hidden subcommand that runs one conversion (see [`conversions`]).
pub(crate) const CONVERT_WORKER: &str = "convert-worker";

/// The URI under which a source's resources are, for `tools = false`.
fn source_base(at: &Location, name: Option<&str>, several: bool) -> String {
    let mut base = String::new();
    match at {
        Location::Directory(_) if several => base = fs::root_uri(name.unwrap_or_default()),
        Location::Directory(_) => base.push_str(fs::PREFIX),
        Location::Sqlite(_) => base = db::database_uri(name.unwrap_or_default()),
        Location::Skills(_) => {
            base.push_str(rsrc_providers::skills::PREFIX);
            if let Some(name) = name {
                base.push_str(name);
                base.push('/');
            }
        }
        // Their providers know their prefixes (see `build`).
        Location::Postgres(_) | Location::Git(_) => {}
    }
    base
}

/// What this instance serves, one line per source, for the check that instances sharing
/// a bus namespace serve the same (`RedisBusOptions::serves`): the source's kind and
/// name, where it is, and what decides which of its changes are published.
fn serves(config: &Config) -> Vec<String> {
    config
        .resolved()
        .iter()
        .map(|s| {
            let (kind, at) = match &s.at {
                Location::Directory(p) => ("directory", place(p)),
                Location::Sqlite(p) => ("sqlite", place(p)),
                Location::Postgres(url) => ("postgres", redact(url)),
                Location::Git(p) => ("git", place(p)),
                Location::Skills(p) => ("skills", place(p)),
            };
            let o = &s.options;
            format!(
                "{kind}:{} {at} hidden={:?} ignore_files={:?} include={:?} exclude={:?}",
                s.name.as_deref().unwrap_or_default(),
                o.hidden,
                o.ignore_files,
                o.include,
                o.exclude,
            )
        })
        .collect()
}

/// Where a path leads (links resolved), as the same text on every instance that sees the
/// same place at the same path.
fn place(path: &std::path::Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// The files holding the server's own configuration and secrets: never served, even
/// from a served directory.
fn own_files(config: &Config) -> Vec<PathBuf> {
    let c = &config.cluster;
    let a = &config.http.auth;
    [
        &config.file,
        &c.cursor_key_file,
        &c.bus_key_file,
        &c.bus_password_file,
        &c.bus_ca_file,
        &a.bearer_token_file,
        &a.jwt_secret_file,
        &a.jwt_public_key,
    ]
    .into_iter()
    .flatten()
    .chain(
        config
            .sources
            .iter()
            .filter_map(|s| s.options.password_file.as_ref()),
    )
    .cloned()
    .collect()
}

pub(super) fn build(
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    tracing: crate::telemetry::RequestTracer,
) -> Result<Server, Box<dyn std::error::Error>> {
    let server_config = ServerConfig {
        page_size: config.page_size as usize,
        read_budget: config.read_budget.0,
        resource_metadata: config.resource_metadata,
        ..ServerConfig::default()
    };
    let mut builder = Server::builder("rsrc", env!("CARGO_PKG_VERSION"))
        .instructions(instructions(config.resource_metadata))
        .config(server_config)
        .request_tracing(tracing);
    let cluster = &config.cluster;
    let open = config.allow_open_secrets;
    if let Some(path) = &cluster.cursor_key_file {
        builder = builder.cursor_keys(read_key_file(path, "cursor key", open)?);
    }
    if let Some(url) = &cluster.bus {
        let Some(key_file) = &cluster.bus_key_file else {
            return Err(format!(
                "--bus {}: needs --bus-key-file (bus_key_file in [cluster]): a key every instance shares authenticates what they write to Redis (write one with `openssl rand -hex 32 > bus.keys`, readable by its owner only)",
                redact(url)
            )
            .into());
        };
        let mut options = RedisBusOptions::default();
        options.namespace.clone_from(&cluster.namespace);
        options.keys = read_key_file(key_file, "bus key", open)?;
        options.password = match &cluster.bus_password_file {
            Some(path) => Some(read_text_secret(path, "Redis password", open)?),
            None => None,
        };
        options.ca_pem = match &cluster.bus_ca_file {
            Some(path) => {
                Some(std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?)
            }
            None => None,
        };
        options.serves = serves(config);
        let bus = runtime
            .block_on(RedisBus::connect(url, options))
            .map_err(|e| {
                format!(
                    "--bus {}: {}",
                    redact(url),
                    redact_error(&e.to_string(), url)
                )
            })?;
        builder = builder.bus(bus);
    }
    if config.conformance_fixtures {
        builder = crate::conformance::mount(builder);
    }
    let sources = config.resolved();
    if sources.is_empty() {
        if config.tools.enabled {
            builder = builder.tools(rsrc::ToolsConfig {
                max_text: config.tools.max_text,
                ..rsrc::ToolsConfig::default()
            });
        }
        builder = builder.mount(crate::sample::PREFIX, crate::sample::sample());
        builder = builder.mount(db::PREFIX, crate::sample::database(&sqlite_config(config))?);
        return Ok(builder.build()?);
    }
    let count = |kind: fn(&Location) -> bool| sources.iter().filter(|s| kind(&s.at)).count();
    let several_dirs = count(|l| matches!(l, Location::Directory(_))) > 1;
    let several_repos = count(|l| matches!(l, Location::Git(_))) > 1;
    let mut dirs = Vec::new();
    let mut databases = Vec::new();
    let mut postgres = Vec::new();
    let mut repos = Vec::new();
    let mut skills = Vec::new();
    // URI bases of the sources kept out of the tools.
    let mut untooled = Vec::new();
    let withheld = own_files(config);
    for s in &sources {
        let o = &s.options;
        let size = |n: Option<Size>| n.unwrap_or(config.max_read).0;
        let dur = |d: Option<Dur>, or: Dur| d.unwrap_or(or).0;
        let base = source_base(&s.at, s.name.as_deref(), several_dirs);
        let name = s.name.clone().unwrap_or_default();
        match &s.at {
            Location::Directory(path) => dirs.push(FsRoot {
                name,
                path: path.clone(),
                visibility: Some(VisibilityConfig {
                    include_hidden: o.hidden.unwrap_or(config.hidden),
                    respect_ignore_files: o.ignore_files.unwrap_or(config.ignore_files),
                    include: o.include.clone().unwrap_or_default(),
                    exclude: o.exclude.clone().unwrap_or_default(),
                    withheld: withheld.clone(),
                }),
                max_read: Some(size(o.max_read)),
            }),
            Location::Sqlite(path) => databases.push(
                sqlite::SqliteSource::named_file(name, path)
                    .max_row_bytes(size(o.max_read))
                    .statement_timeout(dur(o.db_timeout, config.db_timeout))
                    .poll_interval(dur(o.db_poll, config.db_poll)),
            ),
            Location::Postgres(url) => postgres.push((s, url)),
            Location::Git(path) => repos.push((s, path)),
            Location::Skills(path) => skills.push((s.name.clone(), path.clone())),
        }
        if o.tools == Some(false) && !base.is_empty() {
            untooled.push(base);
        }
    }
    if !skills.is_empty() {
        let skills_config = rsrc_providers::skills::SkillsConfig {
            poll_interval: config.watch.then_some(Duration::from_secs(2)),
            ..rsrc_providers::skills::SkillsConfig::default()
        };
        builder =
            rsrc_providers::skills::SkillsProvider::new(skills, skills_config)?.install(builder);
    }
    if !postgres.is_empty() {
        // Connected before the server runs: the pool replaces these connections on first
        // use.
        for (s, url) in postgres {
            let o = &s.options;
            let pg_config = PostgresConfig {
                statement_timeout: o.db_timeout.unwrap_or(config.db_timeout).0,
                collection_budget: usize::try_from(config.collection_budget.0)
                    .unwrap_or(usize::MAX),
                max_row_bytes: usize::try_from(o.max_read.unwrap_or(config.max_read).0)
                    .unwrap_or(usize::MAX),
                watch: config.watch,
                poll_interval: o.db_poll.unwrap_or(config.db_poll).0,
                password: match &o.password_file {
                    Some(path) => Some(read_text_secret(path, "password", open)?),
                    None => None,
                },
                ..PostgresConfig::default()
            };
            let provider = runtime
                .block_on(PostgresProvider::connect(s.name.clone(), url, pg_config))
                .map_err(|e| format!("{}: {}", redact(url), redact_error(&e.to_string(), url)))?;
            // A PostgreSQL database is mounted at `db://NAME`, and the longest prefix
            // wins: a SQLite database whose name starts with NAME would be shadowed.
            if let Some(other) = databases
                .iter()
                .find(|d| d.name().starts_with(provider.name()))
            {
                return Err(format!(
                    "the SQLite database {:?} and the PostgreSQL database {:?} need names that do not start with one another (NAME=…)",
                    other.name(),
                    provider.name()
                )
                .into());
            }
            if o.tools == Some(false) {
                untooled.push(provider.prefix().to_owned());
            }
            builder = builder.mount(provider.prefix().to_owned(), provider);
        }
    }
    for (s, path) in repos {
        let git_config = GitConfig {
            poll_interval: s.options.poll.map(|p| p.0).filter(|_| config.watch),
            max_blob: s.options.max_read.unwrap_or(config.max_read).0,
            ..GitConfig::default()
        };
        let provider = match &s.name {
            Some(name) => GitProvider::open_named(name, path, git_config)?,
            None if several_repos => {
                return Err(format!(
                    "{}: several repositories need names: NAME=git:PATH",
                    path.display()
                )
                .into());
            }
            None => GitProvider::open(path, git_config)?,
        };
        if s.options.tools == Some(false) {
            untooled.push(provider.prefix().to_owned());
        }
        builder = builder.mount(provider.prefix().to_owned(), provider);
    }
    if !dirs.is_empty() {
        let fs_config = FsConfig {
            collection_budget: config.collection_budget.0,
            watch: config.watch,
            watch_window: config.watch_window.0,
            listing_freshness: config.listing_freshness.into(),
            warm_listing_cache: config.warm_listing,
            ..conversions()
        };
        builder = builder.mount(fs::PREFIX, FsProvider::with_roots(dirs, fs_config)?);
    }
    if !databases.is_empty() {
        let provider = sqlite::SqliteProvider::new(databases, sqlite_config(config))?;
        builder = builder.mount(db::PREFIX, provider);
    }
    if config.tools.enabled {
        builder = builder.tools(rsrc::ToolsConfig {
            max_text: config.tools.max_text,
            excluded: untooled,
            ..rsrc::ToolsConfig::default()
        });
    }
    Ok(builder.build()?)
}
