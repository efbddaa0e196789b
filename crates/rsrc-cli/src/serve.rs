//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: unless told to use more threads, the whole server runs on one thread (a
//! current-thread runtime), so a request is decoded, served and encoded without a thread
//! hop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use rsrc::bus::{RedisBus, RedisBusOptions};
use rsrc::transport::http::{AuthConfig, HttpConfig, JwtVerifier, TokenVerifier};
use rsrc::transport::{StreamConfig, serve_stdio};
use rsrc::{Server, ServerConfig};
use rsrc_providers::db::postgres::{PostgresConfig, PostgresProvider};
use rsrc_providers::db::{self, sqlite};
use rsrc_providers::fs::{self, FilterConfig, FsConfig, FsProvider, FsRoot};
use rsrc_providers::git::{GitConfig, GitProvider};

use crate::config::{
    Config, Dur, HttpSection, Listen, Location, Size, SourceConfig, SourceOptions,
};

/// Options of `rsrc serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// What to serve: directories, as `DIR` or `NAME=DIR`; SQLite databases, as
    /// `sqlite:PATH` or `NAME=sqlite:PATH`; PostgreSQL databases, as `postgres://…` or
    /// `NAME=postgres://…`; git repositories, as `git:PATH` or `NAME=git:PATH`. With one
    /// directory a file's URI is `file:///<path>`; with several, `file:///<NAME>/<path>`
    /// (NAME defaults to the directory's name). A SQLite row is
    /// `db://<NAME>/<table>/<key>` (NAME defaults to the file's stem), a PostgreSQL row
    /// `db://<NAME>/<schema>/<table>/<key>` (NAME defaults to the database's name). One
    /// repository is `git:///<ref>/<path>`; several, `git://<NAME>/<ref>/<path>`. Agent
    /// skills, as `skills:DIR` or `NAME=skills:DIR`: each subdirectory holding a
    /// `SKILL.md` is served as `skill://[<NAME>/]<skill>/<file>`, with the skills
    /// extension (SEP-2640). With none, a bundled sample directory and database are
    /// served.
    pub(crate) sources: Vec<String>,

    /// Serve hidden files and directories (names starting with `.`).
    #[arg(long)]
    pub(crate) hidden: bool,

    /// Do not honour `.gitignore` and `.ignore` files.
    #[arg(long)]
    pub(crate) no_ignore: bool,

    /// Serve only files matching this glob (relative to the root, e.g. `**/*.md`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) include: Vec<String>,

    /// Never serve files or directories matching this glob; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) exclude: Vec<String>,

    /// Largest file or database row read (e.g. `32MiB`); larger ones are refused.
    #[arg(long, default_value = "32MiB", value_parser = crate::config::parse_size)]
    pub(crate) max_read: u64,

    /// Most bytes of content all requests together may hold (read and not yet sent);
    /// beyond it, reads wait for room.
    #[arg(long, default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub(crate) read_budget: u64,

    /// Most bytes of child content returned when a directory is read.
    #[arg(long, default_value = "1MiB", value_parser = crate::config::parse_size)]
    pub(crate) collection_budget: u64,

    /// Do not watch the directories and databases for changes (no subscriptions, no list
    /// changes).
    #[arg(long)]
    pub(crate) no_watch: bool,

    /// Changes to one file within this window are notified once.
    #[arg(long, default_value = "50ms", value_parser = humantime::parse_duration)]
    pub(crate) watch_window: Duration,

    /// Longest time one request may keep a database busy; a query running longer is
    /// stopped.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) db_timeout: Duration,

    /// How often databases are checked for commits by other programs.
    #[arg(long, default_value = "250ms", value_parser = humantime::parse_duration)]
    pub(crate) db_poll: Duration,

    /// Resources per `resources/list` page.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) page_size: u32,

    /// Also offer the resources as tools (list_resources, read_resource,
    /// search_resources, list_resource_templates), for hosts whose model only calls tools.
    #[arg(long)]
    pub(crate) tools: bool,

    /// Most characters of text one read_resource tool call returns; the result says where
    /// it was cut and how to read on.
    #[arg(long, default_value_t = 20_000, value_name = "CHARS")]
    pub(crate) tools_max_text: usize,

    /// Longest accepted message (e.g. `16MiB`).
    #[arg(long, default_value = "16MiB", value_parser = crate::config::parse_size)]
    pub(crate) max_message: u64,

    /// Most requests handled at once per stdio connection or HTTP session.
    #[arg(long, default_value_t = 128)]
    pub(crate) max_in_flight: usize,

    /// How long requests in flight may finish after stdin closes or, over HTTP, after
    /// SIGINT/SIGTERM.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) shutdown_grace: Duration,

    /// Read the configuration from this TOML file (see `docs/rsrc.example.toml`); flags
    /// given here override it, and sources named here are served after its own.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Print the effective configuration (the file with the flags applied) as TOML and
    /// exit.
    #[arg(long)]
    pub(crate) print_config: bool,

    /// Serve the fixture of the official MCP conformance suite (`test://…`) alongside
    /// the sources.
    #[arg(long)]
    pub(crate) conformance_fixtures: bool,

    #[command(flatten)]
    pub(crate) http: HttpArgs,

    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
}

