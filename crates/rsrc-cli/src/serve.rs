//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: unless told to use more threads, the whole server runs on one thread (a
//! current-thread runtime), so a request is decoded, served and encoded without a thread
//! hop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use rsrc::transport::http::{AuthConfig, HttpConfig, JwtVerifier, TokenVerifier};
use rsrc::transport::{StreamConfig, serve_stdio};
use rsrc::{Server, ServerConfig};
use rsrc_providers::db::postgres::{PostgresConfig, PostgresProvider};
use rsrc_providers::db::{self, sqlite};
use rsrc_providers::fs::{self, FilterConfig, FsConfig, FsProvider};
use rsrc_providers::git::{GitConfig, GitProvider};

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
    sources: Vec<String>,

    /// Serve hidden files and directories (names starting with `.`).
    #[arg(long)]
    hidden: bool,

    /// Do not honour `.gitignore` and `.ignore` files.
    #[arg(long)]
    no_ignore: bool,

    /// Serve only files matching this glob (relative to the root, e.g. `**/*.md`); repeatable.
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,

    /// Never serve files or directories matching this glob; repeatable.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,

    /// Largest file or database row read (e.g. `32MiB`); larger ones are refused.
    #[arg(long, default_value = "32MiB", value_parser = parse_size)]
    max_read: u64,

    /// Most bytes of content all requests together may hold (read and not yet sent);
    /// beyond it, reads wait for room.
    #[arg(long, default_value = "256MiB", value_parser = parse_size)]
    read_budget: u64,

    /// Most bytes of child content returned when a directory is read.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    collection_budget: u64,

    /// Do not watch the directories and databases for changes (no subscriptions, no list
    /// changes).
    #[arg(long)]
    no_watch: bool,

    /// Changes to one file within this window are notified once.
    #[arg(long, default_value = "50ms", value_parser = humantime::parse_duration)]
    watch_window: Duration,

    /// Longest time one request may keep a database busy; a query running longer is
    /// stopped.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    db_timeout: Duration,

    /// How often databases are checked for commits by other programs.
    #[arg(long, default_value = "250ms", value_parser = humantime::parse_duration)]
    db_poll: Duration,

    /// Resources per `resources/list` page.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    page_size: u32,

    /// Also offer the resources as tools (list_resources, read_resource,
    /// search_resources, list_resource_templates), for hosts whose model only calls tools.
    #[arg(long)]
    tools: bool,

    /// Most characters of text one read_resource tool call returns; the result says where
    /// it was cut and how to read on.
    #[arg(
        long,
        default_value_t = 20_000,
        value_name = "CHARS",
        requires = "tools"
    )]
    tools_max_text: usize,

    /// Longest accepted message (e.g. `16MiB`).
    #[arg(long, default_value = "16MiB", value_parser = parse_size)]
    max_message: u64,

    /// Most requests handled at once per stdio connection or HTTP session.
    #[arg(long, default_value_t = 128)]
    max_in_flight: usize,

    /// How long requests in flight may finish after stdin closes or, over HTTP, after
    /// SIGINT/SIGTERM.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,

    /// Serve the fixture of the official MCP conformance suite (`test://…`) alongside
    /// the sources.
    #[arg(long)]
    conformance_fixtures: bool,

    #[command(flatten)]
    http: HttpArgs,
}

