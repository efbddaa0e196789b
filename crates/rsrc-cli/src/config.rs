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

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::serve::{HttpArgs, ServeArgs};

/// A size in bytes, written `32MiB`, `64KiB`, `1GiB` or as a plain number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size(pub(crate) u64);

/// Parses `1024`, `64KiB`, `32MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`, `GB` as
/// powers of 1024).
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
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

impl std::fmt::Display for Size {
    /// The largest unit that divides the size exactly: what [`parse_size`] reads back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        match [(30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|(shift, _)| n != 0 && n.trailing_zeros() >= *shift)
        {
            Some((shift, unit)) => write!(f, "{}{unit}", n >> shift),
            None => write!(f, "{n}"),
        }
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(d).map_err(|_: D::Error| {
            serde::de::Error::custom(
                "expected a size: a number of bytes or a string like \"32MiB\"",
            )
        })? {
            Written::Bytes(n) => Ok(Size(n)),
            Written::Text(s) => parse_size(&s).map(Size).map_err(serde::de::Error::custom),
        }
    }
}

/// A duration, written `250ms`, `5s`, `30m`, `1h 30m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dur(pub(crate) Duration);

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text)
            .map(Dur)
            .map_err(|e| serde::de::Error::custom(format!("not a duration: {text:?} ({e})")))
    }
}

/// `ADDR:PORT`, `[V6]:PORT`, `localhost:PORT` or `PORT`.
pub(crate) fn parse_listen(s: &str) -> Result<SocketAddr, String> {
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

/// An HTTP listening address, written as for `--http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listen(pub(crate) SocketAddr);

impl Serialize for Listen {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Listen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Port(u16),
            Text(String),
        }
        match Written::deserialize(d).map_err(|_: D::Error| {
            serde::de::Error::custom("expected an address like \"127.0.0.1:8080\" or a port")
        })? {
            Written::Port(p) => Ok(Listen(SocketAddr::from(([127, 0, 0, 1], p)))),
            Written::Text(s) => parse_listen(&s)
                .map(Listen)
                .map_err(serde::de::Error::custom),
        }
    }
}

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
    /// Whether sources are watched and polled for changes.
    pub(crate) watch: bool,
    /// Changes to one file within this window are notified once.
    pub(crate) watch_window: Dur,
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
    /// The tools bridge.
    pub(crate) tools: ToolsSection,
    /// Streamable HTTP.
    pub(crate) http: HttpSection,
    /// Several instances serving the same sources.
    pub(crate) cluster: ClusterSection,
    /// What is served.
    pub(crate) sources: Vec<SourceConfig>,
}

/// `[cluster]`: what instances of one deployment share (see `docs/deployment.md`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ClusterSection {
    /// The Redis that carries changes and leases between instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bus: Option<String>,
    /// Prefix of the bus's channel and keys.
    pub(crate) namespace: String,
    /// The file holding the keys that seal cursors (the first seals, all open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor_key_file: Option<PathBuf>,
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

/// Where a source's resources come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A directory.
    Directory(PathBuf),
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection string.
    Postgres(String),
    /// A git repository.
    Git(PathBuf),
    /// A directory of agent skills.
    Skills(PathBuf),
}

