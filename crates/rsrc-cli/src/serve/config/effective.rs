//! The effective configuration: every source with its settings filled in from the top
//! level (what is served), and the whole printed as TOML (`--print-config`).
//!
//! Invariants: a resolved source carries only the options its kind takes; what is
//! printed reads back to the same configuration, except that a password in a connection
//! string is masked.

use std::time::Duration;

use super::shape::Config;
use crate::serve::secrets::redact;
use crate::serve::sources::{Location, SourceConfig, SourceOptions};
use crate::serve::values::Dur;

impl Config {
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

    /// The connection strings written in the configuration (which may hold passwords).
    fn connections_mut(&mut self) -> impl Iterator<Item = &mut String> {
        let sources = self.sources.iter_mut().filter_map(|s| match &mut s.at {
            Location::Postgres(url) => Some(url),
            _ => None,
        });
        sources.chain(self.cluster.bus.as_mut())
    }

    /// Whether a connection string holds a password (the file holding it is a secret).
    pub(super) fn holds_password(&self) -> bool {
        self.clone().connections_mut().any(|c| redact(c) != *c)
    }

    /// The effective configuration as TOML, sources resolved, passwords masked.
    pub(crate) fn to_toml(&self) -> Result<String, String> {
        let mut shown = self.clone();
        shown.sources = self.resolved();
        for connection in shown.connections_mut() {
            *connection = redact(connection);
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

/// A repository's ref polling interval unless its source sets one.
fn git_poll() -> Dur {
    Dur(rsrc_providers::git::GitConfig::default()
        .poll_interval
        .unwrap_or(Duration::from_millis(500)))
}