/// Options of the Streamable HTTP transport.
#[derive(Args, Debug)]
#[command(next_help_heading = "Streamable HTTP")]
pub(crate) struct HttpArgs {
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio (`PORT` alone binds
    /// 127.0.0.1).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    http: Option<SocketAddr>,

    /// Allow binding a non-loopback address (anyone who can reach it can read what is
    /// served: pair it with --bearer-token-file or a JWT key).
    #[arg(long)]
    allow_remote: bool,

    /// `Host` value to accept, e.g. `mcp.example.com` or `mcp.example.com:8443`
    /// (default: localhost, 127.0.0.1 and [::1] with the bound port); repeatable.
    #[arg(long, value_name = "HOST")]
    allowed_host: Vec<String>,

    /// `Origin` to accept from browsers, e.g. `https://app.example.com` (default: the
    /// allowed loopback hosts); repeatable.
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Vec<String>,

    /// Largest request body.
    #[arg(long, default_value = "4MiB", value_parser = parse_size)]
    max_body: u64,

    /// Most HTTP connections at once.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,

    /// Most long-lived streams (GET streams, subscriptions) open at once.
    #[arg(long, default_value_t = 256)]
    max_streams: usize,

    /// Most sessions (2025 revisions) at once.
    #[arg(long, default_value_t = 4096)]
    max_sessions: usize,

    /// A session unused this long ends.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    session_idle: Duration,

    /// Longest wait for a request's headers, and for the next request on an idle
    /// keep-alive connection.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    header_timeout: Duration,

    /// Longest wait on a client that does not read its response (at least 16 KiB must
    /// go out in each such period), after which its connection is closed.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    write_timeout: Duration,

    /// Worker threads. One (the default) serves tens of thousands of requests per second
    /// with the least CPU per request; more spread connections over cores.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,

    /// Require `Authorization: Bearer <token>` with the token in this file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["jwt_secret_file", "jwt_public_key"])]
    bearer_token_file: Option<PathBuf>,

    /// Require JWTs signed with the HMAC secret in this file (HS256/384/512).
    #[arg(long, value_name = "FILE", conflicts_with = "jwt_public_key")]
    jwt_secret_file: Option<PathBuf>,

    /// Require JWTs signed by the private half of this PEM public key (RSA, EC or
    /// Ed25519).
    #[arg(long, value_name = "FILE")]
    jwt_public_key: Option<PathBuf>,

    /// Audience a JWT must name (default: the public URL); repeatable.
    #[arg(long, value_name = "AUD")]
    jwt_audience: Vec<String>,

    /// Issuer a JWT must name; repeatable (default: any).
    #[arg(long, value_name = "ISS")]
    jwt_issuer: Vec<String>,

    /// Authorization server to publish in the protected-resource metadata; repeatable.
    #[arg(long, value_name = "URL")]
    authorization_server: Vec<String>,

    /// This endpoint's public URL, e.g. `https://mcp.example.com/mcp` (default:
    /// `http://ADDR/mcp`): the resource identifier and default JWT audience.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
}

/// `ADDR:PORT`, `[V6]:PORT`, `localhost:PORT` or `PORT`.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = s.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("bad port in {s:?}"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("not an address: {s:?} (expected e.g. 127.0.0.1:8080 or 8080)"))
}

/// Parses `1024`, `64KiB`, `32MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`, `GB` as
/// powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?} (use KiB, MiB or GiB)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

const INSTRUCTIONS: &str = "This server exposes resources. Use resources/list to browse, \
resources/list with a collection's uri to list its children, resources/metadata for \
metadata without content, and resources/read for content.";

/// One source of resources, as given on the command line.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// A directory: `DIR` or `NAME=DIR`.
    Directory(String, PathBuf),
    /// A SQLite database file: `sqlite:PATH` or `NAME=sqlite:PATH`.
    Sqlite(String, PathBuf),
    /// A PostgreSQL database: `postgres://…` or `NAME=postgres://…`.
    Postgres(Option<String>, String),
    /// A git repository: `git:PATH` or `NAME=git:PATH`.
    Git(Option<String>, PathBuf),
    /// A directory of agent skills: `skills:DIR` or `NAME=skills:DIR`.
    Skills(Option<String>, PathBuf),
}

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

/// Parses one source argument: one arm per kind.
fn parse_source(arg: &str) -> Result<Source, String> {
    let (name, spec) = split_name(arg);
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        return Ok(Source::Postgres(name.map(str::to_owned), spec.to_owned()));
    }
    if let Some(path) = spec.strip_prefix("git:") {
        if path.is_empty() {
            return Err(format!("{arg}: no repository after \"git:\""));
        }
        return Ok(Source::Git(name.map(str::to_owned), PathBuf::from(path)));
    }
    if let Some(path) = spec.strip_prefix("skills:") {
        if path.is_empty() || !Path::new(path).is_dir() {
            return Err(format!("{arg}: no directory of skills after \"skills:\""));
        }
        return Ok(Source::Skills(name.map(str::to_owned), PathBuf::from(path)));
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() {
            return Err(format!("{arg}: no database file after \"sqlite:\""));
        }
        let path = PathBuf::from(path);
        let name = name.map_or_else(|| sqlite::default_name(&path), str::to_owned);
        return Ok(Source::Sqlite(name, path));
    }
    let path = Path::new(spec);
    if name.is_none() && !path.is_dir() {
        return Err(format!("{arg}: not a directory"));
    }
    let name = name.map_or_else(|| fs::default_root_name(path), str::to_owned);
    Ok(Source::Directory(name, path.to_path_buf()))
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
    Ok(match parse_source(arg)? {
        Source::Postgres(_, url) => format!("{named}{url}"),
        Source::Git(_, path) => format!("{named}git:{}", absolute(&path)?),
        Source::Skills(_, path) => format!("{named}skills:{}", absolute(&path)?),
        Source::Sqlite(_, path) => format!("{named}sqlite:{}", absolute(&path)?),
        Source::Directory(_, path) => format!("{named}{}", absolute(&path)?),
    })
}