/// Options of deployments of several instances.
#[derive(Args, Debug)]
#[command(next_help_heading = "Several instances")]
pub(crate) struct ClusterArgs {
    /// Share changes, and the watching of each source, with the other instances serving
    /// the same sources, through this Redis (`redis://[:PASSWORD@]HOST:PORT[/DB]`).
    #[arg(long, value_name = "URL")]
    pub(crate) bus: Option<String>,

    /// Prefix of the bus's channel and keys in Redis; deployments sharing a Redis need
    /// different ones.
    #[arg(long, default_value = "rsrc", value_name = "NAME")]
    pub(crate) bus_namespace: String,

    /// Seal cursors with the key on the first line of this file, and accept cursors
    /// sealed with the keys on the next lines (each at least 32 bytes of text, e.g.
    /// `openssl rand -hex 32`). Every instance must share it; without it, cursors are
    /// sealed with a random key and work on this process only.
    #[arg(long, value_name = "FILE")]
    pub(crate) cursor_key_file: Option<PathBuf>,
}

/// Options of the Streamable HTTP transport.
#[derive(Args, Debug)]
#[command(next_help_heading = "Streamable HTTP")]
pub(crate) struct HttpArgs {
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio (`PORT` alone binds
    /// 127.0.0.1).
    #[arg(long, value_name = "ADDR", value_parser = crate::config::parse_listen)]
    pub(crate) http: Option<SocketAddr>,

    /// Allow binding a non-loopback address (anyone who can reach it can read what is
    /// served: pair it with --bearer-token-file or a JWT key).
    #[arg(long)]
    pub(crate) allow_remote: bool,

    /// `Host` value to accept, e.g. `mcp.example.com` or `mcp.example.com:8443`
    /// (default: localhost, 127.0.0.1 and [::1] with the bound port); repeatable.
    #[arg(long, value_name = "HOST")]
    pub(crate) allowed_host: Vec<String>,

    /// `Origin` to accept from browsers, e.g. `https://app.example.com` (default: the
    /// allowed loopback hosts); repeatable.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allowed_origin: Vec<String>,

    /// Largest request body.
    #[arg(long, default_value = "4MiB", value_parser = crate::config::parse_size)]
    pub(crate) max_body: u64,

    /// Most HTTP connections at once.
    #[arg(long, default_value_t = 1024)]
    pub(crate) max_connections: usize,

    /// Most long-lived streams (GET streams, subscriptions) open at once.
    #[arg(long, default_value_t = 256)]
    pub(crate) max_streams: usize,

    /// Most sessions (2025 revisions) at once.
    #[arg(long, default_value_t = 4096)]
    pub(crate) max_sessions: usize,

    /// A session unused this long ends.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    pub(crate) session_idle: Duration,

    /// Longest wait for a request's headers, and for the next request on an idle
    /// keep-alive connection.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) header_timeout: Duration,

    /// Longest wait on a client that does not read its response (at least 16 KiB must
    /// go out in each such period), after which its connection is closed.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub(crate) write_timeout: Duration,

    /// Worker threads. One (the default) serves tens of thousands of requests per second
    /// with the least CPU per request; more spread connections over cores.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) threads: u16,

    /// Require `Authorization: Bearer <token>` with the token in this file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["jwt_secret_file", "jwt_public_key"])]
    pub(crate) bearer_token_file: Option<PathBuf>,

    /// Require JWTs signed with the HMAC secret in this file (HS256/384/512).
    #[arg(long, value_name = "FILE", conflicts_with = "jwt_public_key")]
    pub(crate) jwt_secret_file: Option<PathBuf>,

    /// Require JWTs signed by the private half of this PEM public key (RSA, EC or
    /// Ed25519).
    #[arg(long, value_name = "FILE")]
    pub(crate) jwt_public_key: Option<PathBuf>,

    /// Audience a JWT must name (default: the public URL); repeatable.
    #[arg(long, value_name = "AUD")]
    pub(crate) jwt_audience: Vec<String>,

    /// Issuer a JWT must name; repeatable (default: any).
    #[arg(long, value_name = "ISS")]
    pub(crate) jwt_issuer: Vec<String>,

    /// Authorization server to publish in the protected-resource metadata; repeatable.
    #[arg(long, value_name = "URL")]
    pub(crate) authorization_server: Vec<String>,

    /// This endpoint's public URL, e.g. `https://mcp.example.com/mcp` (default:
    /// `http://ADDR/mcp`): the resource identifier and default JWT audience.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
}

const INSTRUCTIONS: &str = "This server exposes resources. Use resources/list to browse, \
resources/list with a collection's uri to list its children, resources/metadata for \
metadata without content, and resources/read for content.";

/// Splits `NAME=REST` when `arg` is not an existing path and the part before `=` is a
/// plain name (no `/` or `:`), so that paths and URLs holding `=` stay whole.
fn split_name(arg: &str) -> (Option<&str>, &str) {
    if !Path::new(arg).exists()
        && let Some((name, rest)) = arg.split_once('=')
        && !name.is_empty()
        && !name.contains(['/', ':'])
    {
        return (Some(name), rest);
    }
    (None, arg)
}

/// Parses one source argument (one arm per kind), with the top level's options.
pub(crate) fn parse_source(arg: &str) -> Result<SourceConfig, String> {
    let (name, spec) = split_name(arg);
    let at = if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        Location::Postgres(spec.to_owned())
    } else if let Some(path) = spec.strip_prefix("git:") {
        if path.is_empty() {
            return Err(format!("{arg}: no repository after \"git:\""));
        }
        Location::Git(PathBuf::from(path))
    } else if let Some(path) = spec.strip_prefix("skills:") {
        if path.is_empty() || !Path::new(path).is_dir() {
            return Err(format!("{arg}: no directory of skills after \"skills:\""));
        }
        Location::Skills(PathBuf::from(path))
    } else if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() {
            return Err(format!("{arg}: no database file after \"sqlite:\""));
        }
        Location::Sqlite(PathBuf::from(path))
    } else {
        if name.is_none() && !Path::new(spec).is_dir() {
            return Err(format!("{arg}: not a directory"));
        }
        Location::Directory(PathBuf::from(spec))
    };
    Ok(SourceConfig {
        name: name.map(str::to_owned),
        at,
        options: SourceOptions::default(),
    })
}

