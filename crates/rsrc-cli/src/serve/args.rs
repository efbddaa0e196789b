//! The flags of `rsrc serve`.
//!
//! Invariant: the defaults written here are the only defaults of the configuration (see
//! `config/`): a key left out of the file takes the value of the flag left off.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::{Freshness, parse_listen, parse_size};

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
    #[arg(long, default_value = "32MiB", value_parser = parse_size)]
    pub(crate) max_read: u64,

    /// Most bytes of content all requests together may hold (read and not yet sent);
    /// beyond it, reads wait for room.
    #[arg(long, default_value = "256MiB", value_parser = parse_size)]
    pub(crate) read_budget: u64,

    /// Most bytes of child content returned when a directory is read.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    pub(crate) collection_budget: u64,

    /// Do not watch the directories and databases for changes (no subscriptions, no list
    /// changes).
    #[arg(long)]
    pub(crate) no_watch: bool,

    /// Changes to one file within this window are notified once.
    #[arg(long, default_value = "50ms", value_parser = humantime::parse_duration)]
    pub(crate) watch_window: Duration,

    /// How a directory listing the server cached is known to be current: `watch` takes
    /// the file watcher's word while it is armed and has lost nothing (no system call per
    /// directory), and falls back to `stamp` where it cannot (an overflow, a directory it
    /// cannot watch, a network filesystem it recognises); `stamp` reads each cached
    /// directory's stamp on every listing, for network filesystems whose changes made
    /// elsewhere raise no event here.
    #[arg(long, value_enum, default_value_t = Freshness::Watch, value_name = "MODE")]
    pub(crate) listing_freshness: Freshness,

    /// Scan the served directories into the listing cache as soon as the server starts
    /// (up to the cache's 65,536 entries), so that the first listing is as fast as the
    /// next ones instead of reading every file's metadata as it goes. It costs the memory
    /// of the scanned entries from the start (about 4.7 MiB per 10,000 files), and helps
    /// only a listing within the cache's 2 s time to live of the scan. A listing asked for
    /// while the scan runs waits for it.
    #[arg(long)]
    pub(crate) warm_listing: bool,

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

    /// Serve exactly the standard shapes: no rsrc resource-metadata extension
    /// (dev.rsrc/resource-metadata, SEP-2093) is declared, no resourceType, capabilities
    /// or metadata on read contents is sent, resources/metadata is an unknown method, and
    /// a uri on resources/list is ignored.
    #[arg(long)]
    pub(crate) no_resource_metadata: bool,

    /// Also offer the resources as tools (list_resources, read_resource,
    /// search_resources, list_resource_templates), for hosts whose model only calls tools.
    #[arg(long)]
    pub(crate) tools: bool,

    /// Most characters of text one read_resource tool call returns; the result says where
    /// it was cut and how to read on.
    #[arg(long, default_value_t = 20_000, value_name = "CHARS")]
    pub(crate) tools_max_text: usize,

    /// Longest accepted message (e.g. `16MiB`).
    #[arg(long, default_value = "16MiB", value_parser = parse_size)]
    pub(crate) max_message: u64,

    /// Most requests handled at once per stdio connection or HTTP session.
    #[arg(long, default_value_t = 128)]
    pub(crate) max_in_flight: usize,

    /// How long requests in flight may finish after stdin closes or, over HTTP, after
    /// SIGINT/SIGTERM.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) shutdown_grace: Duration,

    /// Serve `/metrics` (Prometheus), `/healthz` and `/readyz` at `http://ADDR/`, apart
    /// from the MCP endpoint, over stdio too (`PORT` alone binds 127.0.0.1; another
    /// non-loopback address needs --allow-remote).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub(crate) admin: Option<SocketAddr>,

    /// After SIGTERM or SIGINT, how long `/readyz` answers 503 while everything is still
    /// served, so that load balancers stop sending requests before the server stops
    /// accepting them (then requests in flight get --shutdown-grace).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) drain_delay: Duration,

    /// Read the configuration from this TOML file (see `docs/rsrc.example.toml`); flags
    /// given here override it, and sources named here are served after its own.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Print the effective configuration (the file with the flags applied) as TOML and
    /// exit.
    #[arg(long)]
    pub(crate) print_config: bool,

    /// Accept files holding secrets (tokens, keys, passwords, a configuration file with a
    /// password in it) that their group or others may read; by default such a file is
    /// refused, as ssh refuses an unprotected private key.
    #[arg(long)]
    pub(crate) allow_open_secrets: bool,

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
    /// the same sources, through this Redis (`redis://[USER@]HOST:PORT[/DB]`, or
    /// `rediss://…` for TLS). Needs --bus-key-file.
    #[arg(long, value_name = "URL")]
    pub(crate) bus: Option<String>,

    /// The keys that authenticate what the instances write to Redis (messages, session
    /// records, replay logs), one per line, as for --cursor-key-file: the first signs,
    /// every one verifies. Every instance must share it.
    #[arg(long, value_name = "FILE")]
    pub(crate) bus_key_file: Option<PathBuf>,

    /// The Redis password (of the URL's user, or of `default`), read from this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) bus_password_file: Option<PathBuf>,

    /// With `rediss://`: Redis's certificate must chain to the certificate authority in
    /// this PEM file (instead of the system's roots).
    #[arg(long, value_name = "FILE")]
    pub(crate) bus_ca_file: Option<PathBuf>,

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
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
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
    #[arg(long, default_value = "4MiB", value_parser = parse_size)]
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