/// The SQLite provider's settings from the command line.
fn sqlite_config(args: &ServeArgs) -> sqlite::SqliteConfig {
    sqlite::SqliteConfig {
        max_row_bytes: args.max_read,
        statement_timeout: args.db_timeout,
        collection_budget: args.collection_budget,
        watch: !args.no_watch,
        poll_interval: args.db_poll,
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

fn build(args: &ServeArgs) -> Result<Server, Box<dyn std::error::Error>> {
    let config = ServerConfig {
        page_size: args.page_size as usize,
        read_budget: args.read_budget,
        ..ServerConfig::default()
    };
    let mut builder = Server::builder("rsrc", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .config(config);
    if args.tools {
        builder = builder.tools(rsrc::ToolsConfig {
            max_text: args.tools_max_text,
            ..rsrc::ToolsConfig::default()
        });
    }
    if args.conformance_fixtures {
        builder = crate::conformance::mount(builder);
    }
    if args.sources.is_empty() {
        builder = builder.mount(crate::sample::PREFIX, crate::sample::sample());
        builder = builder.mount(db::PREFIX, crate::sample::database(&sqlite_config(args))?);
        return Ok(builder.build()?);
    }
    let mut dirs = Vec::new();
    let mut databases = Vec::new();
    let mut postgres = Vec::new();
    let mut repos = Vec::new();
    let mut skills = Vec::new();
    for arg in &args.sources {
        match parse_source(arg)? {
            Source::Directory(name, path) => dirs.push((name, path)),
            Source::Sqlite(name, path) => {
                databases.push(sqlite::SqliteSource::named_file(name, path));
            }
            Source::Postgres(name, url) => postgres.push((name, url)),
            Source::Git(name, path) => repos.push((name, path)),
            Source::Skills(name, path) => skills.push((name, path)),
        }
    }
    if !skills.is_empty() {
        let config = rsrc_providers::skills::SkillsConfig {
            poll_interval: (!args.no_watch).then_some(Duration::from_secs(2)),
            ..rsrc_providers::skills::SkillsConfig::default()
        };
        builder = rsrc_providers::skills::SkillsProvider::new(skills, config)?.install(builder);
    }
    if !postgres.is_empty() {
        // Connected before the server's runtime exists: a runtime of its own for the
        // handshake; the pool replaces those connections on first use.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let config = PostgresConfig {
            statement_timeout: args.db_timeout,
            collection_budget: usize::try_from(args.collection_budget).unwrap_or(usize::MAX),
            max_row_bytes: usize::try_from(args.max_read).unwrap_or(usize::MAX),
            watch: !args.no_watch,
            poll_interval: args.db_poll,
            ..PostgresConfig::default()
        };
        for (name, url) in postgres {
            let provider = runtime
                .block_on(PostgresProvider::connect(name, &url, config.clone()))
                .map_err(|e| format!("{}: {e}", redact(&url)))?;
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
            builder = builder.mount(provider.prefix().to_owned(), provider);
        }
    }
    let several = repos.len() > 1;
    for (name, path) in repos {
        let defaults = GitConfig::default();
        let config = GitConfig {
            poll_interval: defaults.poll_interval.filter(|_| !args.no_watch),
            max_blob: args.max_read,
            ..defaults
        };
        let provider = match name {
            Some(name) => GitProvider::open_named(&name, &path, config)?,
            None if several => {
                return Err(format!(
                    "{}: several repositories need names: NAME=git:PATH",
                    path.display()
                )
                .into());
            }
            None => GitProvider::open(&path, config)?,
        };
        builder = builder.mount(provider.prefix().to_owned(), provider);
    }
    if !dirs.is_empty() {
        let fs_config = FsConfig {
            filter: FilterConfig {
                include_hidden: args.hidden,
                respect_ignore_files: !args.no_ignore,
                include: args.include.clone(),
                exclude: args.exclude.clone(),
            },
            max_read: args.max_read,
            collection_budget: args.collection_budget,
            watch: !args.no_watch,
            watch_window: args.watch_window,
            ..conversions()
        };
        builder = builder.mount(fs::PREFIX, FsProvider::new(dirs, fs_config)?);
    }
    if !databases.is_empty() {
        let provider = sqlite::SqliteProvider::new(databases, sqlite_config(args))?;
        builder = builder.mount(db::PREFIX, provider);
    }
    Ok(builder.build()?)
}

/// A connection string without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => match url[scheme + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

pub(crate) fn run(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let server = build(args)?;
    if let Some(addr) = args.http.http {
        return serve_http(args, &server, addr);
    }
    let stream = StreamConfig {
        max_line: usize::try_from(args.max_message).unwrap_or(usize::MAX),
        max_in_flight: args.max_in_flight.max(1),
        shutdown_grace: args.shutdown_grace,
        ..StreamConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        serve_stdio(&server, &stream).await
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
    h: &HttpArgs,
    addr: SocketAddr,
) -> Result<Option<AuthConfig>, Box<dyn std::error::Error>> {
    let verifier = if let Some(path) = &h.bearer_token_file {
        let token = String::from_utf8(read_secret(path)?)
            .map_err(|_| format!("{}: the token is not UTF-8", path.display()))?;
        TokenVerifier::Static(token)
    } else if let Some(path) = &h.jwt_secret_file {
        TokenVerifier::Jwt(
            JwtVerifier::hmac(&read_secret(path)?)
                .audience(h.jwt_audience.clone())
                .issuer(h.jwt_issuer.clone()),
        )
    } else if let Some(path) = &h.jwt_public_key {
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TokenVerifier::Jwt(
            JwtVerifier::public_key_pem(&pem)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .audience(h.jwt_audience.clone())
                .issuer(h.jwt_issuer.clone()),
        )
    } else {
        return Ok(None);
    };
    let resource = h
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}/mcp"));
    let mut config = AuthConfig::new(verifier, resource);
    for a in &h.authorization_server {
        config = config.authorization_server(a.clone());
    }
    Ok(Some(config))
}

fn serve_http(
    args: &ServeArgs,
    server: &Server,
    addr: SocketAddr,
) -> Result<(), Box<dyn std::error::Error>> {
    let h = &args.http;
    if !addr.ip().is_loopback() {
        if !h.allow_remote {
            return Err(format!(
                "refusing to bind {addr}: not a loopback address (pass --allow-remote to serve other hosts)"
            )
            .into());
        }
        tracing::warn!(%addr, "serving on a non-loopback address: anyone who can reach it can read what is served");
    }
    let runtime = if h.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(h.threads))
            .enable_all()
            .build()?
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        // The bound address (the port, when 0 was asked for) names the resource.
        let bound = listener.local_addr()?;
        let config = HttpConfig {
            allowed_hosts: h.allowed_host.clone(),
            allowed_origins: h.allowed_origin.clone(),
            max_body: usize::try_from(h.max_body).unwrap_or(usize::MAX),
            max_connections: h.max_connections.max(1),
            max_streams: h.max_streams.max(1),
            max_in_flight: args.max_in_flight.max(1),
            max_sessions: h.max_sessions.max(1),
            session_idle: h.session_idle,
            header_read_timeout: h.header_timeout,
            write_stall_timeout: h.write_timeout.max(Duration::from_millis(100)),
            shutdown_grace: args.shutdown_grace,
            auth: auth_config(h, bound)?,
            ..HttpConfig::default()
        };
        rsrc::transport::http::serve_http(server, listener, config, shutdown_signal()).await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
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

#[cfg(test)]
mod tests {
    use super::{Source, parse_size, parse_source};
    use std::path::PathBuf;

    #[test]
    fn sources_are_directories_or_named_databases() {
        assert_eq!(
            parse_source("sqlite:data/shop.db"),
            Ok(Source::Sqlite("shop".into(), PathBuf::from("data/shop.db")))
        );
        assert_eq!(
            parse_source("sales=sqlite:/srv/x=y.db"),
            Ok(Source::Sqlite("sales".into(), PathBuf::from("/srv/x=y.db")))
        );
        assert_eq!(
            parse_source("sqlite:/srv/a=b.db"),
            Ok(Source::Sqlite("a=b".into(), PathBuf::from("/srv/a=b.db")))
        );
        assert_eq!(
            parse_source("docs=/srv/docs"),
            Ok(Source::Directory("docs".into(), PathBuf::from("/srv/docs")))
        );
        assert!(parse_source("sqlite:").is_err());
        assert!(parse_source("/definitely/not/here").is_err());
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("32MiB"), Ok(32 << 20));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999GiB").is_err());
    }
}