impl Location {
    /// The key that names this kind of source in a `[[sources]]` table.
    fn key(&self) -> &'static str {
        match self {
            Location::Directory(_) => "path",
            Location::Sqlite(_) => "sqlite",
            Location::Postgres(_) => "postgres",
            Location::Git(_) => "git",
            Location::Skills(_) => "skills",
        }
    }

    /// The options a source of this kind takes.
    fn options(&self) -> &'static [&'static str] {
        match self {
            Location::Directory(_) => &[
                "hidden",
                "ignore_files",
                "include",
                "exclude",
                "max_read",
                "tools",
            ],
            Location::Sqlite(_) => &["max_read", "db_timeout", "db_poll", "tools"],
            Location::Postgres(_) => &[
                "max_read",
                "db_timeout",
                "db_poll",
                "password_file",
                "tools",
            ],
            Location::Git(_) => &["max_read", "poll", "tools"],
            Location::Skills(_) => &["tools"],
        }
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        match self {
            Location::Directory(p)
            | Location::Sqlite(p)
            | Location::Git(p)
            | Location::Skills(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

/// A source's own settings; an absent one takes the top-level value.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SourceOptions {
    pub(crate) hidden: Option<bool>,
    pub(crate) ignore_files: Option<bool>,
    pub(crate) include: Option<Vec<String>>,
    pub(crate) exclude: Option<Vec<String>>,
    pub(crate) max_read: Option<Size>,
    pub(crate) db_timeout: Option<Dur>,
    pub(crate) db_poll: Option<Dur>,
    /// A git repository's ref polling interval.
    pub(crate) poll: Option<Dur>,
    /// A file holding a PostgreSQL password.
    pub(crate) password_file: Option<PathBuf>,
    /// Whether the source is offered through the tools (when they are on).
    pub(crate) tools: Option<bool>,
}

impl SourceOptions {
    /// The keys that are set.
    fn set(&self) -> impl Iterator<Item = &'static str> {
        [
            ("hidden", self.hidden.is_some()),
            ("ignore_files", self.ignore_files.is_some()),
            ("include", self.include.is_some()),
            ("exclude", self.exclude.is_some()),
            ("max_read", self.max_read.is_some()),
            ("db_timeout", self.db_timeout.is_some()),
            ("db_poll", self.db_poll.is_some()),
            ("poll", self.poll.is_some()),
            ("password_file", self.password_file.is_some()),
            ("tools", self.tools.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
    }
}

/// One source: a `[[sources]]` table, or a source named on the command line.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(try_from = "SourceTable", into = "SourceTable")]
pub(crate) struct SourceConfig {
    /// Its name in URIs (directories and SQLite files default to the file's name).
    pub(crate) name: Option<String>,
    pub(crate) at: Location,
    pub(crate) options: SourceOptions,
}

/// A `[[sources]]` table as written: the name, one location key and the options.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sqlite: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    postgres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    git: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skills: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignore_files: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exclude: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_read: Option<Size>,
    #[serde(skip_serializing_if = "Option::is_none")]
    db_timeout: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    db_poll: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll: Option<Dur>,
    #[serde(skip_serializing_if = "Option::is_none")]
    password_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<bool>,
}

impl TryFrom<SourceTable> for SourceConfig {
    type Error = String;

    fn try_from(t: SourceTable) -> Result<Self, String> {
        let mut found = [
            t.path.map(Location::Directory),
            t.sqlite.map(Location::Sqlite),
            t.postgres.map(Location::Postgres),
            t.git.map(Location::Git),
            t.skills.map(Location::Skills),
        ]
        .into_iter()
        .flatten();
        let at = found
            .next()
            .ok_or("a source needs one of `path`, `sqlite`, `postgres`, `git` or `skills`")?;
        if let Some(other) = found.next() {
            return Err(format!(
                "a source has one location: `{}` and `{}` are both set",
                at.key(),
                other.key()
            ));
        }
        let options = SourceOptions {
            hidden: t.hidden,
            ignore_files: t.ignore_files,
            include: t.include,
            exclude: t.exclude,
            max_read: t.max_read,
            db_timeout: t.db_timeout,
            db_poll: t.db_poll,
            poll: t.poll,
            password_file: t.password_file,
            tools: t.tools,
        };
        if let Some(key) = options.set().find(|k| !at.options().contains(k)) {
            return Err(format!(
                "`{key}` does not apply to a `{}` source (it takes {})",
                at.key(),
                at.options()
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(SourceConfig {
            name: t.name,
            at,
            options,
        })
    }
}

impl From<SourceConfig> for SourceTable {
    fn from(s: SourceConfig) -> Self {
        let o = s.options;
        let mut t = SourceTable {
            name: s.name,
            path: None,
            sqlite: None,
            postgres: None,
            git: None,
            skills: None,
            hidden: o.hidden,
            ignore_files: o.ignore_files,
            include: o.include,
            exclude: o.exclude,
            max_read: o.max_read,
            db_timeout: o.db_timeout,
            db_poll: o.db_poll,
            poll: o.poll,
            password_file: o.password_file,
            tools: o.tools,
        };
        match s.at {
            Location::Directory(p) => t.path = Some(p),
            Location::Sqlite(p) => t.sqlite = Some(p),
            Location::Postgres(url) => t.postgres = Some(url),
            Location::Git(p) => t.git = Some(p),
            Location::Skills(p) => t.skills = Some(p),
        }
        t
    }
}

impl Default for Config {
    /// The command line's defaults.
    fn default() -> Self {
        let matches = ServeArgs::augment_args(clap::Command::new("serve"))
            .try_get_matches_from(["serve"])
            .expect("the defaults of `rsrc serve` parse");
        let args =
            ServeArgs::from_arg_matches(&matches).expect("the defaults of `rsrc serve` parse");
        Config::from_flags(&args)
    }
}

impl Default for ToolsSection {
    fn default() -> Self {
        Config::default().tools
    }
}

impl Default for HttpSection {
    fn default() -> Self {
        Config::default().http
    }
}

impl Default for ClusterSection {
    fn default() -> Self {
        Config::default().cluster
    }
}

impl Config {
    /// The flags' values (given or default) as a configuration, without sources.
    fn from_flags(a: &ServeArgs) -> Config {
        let h: &HttpArgs = &a.http;
        Config {
            page_size: a.page_size,
            max_message: Size(a.max_message),
            max_in_flight: a.max_in_flight,
            read_budget: Size(a.read_budget),
            collection_budget: Size(a.collection_budget),
            shutdown_grace: Dur(a.shutdown_grace),
            watch: !a.no_watch,
            watch_window: Dur(a.watch_window),
            conformance_fixtures: a.conformance_fixtures,
            hidden: a.hidden,
            ignore_files: !a.no_ignore,
            include: a.include.clone(),
            exclude: a.exclude.clone(),
            max_read: Size(a.max_read),
            db_timeout: Dur(a.db_timeout),
            db_poll: Dur(a.db_poll),
            tools: ToolsSection {
                enabled: a.tools,
                max_text: a.tools_max_text,
            },
            http: HttpSection {
                listen: h.http.map(Listen),
                allow_remote: h.allow_remote,
                allowed_hosts: h.allowed_host.clone(),
                allowed_origins: h.allowed_origin.clone(),
                max_body: Size(h.max_body),
                max_connections: h.max_connections,
                max_streams: h.max_streams,
                max_sessions: h.max_sessions,
                session_idle: Dur(h.session_idle),
                header_timeout: Dur(h.header_timeout),
                write_timeout: Dur(h.write_timeout),
                threads: h.threads,
                public_url: h.public_url.clone(),
                auth: AuthSection {
                    bearer_token_file: h.bearer_token_file.clone(),
                    jwt_secret_file: h.jwt_secret_file.clone(),
                    jwt_public_key: h.jwt_public_key.clone(),
                    jwt_audience: h.jwt_audience.clone(),
                    jwt_issuer: h.jwt_issuer.clone(),
                    authorization_servers: h.authorization_server.clone(),
                },
            },
            cluster: ClusterSection {
                bus: a.cluster.bus.clone(),
                namespace: a.cluster.bus_namespace.clone(),
                cursor_key_file: a.cluster.cursor_key_file.clone(),
            },
            sources: Vec::new(),
        }
    }

    /// The effective configuration: the file named by `--config` (if any), then every
    /// flag given on the command line, then the command line's sources.
    pub(crate) fn load(args: &ServeArgs, matches: &ArgMatches) -> Result<Config, String> {
        let mut config = match &args.config {
            Some(path) => Config::read(path)?,
            None => Config::default(),
        };
        config.apply_flags(args, matches);
        for arg in &args.sources {
            let mut source = crate::serve::parse_source(arg)?;
            source.absolutize(Path::new(""))?;
            config.sources.push(source);
        }
        Ok(config)
    }

    /// Reads a configuration file; its relative paths are relative to the file.
    pub(crate) fn read(path: &Path) -> Result<Config, String> {
        let shown = path.display();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
        let mut config = Config::parse(&text).map_err(|e| format!("{shown}:{e}"))?;
        let base = path.parent().unwrap_or(Path::new(""));
        for source in &mut config.sources {
            source
                .absolutize(base)
                .map_err(|e| format!("{shown}: {e}"))?;
        }
        let auth = &mut config.http.auth;
        for file in [
            &mut auth.bearer_token_file,
            &mut auth.jwt_secret_file,
            &mut auth.jwt_public_key,
            &mut config.cluster.cursor_key_file,
        ]
        .into_iter()
        .flatten()
        {
            *file = absolute(&base.join(&*file)).map_err(|e| format!("{shown}: {e}"))?;
        }
        Ok(config)
    }

    /// Parses a configuration's text; an error starts with `LINE:COLUMN: KEY: `.
    pub(crate) fn parse(text: &str) -> Result<Config, String> {
        let located = |e: toml::de::Error, key: String| {
            let (line, column) = e.span().map_or((1, 1), |span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (line, column)
            });
            let key = if key.is_empty() || key == "." {
                String::new()
            } else {
                format!(" {key}:")
            };
            format!("{line}:{column}:{key} {}", e.message().trim_end())
        };
        let deserializer =
            toml::Deserializer::parse(text).map_err(|e| located(e, String::new()))?;
        serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let key = e.path().to_string();
            located(e.into_inner(), key)
        })
    }

    /// Sets everything given on the command line, for the server and every source.
    fn apply_flags(&mut self, args: &ServeArgs, matches: &ArgMatches) {
        let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        let flags = Config::from_flags(args);
        macro_rules! take {
            ($($id:literal => $($field:ident).+ $(, source $option:ident)?;)*) => {$(
                if given($id) {
                    self.$($field).+ = flags.$($field).+.clone();
                    $(for s in &mut self.sources {
                        s.options.$option = None;
                    })?
                }
            )*};
        }
        take! {
            "page_size" => page_size;
            "max_message" => max_message;
            "max_in_flight" => max_in_flight;
            "read_budget" => read_budget;
            "collection_budget" => collection_budget;
            "shutdown_grace" => shutdown_grace;
            "no_watch" => watch;
            "watch_window" => watch_window;
            "conformance_fixtures" => conformance_fixtures;
            "hidden" => hidden, source hidden;
            "no_ignore" => ignore_files, source ignore_files;
            "include" => include, source include;
            "exclude" => exclude, source exclude;
            "max_read" => max_read, source max_read;
            "db_timeout" => db_timeout, source db_timeout;
            "db_poll" => db_poll, source db_poll;
            "tools" => tools.enabled;
            "tools_max_text" => tools.max_text;
            "http" => http.listen;
            "allow_remote" => http.allow_remote;
            "allowed_host" => http.allowed_hosts;
            "allowed_origin" => http.allowed_origins;
            "max_body" => http.max_body;
            "max_connections" => http.max_connections;
            "max_streams" => http.max_streams;
            "max_sessions" => http.max_sessions;
            "session_idle" => http.session_idle;
            "header_timeout" => http.header_timeout;
            "write_timeout" => http.write_timeout;
            "threads" => http.threads;
            "public_url" => http.public_url;
            "jwt_audience" => http.auth.jwt_audience;
            "jwt_issuer" => http.auth.jwt_issuer;
            "authorization_server" => http.auth.authorization_servers;
            "bus" => cluster.bus;
            "bus_namespace" => cluster.namespace;
            "cursor_key_file" => cluster.cursor_key_file;
        }
        // One way to authenticate: a flag naming one replaces the file's.
        if ["bearer_token_file", "jwt_secret_file", "jwt_public_key"]
            .into_iter()
            .any(given)
        {
            let auth = &mut self.http.auth;
            auth.bearer_token_file
                .clone_from(&flags.http.auth.bearer_token_file);
            auth.jwt_secret_file
                .clone_from(&flags.http.auth.jwt_secret_file);
            auth.jwt_public_key
                .clone_from(&flags.http.auth.jwt_public_key);
        }
    }

    /// Every source with its own settings filled in from the top level: what is served,
    /// and what `--print-config` shows.
    pub(crate) fn resolved(&self) -> Vec<SourceConfig> {
        self.sources
            .iter()
            .map(|s| {
                let o = &s.options;
                let full = SourceOptions {
                    hidden: Some(o.hidden.unwrap_or(self.hidden)),
                    ignore_files: Some(o.ignore_files.unwrap_or(self.ignore_files)),
                    include: Some(o.include.clone().unwrap_or_else(|| self.include.clone())),
                    exclude: Some(o.exclude.clone().unwrap_or_else(|| self.exclude.clone())),
                    max_read: Some(o.max_read.unwrap_or(self.max_read)),
                    db_timeout: Some(o.db_timeout.unwrap_or(self.db_timeout)),
                    db_poll: Some(o.db_poll.unwrap_or(self.db_poll)),
                    poll: Some(o.poll.unwrap_or_else(git_poll)),
                    password_file: o.password_file.clone(),
                    tools: Some(o.tools.unwrap_or(true)),
                };
                let keep = |key: &str| s.at.options().contains(&key);
                SourceConfig {
                    name: s.name.clone(),
                    at: s.at.clone(),
                    options: SourceOptions {
                        hidden: full.hidden.filter(|_| keep("hidden")),
                        ignore_files: full.ignore_files.filter(|_| keep("ignore_files")),
                        include: full.include.filter(|_| keep("include")),
                        exclude: full.exclude.filter(|_| keep("exclude")),
                        max_read: full.max_read.filter(|_| keep("max_read")),
                        db_timeout: full.db_timeout.filter(|_| keep("db_timeout")),
                        db_poll: full.db_poll.filter(|_| keep("db_poll")),
                        poll: full.poll.filter(|_| keep("poll")),
                        password_file: full.password_file,
                        tools: full.tools.filter(|_| keep("tools")),
                    },
                }
            })
            .collect()
    }

    /// The effective configuration as TOML, sources resolved, passwords masked.
    pub(crate) fn to_toml(&self) -> Result<String, String> {
        let mut shown = self.clone();
        shown.sources = self.resolved();
        for s in &mut shown.sources {
            if let Location::Postgres(url) = &mut s.at {
                *url = crate::serve::redact(url);
            }
        }
        if let Some(url) = &mut shown.cluster.bus {
            *url = crate::serve::redact(url);
        }
        let text = toml::to_string_pretty(&shown)
            .map_err(|e| format!("cannot print the configuration: {e}"))?;
        let mut out = String::from(
            "# The effective configuration of `rsrc serve` (defaults included); a password in\n# a connection string is masked.\n",
        );
        if shown.sources.is_empty() {
            out.push_str("# No sources: the bundled sample directory and database are served.\n");
        }
        out.push_str(&text);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        Ok(out)
    }
}

impl SourceConfig {
    /// Makes the location's path absolute (relative to `base`, then to the working
    /// directory) and fills in the default name of directories and SQLite files.
    fn absolutize(&mut self, base: &Path) -> Result<(), String> {
        if let Some(path) = self.at.path_mut() {
            *path = absolute(&base.join(&*path))?;
        }
        if let Some(path) = &mut self.options.password_file {
            *path = absolute(&base.join(&*path))?;
        }
        if self.name.is_none() {
            self.name = match &self.at {
                Location::Directory(p) => Some(rsrc_providers::fs::default_root_name(p)),
                Location::Sqlite(p) => Some(rsrc_providers::db::sqlite::default_name(p)),
                _ => None,
            };
        }
        Ok(())
    }
}

/// A repository's ref polling interval unless its source sets one.
fn git_poll() -> Dur {
    Dur(rsrc_providers::git::GitConfig::default()
        .poll_interval
        .unwrap_or(Duration::from_millis(500)))
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::{Size, parse_size};

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

    #[test]
    fn sizes_print_in_the_largest_exact_unit_and_read_back() {
        for (n, shown) in [
            (0, "0"),
            (1000, "1000"),
            (1024, "1KiB"),
            (1536, "1536"),
            (3 << 20, "3MiB"),
            ((1 << 30) + (1 << 20), "1025MiB"),
            (5 << 30, "5GiB"),
        ] {
            assert_eq!(Size(n).to_string(), shown);
            assert_eq!(parse_size(shown), Ok(n));
        }
    }
}
