//! How every inspection command reaches its server: the shared options (`Target`: a URL
//! or a stdio command, timeout, era, headers, page cap) and the connection they open.
//!
//! Invariant: a command talks to exactly one server, named either by an `http(s)://`
//! URL before its own arguments or by a command after `--`, and gets exactly as many
//! positional arguments as it declares; anything else is a usage error (exit 2) before any
//! connection is attempted. A stdio server is talked to as long as its `Session` lives;
//! then its input is closed and it is given a bounded moment to end on its own (to finish
//! what it does at exit, such as exporting its spans) before it is killed ([`reap`]).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use clap::Args;
use rsrc::protocol::ProtocolVersion;
use rsrc_client::{Client, ClientOptions, EraPreference};

use super::failure::Failure;

/// How to reach the server, shared by every inspection command.
#[derive(Args, Debug)]
pub(crate) struct Target {
    /// The server's Streamable HTTP endpoint (`http://…` or `https://…`), followed by the
    /// command's arguments. For a stdio server, give its command after `--` instead.
    #[arg(value_name = "ARGS")]
    args: Vec<String>,

    /// The command that starts a stdio server (everything after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// How long to wait for each answer.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    timeout: Duration,

    /// Which protocol revision to speak: `auto` tries 2026-07-28 (`server/discover`) and
    /// falls back to `initialize`.
    #[arg(long, default_value = "auto", value_parser = parse_era)]
    era: EraPreference,

    /// An HTTP header for every request, as `Name: value` (e.g. an `Authorization`);
    /// repeatable.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,

    /// Most pages followed in one listing.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    max_pages: u32,
}
pub(crate) fn parse_era(s: &str) -> Result<EraPreference, String> {
    if s == "auto" {
        return Ok(EraPreference::Auto);
    }
    match s.parse::<ProtocolVersion>() {
        Ok(v) if v.is_modern() => Ok(EraPreference::Modern),
        Ok(v) => Ok(EraPreference::Legacy(v)),
        Err(_) => Err("expected auto, 2026-07-28, 2025-11-25 or 2025-06-18".into()),
    }
}

pub(crate) fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| "expected `Name: value`".to_owned())?;
    let name = name.trim();
    if name.is_empty() {
        return Err("the header name is empty".into());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}
/// A connected server and the command's own positional arguments.
pub(super) struct Session {
    pub(super) client: Client,
    /// A stdio server, handed to [`reap`] when the session ends (killed if it is dropped
    /// unreaped).
    child: Option<tokio::process::Child>,
    pub(super) args: Vec<String>,
    pub(super) max_pages: usize,
}

/// Stdio servers whose session ended, waiting for [`reap`].
static ENDED: Mutex<Vec<tokio::process::Child>> = Mutex::new(Vec::new());

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            ENDED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(child);
        }
    }
}

