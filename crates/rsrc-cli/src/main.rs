//! The `rsrc` command: serve resources over MCP, and inspect any MCP server's resources.
//!
//! Invariant: when serving on stdio, stdout carries protocol messages only; every log line
//! goes to stderr.

mod config;
mod conformance;
mod hosts;
mod inspect;
mod sample;
mod serve;
mod ui;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "rsrc", version, about = "MCP resources: serve them, and inspect any server's", long_about = None)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace). `RSRC_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

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
    Config(hosts::ConfigArgs),
    /// Explore servers' resources in the browser: prints the page's URL (with its token)
    /// and serves it on loopback until interrupted. With no server, the bundled sample.
    #[command(override_usage = "rsrc ui [OPTIONS] [URL]... [-c COMMAND LINE]... [-- <COMMAND>...]")]
    Ui(Box<ui::UiArgs>),
    /// Converts the file on stdin with one converter, for `rsrc serve` (which runs it
    /// under limits).
    #[command(name = serve::CONVERT_WORKER, hide = true)]
    ConvertWorker {
        /// The converter's name.
        name: String,
    },
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("RSRC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    init_logging(cli.verbose);
    let outcome = match cli.command {
        Command::Serve(args) => {
            let serve = matches
                .subcommand_matches("serve")
                .expect("the serve subcommand was matched");
            serve::run(&args, serve)
        }
        Command::Config(args) => {
            return match hosts::run(&args) {
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
        Command::Ui(args) => ui::run(&args).map_err(|e| inspect::clean(&e.to_string()).into()),
        Command::ConvertWorker { name } => {
            let converters = rsrc_providers::fs::default_converters();
            return rsrc_providers::fs::convert_worker(&converters, &name);
        }
        Command::Inspect(command) => {
            return match inspect::run(command) {
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