/// `arg` with its path made absolute (symbolic links resolved), in the same form: what a
/// host that launches `rsrc serve` from anywhere must be given. A URL stays as it is.
pub(crate) fn absolute_source(arg: &str) -> Result<String, String> {
    let (name, _) = split_name(arg);
    let named = name.map(|n| format!("{n}=")).unwrap_or_default();
    let absolute = |path: &Path| {
        let full = std::fs::canonicalize(path)
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| format!("{arg}: {e}"))?;
        full.into_os_string()
            .into_string()
            .map_err(|_| format!("{arg}: the path is not UTF-8"))
    };
    Ok(match parse_source(arg)?.at {
        Location::Postgres(url) => format!("{named}{url}"),
        Location::Git(path) => format!("{named}git:{}", absolute(&path)?),
        Location::Skills(path) => format!("{named}skills:{}", absolute(&path)?),
        Location::Sqlite(path) => format!("{named}sqlite:{}", absolute(&path)?),
        Location::Directory(path) => format!("{named}{}", absolute(&path)?),
    })
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

/// The keys in `path`, one per line (see `--cursor-key-file`), each hashed to 32 bytes.
fn cursor_keys(path: &Path) -> Result<Vec<[u8; 32]>, String> {
    use sha2::Digest as _;
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.len() < 32 {
            return Err(format!(
                "{shown}:{}: a cursor key needs at least 32 characters (e.g. `openssl rand -hex 32`)",
                i + 1
            ));
        }
        keys.push(sha2::Sha256::digest(line.as_bytes()).into());
    }
    if keys.is_empty() {
        return Err(format!("{shown}: no cursor key in it"));
    }
    Ok(keys)
}

/// The runtime that serves: one thread, unless HTTP is given more.
fn serving_runtime(config: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    let threads = config.http.threads;
    if config.http.listen.is_none() || threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(threads))
            .enable_all()
            .build()
    }
}

