//! Loading the configuration: the file (if any), then every flag given on the command
//! line, then the command line's sources.
//!
//! Invariants: the defaults are the flags' (`Config::default` parses an empty command
//! line); only flags whose value comes from the command line override the file, and a
//! per-source flag also clears every source's own value; one way to authenticate named
//! by a flag replaces the file's; an error in the file names it, the line and column,
//! and the key.

use std::path::Path;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches};

use super::shape::{AdminSection, AuthSection, ClusterSection, Config, HttpSection, ToolsSection};
use crate::serve::args::{HttpArgs, ServeArgs};
use crate::serve::secrets::check_private;
use crate::serve::sources::{absolute, parse_source};
use crate::serve::values::{Dur, Listen, Size};
use crate::telemetry::TracingSection;

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
            drain_delay: Dur(a.drain_delay),
            watch: !a.no_watch,
            watch_window: Dur(a.watch_window),
            listing_freshness: a.listing_freshness,
            warm_listing: a.warm_listing,
            resource_metadata: !a.no_resource_metadata,
            conformance_fixtures: a.conformance_fixtures,
            hidden: a.hidden,
            ignore_files: !a.no_ignore,
            include: a.include.clone(),
            exclude: a.exclude.clone(),
            max_read: Size(a.max_read),
            db_timeout: Dur(a.db_timeout),
            db_poll: Dur(a.db_poll),
            allow_open_secrets: a.allow_open_secrets,
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
                bus_key_file: a.cluster.bus_key_file.clone(),
                bus_password_file: a.cluster.bus_password_file.clone(),
                bus_ca_file: a.cluster.bus_ca_file.clone(),
                namespace: a.cluster.bus_namespace.clone(),
                cursor_key_file: a.cluster.cursor_key_file.clone(),
            },
            admin: AdminSection {
                listen: a.admin.map(Listen),
            },
            tracing: TracingSection::default(),
            sources: Vec::new(),
            file: None,
        }
    }

    /// The effective configuration: the file named by `--config` (if any), then every
    /// flag given on the command line, then the command line's sources.
    pub(crate) fn load(args: &ServeArgs, matches: &ArgMatches) -> Result<Config, String> {
        let mut config = match &args.config {
            Some(path) => Config::read(path)?,
            None => Config::default(),
        };
        let holds_password = config.holds_password();
        config.apply_flags(args, matches);
        // A file with a password in it is a secret file.
        if let (Some(path), true) = (&args.config, holds_password) {
            check_private(path, config.allow_open_secrets)?;
        }
        config.file = args.config.as_deref().map(absolute).transpose()?;
        for arg in &args.sources {
            let mut source = parse_source(arg)?;
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
            &mut config.cluster.bus_key_file,
            &mut config.cluster.bus_password_file,
            &mut config.cluster.bus_ca_file,
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
            "drain_delay" => drain_delay;
            "admin" => admin.listen;
            "no_watch" => watch;
            "watch_window" => watch_window;
            "listing_freshness" => listing_freshness;
            "warm_listing" => warm_listing;
            "no_resource_metadata" => resource_metadata;
            "conformance_fixtures" => conformance_fixtures;
            "hidden" => hidden, source hidden;
            "no_ignore" => ignore_files, source ignore_files;
            "include" => include, source include;
            "exclude" => exclude, source exclude;
            "max_read" => max_read, source max_read;
            "db_timeout" => db_timeout, source db_timeout;
            "db_poll" => db_poll, source db_poll;
            "allow_open_secrets" => allow_open_secrets;
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
            "bus_key_file" => cluster.bus_key_file;
            "bus_password_file" => cluster.bus_password_file;
            "bus_ca_file" => cluster.bus_ca_file;
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
}