/// Lets every stdio server whose session ended (its input now closed) end on its own,
/// within a bound (longer when it may be exporting spans), then kills what is left.
pub(super) async fn reap() {
    let ended = std::mem::take(&mut *ENDED.lock().unwrap_or_else(PoisonError::into_inner));
    let bound = if crate::telemetry::client_trace_context().is_some() {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(2)
    };
    for mut child in ended {
        if tokio::time::timeout(bound, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// The inspection commands, to name the one that was run in a usage hint.
const COMMANDS: [&str; 6] = ["ls", "read", "stat", "templates", "complete", "watch"];

/// The usage error for a command given the wrong number of its own arguments: `names`
/// (`<URI>`) is what it takes, `args` what it got, `command` the stdio server's command
/// if there is one. A stdio server's command comes last, after `--`, so the arguments
/// go before it; when the command ends in what looks like the missing URI, the hint
/// moves it there.
fn arity_error(names: &str, args: &[String], command: Option<&[String]>) -> String {
    if names.is_empty() {
        return format!("unexpected arguments: {}", args.join(" "));
    }
    let Some(command) = command else {
        return format!("expected {names} after the server");
    };
    // `rsrc read`, as it was run (the subcommand is the first of its names on the line).
    let run = std::env::args()
        .skip(1)
        .take_while(|a| a != "--")
        .find(|a| COMMANDS.contains(&a.as_str()))
        .map_or_else(|| "rsrc …".to_owned(), |c| format!("rsrc {c}"));
    let quoted = |words: &[String]| {
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
    };
    let (given, server) = match command.split_last() {
        Some((last, rest)) if args.is_empty() && !rest.is_empty() && looks_like_uri(last) => {
            (quoted(std::slice::from_ref(last)), quoted(rest))
        }
        _ if args.is_empty() => (names.to_owned(), quoted(command)),
        _ => (quoted(args), quoted(command)),
    };
    format!(
        "expected {names} before `--`: the arguments go first, the server's command last          ({run} {given} -- {server})"
    )
}

/// Whether `word` reads as a URI (`scheme:…`) rather than an argument of a server.
fn looks_like_uri(word: &str) -> bool {
    word.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

impl Target {
    /// Connects to the server this target names. `arity` is how many positional arguments
    /// the command takes (`None`: at least one).
    pub(super) async fn connect(
        self,
        arity: Option<usize>,
        names: &str,
    ) -> Result<Session, Failure> {
        let mut args = self.args;
        let url = if self.command.is_empty() {
            match args.first() {
                Some(a) if a.starts_with("http://") || a.starts_with("https://") => {
                    Some(args.remove(0))
                }
                _ => {
                    return Err(Failure::Usage(
                        "name the server: an http(s):// URL first, or a stdio command after `--`"
                            .into(),
                    ));
                }
            }
        } else {
            None
        };
        let arity_ok = match arity {
            Some(n) => args.len() == n,
            None => !args.is_empty(),
        };
        if !arity_ok {
            return Err(Failure::Usage(arity_error(
                names,
                &args,
                (!self.command.is_empty()).then_some(self.command.as_slice()),
            )));
        }
        let options = ClientOptions {
            request_timeout: self.timeout,
            probe_timeout: self.timeout.min(Duration::from_secs(5)),
            era: self.era,
            http_headers: self.headers,
            trace_context: crate::telemetry::client_trace_context(),
            ..ClientOptions::default()
        };
        let (client, child) = match url {
            Some(url) => {
                let client = Client::connect_http(&url, options)
                    .await
                    .map_err(|e| Failure::Usage(format!("cannot connect to {url}: {e}")))?;
                (client, None)
            }
            None => {
                let mut command = tokio::process::Command::new(&self.command[0]);
                command.args(&self.command[1..]);
                // The server's stderr is kept, so that one that fails to start says why
                // (its last lines, after the error).
                let spawned = Client::spawn_keeping_stderr(&mut command, options)
                    .await
                    .map_err(|e| {
                        Failure::Usage(format!(
                            "cannot start or talk to `{}`: {e}",
                            self.command[0]
                        ))
                    })?;
                (spawned.client, Some(spawned.child))
            }
        };
        Ok(Session {
            client,
            child,
            args,
            max_pages: self.max_pages as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn a_uri_left_after_the_stdio_command_is_shown_moved_before_it() {
        let command = words("rsrc serve docs/ file:///rmcp.md");
        let e = arity_error("<URI>", &[], Some(&command));
        assert!(e.starts_with("expected <URI> before `--`"), "{e}");
        assert!(
            e.ends_with(" file:///rmcp.md -- rsrc serve docs/)"),
            "the hint puts the URI before `--`: {e}"
        );
    }

    #[test]
    fn a_missing_argument_with_a_stdio_command_is_placed_before_the_double_dash() {
        let command = words("my-server --flag");
        let e = arity_error("<URI>", &[], Some(&command));
        assert!(e.ends_with(" <URI> -- my-server --flag)"), "{e}");
        let e = arity_error(
            "<URI-TEMPLATE> <VAR> <PREFIX>",
            &words("t v"),
            Some(&command),
        );
        assert!(
            e.starts_with("expected <URI-TEMPLATE> <VAR> <PREFIX> before `--`"),
            "{e}"
        );
    }

    #[test]
    fn without_a_stdio_command_the_arguments_follow_the_url() {
        assert_eq!(
            arity_error("<URI>", &[], None),
            "expected <URI> after the server"
        );
        assert_eq!(
            arity_error("", &words("x y"), None),
            "unexpected arguments: x y"
        );
    }

    #[test]
    fn only_scheme_shaped_words_read_as_uris() {
        assert!(looks_like_uri("file:///x"));
        assert!(looks_like_uri("notion://pages/abc"));
        assert!(looks_like_uri("db:shop"));
        assert!(!looks_like_uri("docs/"));
        assert!(!looks_like_uri("C:"));
        assert!(!looks_like_uri("--flag"));
        assert!(!looks_like_uri("1:2"));
    }
}
