//! The `rsrc` command: serve resources over MCP, and inspect any MCP server's resources.
//!
//! Invariant: when serving on stdio, stdout carries protocol messages only; every log line
//! goes to stderr.

mod conformance;
mod host_config;
mod inspect;
mod interface;
mod sample;
mod serve;
mod telemetry;
mod ui;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The version `rsrc --version` and the manual pages give: the package's, and the source
/// commit it was built from (`build/commit.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("RSRC_COMMIT"), ")");

#[derive(Parser, Debug)]
#[command(name = "rsrc", version = VERSION, about = "MCP resources: serve them, and inspect any server's", long_about = None)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace). `RSRC_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    /// How log lines on stderr are written: `text`, or `json` (one object a line, with
    /// the method, id, session and trace id of the request being served).
    #[arg(
        long,
        value_enum,
        default_value_t,
        global = true,
        env = "RSRC_LOG_FORMAT"
    )]
    log_format: telemetry::LogFormat,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve resources over MCP (stdio, or Streamable HTTP with --http). With no source,
    /// serves a bundled sample.
    Serve(Box<serve::ServeArgs>),
    #[command(flatten)]
    Inspect(inspect::InspectCommand),
    /// Print what a host (Claude Desktop, Claude Code, VS Code, Cursor) needs to launch
    /// `rsrc serve` over stdio, with absolute paths.
    Config(host_config::ConfigArgs),
    /// Explore servers' resources in the browser: prints the page's URL (with its token)
    /// and serves it on loopback until interrupted. With no server, the bundled sample.
    #[command(override_usage = "rsrc ui [OPTIONS] [URL]... [-c COMMAND LINE]... [-- <COMMAND>...]")]
    Ui(Box<ui::UiArgs>),
    /// Print the shell completion script for rsrc (e.g. `rsrc completions bash >
    /// ~/.local/share/bash-completion/completions/rsrc`).
    Completions {
        /// The shell: bash, elvish, fish, powershell or zsh.
        shell: interface::Shell,
    },
    /// Print rsrc's manual page (roff: `rsrc man | man -l -`), or with --out write one
    /// page per command into a directory.
    Man {
        /// The directory to write `rsrc.1`, `rsrc-serve.1`, … into.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
    /// Converts the file on stdin with one converter, for `rsrc serve` (which runs it
    /// under limits).
    #[command(name = serve::CONVERT_WORKER, hide = true)]
    ConvertWorker {
        /// The converter's name.
        name: String,
    },
}

/// Installs logging and, when the `OTEL_*` variables configure them, traces (`rsrc
/// serve` does so itself once its configuration, which may name a collector, is read).
fn init_telemetry(cli: &Cli) -> Result<telemetry::Telemetry, String> {
    let traces =
        telemetry::TraceSettings::resolve(&telemetry::TracingSection::default(), |name| {
            std::env::var(name).ok()
        })?;
    telemetry::init(cli.verbose, cli.log_format, traces.as_ref())
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let _telemetry = match &cli.command {
        // `serve` installs its own once its configuration is read.
        Command::Serve(_) => None,
        // The converter runs sandboxed on untrusted files: it logs, and exports nothing.
        Command::Config(_)
        | Command::ConvertWorker { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => telemetry::init(cli.verbose, cli.log_format, None).ok(),
        _ => match init_telemetry(&cli) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("rsrc: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let outcome = match cli.command {
        Command::Serve(args) => {
            let serve = matches
                .subcommand_matches("serve")
                .expect("the serve subcommand was matched");
            serve::run(&args, serve, cli.verbose, cli.log_format)
        }
        Command::Config(args) => {
            return match host_config::run(&args) {
                Ok((snippet, where_to)) => {
                    use std::io::Write as _;
                    let mut out = std::io::stdout().lock();
                    if let Err(e) = out.write_all(snippet.as_bytes()).and_then(|()| out.flush()) {
                        eprintln!("rsrc: cannot write the snippet: {e}");
                        return ExitCode::from(2);
                    }
                    eprintln!("rsrc: {where_to}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rsrc: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Completions { shell } => {
            return match interface::completions(shell, Cli::command()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("rsrc: cannot write the completions: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Man { out } => {
            return match interface::manual(Cli::command(), out.as_deref()) {
                Ok(written) => {
                    for path in written {
                        eprintln!("rsrc: wrote {}", path.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rsrc: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Ui(args) => ui::run(&args).map_err(|e| inspect::clean(&e.to_string()).into()),
        Command::ConvertWorker { name } => {
            let converters = rsrc_providers::fs::default_converters();
            return rsrc_providers::fs::convert_worker(&converters, &name);
        }
        Command::Inspect(command) => {
            // The command's span: the root of its trace, when traces are exported.
            let span = tracing::info_span!(
                target: "rsrc_cli",
                "rsrc",
                otel.name = command.name(),
                otel.kind = "internal",
            );
            return match span.in_scope(|| inspect::run(command)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    // The failure may quote the server: never let it drive the terminal
                    // (each line cleaned on its own; a server's stderr is quoted line by
                    // line).
                    let text = e.to_string();
                    let mut lines = text.split('\n');
                    eprintln!("rsrc: {}", inspect::clean(lines.next().unwrap_or_default()));
                    for line in lines {
                        eprintln!("{}", inspect::clean(line));
                    }
                    ExitCode::from(e.exit_code())
                }
            };
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rsrc: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
