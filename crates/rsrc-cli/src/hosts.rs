//! `rsrc config HOST [SOURCES]…`: the snippet a host needs to launch `rsrc serve` over
//! stdio, for Claude Desktop, Claude Code, VS Code and Cursor.
//!
//! Invariant: everything the snippet names is absolute — this program, every directory,
//! database and repository — because a host launches the server from a working directory
//! of its own. The snippet goes to stdout (to paste or redirect); where it goes in the host
//! is said on stderr.

use serde_json::{Value, json};

use crate::serve::absolute_source;

/// The hosts `rsrc config` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Host {
    /// Claude Desktop (`claude_desktop_config.json`).
    ClaudeDesktop,
    /// Claude Code (a `claude mcp add` command).
    ClaudeCode,
    /// VS Code (`.vscode/mcp.json`).
    Vscode,
    /// Cursor (`.cursor/mcp.json`).
    Cursor,
}

/// Print the configuration snippet a host needs to run `rsrc serve` over stdio.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    /// The host.
    #[arg(value_enum)]
    host: Host,
    /// What to serve, as for `rsrc serve` (relative paths are made absolute); none
    /// serves the bundled sample.
    sources: Vec<String>,
    /// The server's name in the host's configuration.
    #[arg(long, default_value = "rsrc")]
    name: String,
    /// Offer resources only, without the tools that let a model read them (most hosts'
    /// models only call tools).
    #[arg(long)]
    no_tools: bool,
}

/// The snippet, and where it goes.
pub(crate) fn run(args: &ConfigArgs) -> Result<(String, &'static str), String> {
    let program = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("the path of this program is unknown: {e}"))?
        .into_os_string()
        .into_string()
        .map_err(|_| "the path of this program is not UTF-8".to_owned())?;
    let mut serve = vec!["serve".to_owned()];
    if !args.no_tools {
        serve.push("--tools".to_owned());
    }
    for s in &args.sources {
        serve.push(absolute_source(s)?);
    }
    let entry = json!({"command": program, "args": serve});
    let servers = |key: &str, entry: Value| json!({ key: { args.name.clone(): entry } });
    Ok(match args.host {
        Host::ClaudeDesktop => (
            pretty(&servers("mcpServers", entry)),
            "add to claude_desktop_config.json (Settings → Developer → Edit Config), under \"mcpServers\"",
        ),
        Host::Cursor => (
            pretty(&servers("mcpServers", entry)),
            "add to ~/.cursor/mcp.json (every project) or .cursor/mcp.json (this one), under \"mcpServers\"",
        ),
        Host::Vscode => {
            let mut entry = entry;
            entry["type"] = json!("stdio");
            (
                pretty(&servers("servers", entry)),
                "add to .vscode/mcp.json (or run \"MCP: Open User Configuration\"), under \"servers\"",
            )
        }
        Host::ClaudeCode => {
            let words = [
                "claude",
                "mcp",
                "add",
                args.name.as_str(),
                "--",
                program.as_str(),
            ]
            .into_iter()
            .chain(serve.iter().map(String::as_str));
            let command = shlex::try_join(words)
                .map_err(|e| format!("the command cannot be quoted for a shell: {e}"))?;
            (
                command + "\n",
                "run this command (add --scope user before -- for every project)",
            )
        }
    })
}

fn pretty(value: &Value) -> String {
    // Serializing a JSON value cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}
