//! The servers to measure, read from `bench/servers.toml`, and how each is started.
//!
//! Invariant: a command runs through `sh -c "exec …"`, so the pid measured is the
//! server's own (or the program the shell's `exec` became), with `{root}` and `{port}`
//! the only placeholders replaced; a server whose program is missing is skipped with a
//! message, never measured as failing.

use std::path::Path;
use std::process::Stdio;

use serde::Deserialize;
use tokio::process::{Child, Command};

/// The file's shape: `[[server]]` tables.
#[derive(Deserialize)]
struct File {
    server: Vec<Server>,
}

/// One server: its commands per transport.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Server {
    /// What the tables call it.
    pub(crate) name: String,
    /// The command serving `{root}` on stdio.
    pub(crate) stdio: Option<String>,
    /// The command serving `{root}` over Streamable HTTP on 127.0.0.1:`{port}`.
    pub(crate) http: Option<String>,
    /// The endpoint's path (default `/mcp`).
    #[serde(default = "default_path")]
    pub(crate) path: String,
}

fn default_path() -> String {
    "/mcp".to_owned()
}

/// The two transports.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "stdio" => Some(Transport::Stdio),
            "http" => Some(Transport::Http),
            _ => None,
        }
    }
}

/// The servers of a `servers.toml` text.
pub(crate) fn parse(text: &str) -> Result<Vec<Server>, String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
    for server in &file.server {
        if server.stdio.is_none() && server.http.is_none() {
            return Err(format!("server {}: neither stdio nor http", server.name));
        }
        if let Some(http) = &server.http
            && !http.contains("{port}")
        {
            return Err(format!(
                "server {}: its http command has no {{port}}",
                server.name
            ));
        }
    }
    Ok(file.server)
}

/// `command` with its placeholders replaced.
pub(crate) fn expand(command: &str, root: &Path, port: u16) -> String {
    command
        .replace("{root}", &shell_quote(&root.to_string_lossy()))
        .replace("{port}", &port.to_string())
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Server {
    /// The command for `transport`, if the server has one.
    pub(crate) fn command(&self, transport: Transport) -> Option<&str> {
        match transport {
            Transport::Stdio => self.stdio.as_deref(),
            Transport::Http => self.http.as_deref(),
        }
    }

    /// Why the server cannot run here (its program is not found), if it cannot.
    pub(crate) async fn missing(&self, root: &Path) -> Option<String> {
        let command = self.stdio.as_deref().or(self.http.as_deref())?;
        let expanded = expand(command, root, 1);
        let check = format!("set -- {expanded}; command -v \"$1\" >/dev/null");
        let found = Command::new("sh")
            .arg("-c")
            .arg(&check)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        (!found).then(|| format!("{}: no program for `{command}`", self.name))
    }
}

/// Starts `command` (already expanded) in the repository's root, in a process group of
/// its own, killed when dropped; stdin and stdout piped for stdio, stderr to `log`.
pub(crate) fn spawn(
    command: &str,
    transport: Transport,
    cwd: &Path,
    log: std::fs::File,
) -> std::io::Result<Child> {
    let piped = || match transport {
        Transport::Stdio => Stdio::piped(),
        Transport::Http => Stdio::null(),
    };
    Command::new("sh")
        .arg("-c")
        .arg(format!("exec {command}"))
        .current_dir(cwd)
        .stdin(piped())
        .stdout(piped())
        .stderr(log)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_read_with_their_commands_and_default_path() {
        let servers = parse(
            r#"
            [[server]]
            name = "a"
            stdio = "a-server {root}"
            http = "a-server {root} --http 127.0.0.1:{port}"

            [[server]]
            name = "b"
            http = "b {root} {port}"
            path = "/other"
            "#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].path, "/mcp");
        assert_eq!(servers[1].path, "/other");
        assert!(servers[1].command(Transport::Stdio).is_none());
        let expanded = expand(
            servers[0].http.as_deref().unwrap(),
            Path::new("/f x/it's"),
            8080,
        );
        assert_eq!(expanded, r"a-server '/f x/it'\''s' --http 127.0.0.1:8080");
    }

    #[test]
    fn a_server_without_a_command_or_an_http_port_is_refused() {
        assert!(parse("[[server]]\nname = \"a\"\n").is_err());
        assert!(parse("[[server]]\nname = \"a\"\nhttp = \"a {root}\"\n").is_err());
        assert!(parse("[[server]]\nname = \"a\"\nstdio = \"a\"\ncolour = 1\n").is_err());
    }
}