fn build(
    config: &Config,
    runtime: &tokio::runtime::Runtime,
) -> Result<Server, Box<dyn std::error::Error>> {
    let server_config = ServerConfig {
        page_size: config.page_size as usize,
        read_budget: config.read_budget.0,
        ..ServerConfig::default()
    };
    let mut builder = Server::builder("rsrc", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .config(server_config);
    let cluster = &config.cluster;
    if let Some(path) = &cluster.cursor_key_file {
        builder = builder.cursor_keys(cursor_keys(path)?);
    }
    if let Some(url) = &cluster.bus {
        let mut options = RedisBusOptions::default();
        options.namespace.clone_from(&cluster.namespace);
        let bus = runtime
            .block_on(RedisBus::connect(url, options))
            .map_err(|e| format!("--bus {}: {e}", redact(url)))?;
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
                filter: Some(FilterConfig {
                    include_hidden: o.hidden.unwrap_or(config.hidden),
                    respect_ignore_files: o.ignore_files.unwrap_or(config.ignore_files),
                    include: o.include.clone().unwrap_or_default(),
                    exclude: o.exclude.clone().unwrap_or_default(),
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
                    Some(path) => {
                        Some(String::from_utf8(read_secret(path)?).map_err(|_| {
                            format!("{}: the password is not UTF-8", path.display())
                        })?)
                    }
                    None => None,
                },
                ..PostgresConfig::default()
            };
            let provider = runtime
                .block_on(PostgresProvider::connect(s.name.clone(), url, pg_config))
                .map_err(|e| format!("{}: {e}", redact(url)))?;
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

/// A connection string without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => match url[scheme + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

pub(crate) fn run(
    args: &ServeArgs,
    matches: &clap::ArgMatches,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::load(args, matches)?;
    if args.print_config {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(config.to_toml()?.as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    let runtime = serving_runtime(&config)?;
    let server = build(&config, &runtime)?;
    if let Some(Listen(addr)) = config.http.listen {
        return serve_http(&config, &server, addr, &runtime);
    }
    let stream = StreamConfig {
        max_line: usize::try_from(config.max_message.0).unwrap_or(usize::MAX),
        max_in_flight: config.max_in_flight.max(1),
        shutdown_grace: config.shutdown_grace.0,
        ..StreamConfig::default()
    };
    runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        let served = serve_stdio(&server, &stream).await;
        server.leave_cluster().await;
        served
    })?;
    Ok(())
}

fn read_secret(path: &Path) -> Result<Vec<u8>, String> {
    let mut bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    while bytes.last().is_some_and(u8::is_ascii_whitespace) {
        bytes.pop();
    }
    if bytes.is_empty() {
        return Err(format!("{}: empty", path.display()));
    }
    Ok(bytes)
}

fn auth_config(
    h: &HttpSection,
    addr: SocketAddr,
) -> Result<Option<AuthConfig>, Box<dyn std::error::Error>> {
    let a = &h.auth;
    let verifier = if let Some(path) = &a.bearer_token_file {
        let token = String::from_utf8(read_secret(path)?)
            .map_err(|_| format!("{}: the token is not UTF-8", path.display()))?;
        TokenVerifier::Static(token)
    } else if let Some(path) = &a.jwt_secret_file {
        TokenVerifier::Jwt(
            JwtVerifier::hmac(&read_secret(path)?)
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

fn serve_http(
    config: &Config,
    server: &Server,
    addr: SocketAddr,
    runtime: &tokio::runtime::Runtime,
) -> Result<(), Box<dyn std::error::Error>> {
    let h = &config.http;
    if !addr.ip().is_loopback() {
        if !h.allow_remote {
            return Err(format!(
                "refusing to bind {addr}: not a loopback address (pass --allow-remote to serve other hosts)"
            )
            .into());
        }
        tracing::warn!(%addr, "serving on a non-loopback address: anyone who can reach it can read what is served");
    }
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
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
            auth: auth_config(h, bound)?,
            ..HttpConfig::default()
        };
        rsrc::transport::http::serve_http(server, listener, http_config, shutdown_signal()).await?;
        server.leave_cluster().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::parse_source;
    use crate::config::Location;
    use std::path::PathBuf;

    #[test]
    fn sources_are_directories_or_named_databases() {
        let parsed = |arg: &str| parse_source(arg).map(|s| (s.name, s.at));
        assert_eq!(
            parsed("sqlite:data/shop.db"),
            Ok((None, Location::Sqlite(PathBuf::from("data/shop.db"))))
        );
        assert_eq!(
            parsed("sales=sqlite:/srv/x=y.db"),
            Ok((
                Some("sales".into()),
                Location::Sqlite(PathBuf::from("/srv/x=y.db"))
            ))
        );
        assert_eq!(
            parsed("sqlite:/srv/a=b.db"),
            Ok((None, Location::Sqlite(PathBuf::from("/srv/a=b.db"))))
        );
        assert_eq!(
            parsed("docs=/srv/docs"),
            Ok((
                Some("docs".into()),
                Location::Directory(PathBuf::from("/srv/docs"))
            ))
        );
        assert!(parse_source("sqlite:").is_err());
        assert!(parse_source("/definitely/not/here").is_err());
    }
}
