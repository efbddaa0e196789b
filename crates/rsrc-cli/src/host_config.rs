//! `rsrc config HOST [SOURCES]…`: the snippet a host needs to launch `rsrc serve` over
//! stdio, for Claude Desktop, Claude Code, VS Code and Cursor: as this program (`--via
//! binary`, the default), as the Python package run by `uvx` (`--via uvx`), as the npm
//! package run by `npx` (`--via npx`), or as its container image (`--via docker`).
//!
//! Invariants:
//! - Whatever the snippet names on the host's side is absolute, because a host launches
//!   the server from a working directory of its own, and often with a `PATH` shorter
//!   than a shell's: with `--via binary` this program and every directory, database and
//!   repository; with `--via uvx` and `--via npx` the launcher, found on this `PATH`
//!   now, and every source; with `--via docker` every path on the host's side of a
//!   mount. The one exception is the container program itself (`docker`, or `--docker
//!   PROGRAM`), which the host finds on its `PATH`, as a shell would.
//! - `--via uvx` and `--via npx` run this program's own version of the package unless
//!   `--package` names another (a version, a wheel, a tarball).
//! - With `--via docker`, the container sees every source read-only and nothing else of
//!   the host: a directory, a repository or a directory of skills is mounted (`:ro`) at
//!   `/data/NAME`, and a SQLite file through its directory (so that its `-wal` and
//!   `-shm` files, and a file replaced by a rename, are seen as on the host); the
//!   arguments of `serve` name those paths, in the form they were written in
//!   (`NAME=…`, `sqlite:`, `git:`, `skills:`), so a source keeps its name and its
//!   resources their URIs. A PostgreSQL URL passes through unchanged, and is the only
//!   source that gives the container a network. The root filesystem is read-only and the
//!   container has no capability: the server can change nothing, in the container or
//!   in what it serves.
//! - Each way of launching is one [`Via`] arm and one function that builds its
//!   [`Launch`]; the hosts' snippets are written from a [`Launch`] alone.
//! - The snippet goes to stdout (to paste or redirect); where it goes in the host is
//!   said on stderr.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::serve::{Location, absolute_source, parse_source};

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

/// How the host starts the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Via {
    /// This program, by its absolute path.
    Binary,
    /// The Python package, with uv's `uvx` (`uvx --from rsrc==VERSION rsrc serve …`).
    Uvx,
    /// The npm package, with `npx` (`npx -y rsrc@VERSION serve …`).
    Npx,
    /// The container image (built by `scripts/image`), with `docker run` (or
    /// `--docker podman`): every source mounted read-only under `/data`.
    Docker,
}

/// The image `--via docker` runs unless told otherwise: the tag `scripts/image` gives
/// the image of this version. `localhost/` keeps docker from looking for it on a
/// registry.
const DEFAULT_IMAGE: &str = concat!("localhost/rsrc:", env!("CARGO_PKG_VERSION"));

/// Where the container sees the sources.
const DATA: &str = "/data";

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
    /// How the host starts the server: this program, or its container image (each
    /// source mounted read-only).
    #[arg(long, value_enum, default_value_t = Via::Binary)]
    via: Via,
    /// With --via docker: the image to run [default: localhost/rsrc:VERSION, this
    /// program's version, as `scripts/image` tags it].
    #[arg(long, value_name = "IMAGE")]
    image: Option<String>,
    /// With --via docker: the program that runs containers, found on the host's PATH
    /// (e.g. podman) [default: docker].
    #[arg(long, value_name = "PROGRAM")]
    docker: Option<String>,
    /// With --via uvx or npx: the package to run [default: this version, rsrc==VERSION
    /// for uvx, rsrc@VERSION for npx]; e.g. a wheel's or a tarball's path.
    #[arg(long, value_name = "SPEC")]
    package: Option<String>,
}

/// What the host runs: a program and its arguments, and what the person pasting the
/// snippet should know about it.
#[derive(Debug)]
struct Launch {
    command: String,
    args: Vec<String>,
    /// Said on stderr after where the snippet goes.
    note: Option<String>,
}

/// The snippet, and where it goes.
pub(crate) fn run(args: &ConfigArgs) -> Result<(String, String), String> {
    if args.via != Via::Docker {
        for (given, flag) in [(&args.image, "--image"), (&args.docker, "--docker")] {
            if given.is_some() {
                return Err(format!("{flag} goes with --via docker"));
            }
        }
    }
    if args.package.is_some() && !matches!(args.via, Via::Uvx | Via::Npx) {
        return Err("--package goes with --via uvx or --via npx".to_owned());
    }
    let launch = match args.via {
        Via::Binary => binary(args)?,
        Via::Uvx => package_runner(args, "uvx")?,
        Via::Npx => package_runner(args, "npx")?,
        Via::Docker => docker(args)?,
    };
    let (snippet, where_to) = snippet(args, &launch)?;
    Ok(match launch.note {
        Some(note) => (snippet, format!("{where_to}\nrsrc: {note}")),
        None => (snippet, where_to.to_owned()),
    })
}

/// `serve`, the tools unless `--no-tools`, and `sources`.
fn serve_args(args: &ConfigArgs, sources: Vec<String>) -> Vec<String> {
    let mut serve = vec!["serve".to_owned()];
    if !args.no_tools {
        serve.push("--tools".to_owned());
    }
    serve.extend(sources);
    serve
}

/// `--via binary`: this program, every source made absolute.
fn binary(args: &ConfigArgs) -> Result<Launch, String> {
    let command = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("the path of this program is unknown: {e}"))?
        .into_os_string()
        .into_string()
        .map_err(|_| "the path of this program is not UTF-8".to_owned())?;
    let sources = args
        .sources
        .iter()
        .map(|s| absolute_source(s))
        .collect::<Result<_, _>>()?;
    Ok(Launch {
        command,
        args: serve_args(args, sources),
        note: None,
    })
}

/// `--via uvx` and `--via npx`: the launcher by its absolute path, the package pinned to
/// this version (or `--package`), every source made absolute.
fn package_runner(args: &ConfigArgs, launcher: &str) -> Result<Launch, String> {
    let version = env!("CARGO_PKG_VERSION");
    let command = on_path(launcher).ok_or_else(|| match launcher {
        "uvx" => "uvx is not on PATH: install uv (`pipx install uv`, or see https://docs.astral.sh/uv/), or use --via binary".to_owned(),
        _ => "npx is not on PATH: install Node.js (which has npm and npx), or use --via binary".to_owned(),
    })?;
    let sources: Vec<String> = args
        .sources
        .iter()
        .map(|s| absolute_source(s))
        .collect::<Result<_, _>>()?;
    // A package given by its path is named absolutely, like every source.
    let package = match &args.package {
        Some(spec) if Path::new(spec).exists() => Some(
            std::fs::canonicalize(spec)
                .ok()
                .and_then(|p| p.into_os_string().into_string().ok())
                .ok_or_else(|| format!("--package {spec}: cannot name it absolutely"))?,
        ),
        other => other.clone(),
    };
    let mut run = match launcher {
        "uvx" => {
            let spec = package.unwrap_or(format!("rsrc=={version}"));
            vec!["--from".to_owned(), spec, "rsrc".to_owned()]
        }
        _ => {
            let spec = package.unwrap_or(format!("rsrc@{version}"));
            vec!["-y".to_owned(), spec]
        }
    };
    run.extend(serve_args(args, sources));
    Ok(Launch {
        command,
        args: run,
        note: Some(format!(
            "{launcher} fetches the package the first time the host starts it (the packages are built by scripts/dist and not yet published: until they are, give --package the path of one)"
        )),
    })
}

/// The absolute path of `program` on this process's `PATH`, if it is there and can be
/// run.
fn on_path(program: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .and_then(|p| p.into_os_string().into_string().ok())
}

/// `--via docker`: `docker run` of the image, every source mounted read-only.
fn docker(args: &ConfigArgs) -> Result<Launch, String> {
    let mut mounts = Mounts::default();
    let mut sources = Vec::new();
    let mut network = false;
    for arg in &args.sources {
        let source = parse_source(arg)?;
        let name = source.name.as_deref();
        let in_container = match &source.at {
            Location::Postgres(url) => {
                network = true;
                url.clone()
            }
            Location::Directory(dir) => mounts.directory(arg, dir, name)?,
            Location::Git(dir) => format!("git:{}", mounts.directory(arg, dir, name)?),
            Location::Skills(dir) => format!("skills:{}", mounts.directory(arg, dir, name)?),
            Location::Sqlite(file) => format!("sqlite:{}", mounts.file(arg, file, name)?),
        };
        sources.push(match name {
            Some(name) => format!("{name}={in_container}"),
            None => in_container,
        });
    }
    let image = args.image.as_deref().unwrap_or(DEFAULT_IMAGE);
    let mut run: Vec<String> = [
        "run",
        "-i",
        "--rm",
        "--read-only",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
    ]
    .map(str::to_owned)
    .into();
    if !network {
        // Files, databases and repositories on disk need no network; a PostgreSQL
        // server does (and the container's `localhost` is not the host's).
        run.extend(["--network".to_owned(), "none".to_owned()]);
    }
    for (host, name) in &mounts.0 {
        run.push("-v".to_owned());
        run.push(format!("{host}:{DATA}/{name}:ro"));
    }
    run.push(image.to_owned());
    run.extend(serve_args(args, sources));
    let mut note = format!(
        "the host runs the image {image}, which must be there (scripts/image builds it); the container runs as uid 65532, which must be able to read what is mounted"
    );
    if network {
        note.push_str("; inside the container, localhost is the container itself");
    }
    Ok(Launch {
        command: args.docker.clone().unwrap_or_else(|| "docker".to_owned()),
        args: run,
        note: Some(note),
    })
}

/// The host's directories to mount, each with its name under [`DATA`], in order.
#[derive(Debug, Default)]
struct Mounts(Vec<(String, String)>);

impl Mounts {
    /// The container's path for the directory `dir` of source `arg`: `/data/NAME`,
    /// where NAME is the source's `name` if it has one, else the directory's own (so an
    /// unnamed directory keeps the name the server gives it), made unique. A directory
    /// already mounted is mounted once.
    fn directory(&mut self, arg: &str, dir: &Path, name: Option<&str>) -> Result<String, String> {
        let host = host_path(arg, dir)?;
        if !host.is_dir() {
            return Err(format!("{arg}: not a directory"));
        }
        self.mount(arg, &host, name)
    }

    /// The container's path for the SQLite file `file` of source `arg`: the file in its
    /// mounted directory (see [`Mounts::directory`]).
    fn file(&mut self, arg: &str, file: &Path, name: Option<&str>) -> Result<String, String> {
        let host = host_path(arg, file)?;
        if !host.is_file() {
            return Err(format!("{arg}: not a file"));
        }
        let (Some(dir), Some(file_name)) = (host.parent(), host.file_name()) else {
            return Err(format!("{arg}: not a file"));
        };
        let file_name = file_name
            .to_str()
            .ok_or_else(|| format!("{arg}: the path is not UTF-8"))?;
        Ok(format!("{}/{file_name}", self.mount(arg, dir, name)?))
    }

    fn mount(&mut self, arg: &str, host: &Path, name: Option<&str>) -> Result<String, String> {
        let shown = host
            .to_str()
            .ok_or_else(|| format!("{arg}: the path is not UTF-8"))?
            .to_owned();
        if shown.contains(':') {
            return Err(format!(
                "{arg}: {shown} holds a ':', which `-v HOST:CONTAINER:ro` cannot mount"
            ));
        }
        if let Some((_, taken)) = self.0.iter().find(|(h, _)| *h == shown) {
            return Ok(format!("{DATA}/{taken}"));
        }
        let own = host.file_name().and_then(|n| n.to_str()).unwrap_or("root");
        let wanted = mount_name(name.unwrap_or(own));
        let mut unique = wanted.clone();
        for n in 2.. {
            if !self.0.iter().any(|(_, taken)| *taken == unique) {
                break;
            }
            unique = format!("{wanted}-{n}");
        }
        self.0.push((shown, unique.clone()));
        Ok(format!("{DATA}/{unique}"))
    }
}

/// `path` of source `arg`, absolute with its symbolic links resolved: it must exist,
/// since docker would make a missing one, empty and owned by root.
fn host_path(arg: &str, path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|e| format!("{arg}: {e}"))
}

/// `name` as one path segment: letters, digits, `.`, `_` and `-` kept, anything else
/// `_`; never empty, `.` or `..`.
fn mount_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.chars().all(|c| c == '.') {
        "data".to_owned()
    } else {
        clean
    }
}

/// The host's snippet for `launch`, and where it goes.
fn snippet(args: &ConfigArgs, launch: &Launch) -> Result<(String, &'static str), String> {
    let entry = json!({"command": launch.command, "args": launch.args});
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
                launch.command.as_str(),
            ]
            .into_iter()
            .chain(launch.args.iter().map(String::as_str));
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

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::Value;

    use super::{ConfigArgs, DEFAULT_IMAGE, run};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ConfigArgs,
    }

    fn config(args: &[&str]) -> Result<(String, String), String> {
        let cli = Cli::try_parse_from(std::iter::once("config").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        run(&cli.args)
    }

    /// A canonical directory holding `docs/a.md`, `notes/`, `other/docs/` and
    /// `db/shop.db`.
    fn workspace() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for sub in ["docs", "notes", "other/docs", "db"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("docs/a.md"), "# A\n").unwrap();
        std::fs::write(root.join("db/shop.db"), "").unwrap();
        let root = root.to_str().unwrap().to_owned();
        (dir, root)
    }

    /// The arguments of the `rsrc` entry of a snippet, under `servers` (the host's key).
    fn args_of(snippet: &str, servers: &str) -> Vec<String> {
        let parsed: Value = serde_json::from_str(snippet).unwrap();
        serde_json::from_value(parsed[servers]["rsrc"]["args"].clone()).unwrap()
    }

    /// The `-v` values of a `docker run` argument list, and what follows the image.
    fn mounts_and_serve(args: &[String]) -> (Vec<String>, Vec<String>) {
        let mut mounts = Vec::new();
        let mut i = 0;
        while i < args.len() {
            if args[i] == "-v" {
                mounts.push(args[i + 1].clone());
                i += 2;
            } else if args[i] == "serve" {
                break;
            } else {
                i += 1;
            }
        }
        (mounts, args[i..].to_vec())
    }

    #[test]
    fn docker_entries_parse_for_every_json_host() {
        let (_dir, root) = workspace();
        for (host, key) in [
            ("claude-desktop", "mcpServers"),
            ("cursor", "mcpServers"),
            ("vscode", "servers"),
        ] {
            let (snippet, where_to) =
                config(&[host, "--via", "docker", &format!("{root}/docs")]).unwrap();
            let parsed: Value = serde_json::from_str(&snippet).unwrap();
            let entry = &parsed[key]["rsrc"];
            assert_eq!(entry["command"], "docker", "{host}");
            let args: Vec<&str> = entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(
                args[..3],
                ["run", "-i", "--rm"],
                "{host}: a container per launch, on stdin"
            );
            assert!(args.contains(&"--read-only"), "{host}");
            assert!(args.contains(&DEFAULT_IMAGE), "{host}");
            assert_eq!(entry["type"] == "stdio", host == "vscode", "{host}");
            assert!(where_to.contains(DEFAULT_IMAGE), "{where_to}");
        }
    }

    #[test]
    fn every_directory_is_mounted_read_only_and_served_where_it_is_mounted() {
        let (_dir, root) = workspace();
        let (snippet, _) = config(&[
            "claude-desktop",
            "--via",
            "docker",
            &format!("{root}/docs"),
            &format!("n={root}/notes"),
            &format!("{root}/other/docs"),
            &format!("git:{root}/notes"),
            &format!("team=skills:{root}/docs"),
        ])
        .unwrap();
        let args = args_of(&snippet, "mcpServers");
        let (mounts, serve) = mounts_and_serve(&args);
        assert_eq!(
            mounts,
            [
                format!("{root}/docs:/data/docs:ro"),
                format!("{root}/notes:/data/n:ro"),
                format!("{root}/other/docs:/data/docs-2:ro"),
            ],
            "each directory once, read-only, unique inside the container"
        );
        assert_eq!(
            serve,
            [
                "serve",
                "--tools",
                "/data/docs",
                "n=/data/n",
                "/data/docs-2",
                "git:/data/n",
                "team=skills:/data/docs",
            ],
            "each source is served where its directory is mounted, in its own form"
        );
        assert!(
            args.contains(&"--network".to_owned()),
            "no network for files"
        );
    }

    #[test]
    fn a_sqlite_file_is_served_from_its_read_only_directory() {
        let (_dir, root) = workspace();
        let (snippet, _) = config(&[
            "cursor",
            "--via",
            "docker",
            "--no-tools",
            &format!("sqlite:{root}/db/shop.db"),
            &format!("sales=sqlite:{root}/db/shop.db"),
        ])
        .unwrap();
        let args = args_of(&snippet, "mcpServers");
        let (mounts, serve) = mounts_and_serve(&args);
        assert_eq!(mounts, [format!("{root}/db:/data/db:ro")]);
        assert_eq!(
            serve,
            [
                "serve",
                "sqlite:/data/db/shop.db",
                "sales=sqlite:/data/db/shop.db"
            ]
        );
    }

    #[test]
    fn a_postgres_url_passes_through_and_gets_a_network() {
        let (_dir, root) = workspace();
        let url = "postgres://reader@db.internal/shop";
        let (snippet, where_to) = config(&[
            "vscode",
            "--via",
            "docker",
            &format!("{root}/docs"),
            &format!("crm={url}"),
        ])
        .unwrap();
        let args = args_of(&snippet, "servers");
        let (_, serve) = mounts_and_serve(&args);
        assert_eq!(serve[2..], ["/data/docs".to_owned(), format!("crm={url}")]);
        assert!(!args.contains(&"--network".to_owned()), "{args:?}");
        assert!(where_to.contains("localhost"), "{where_to}");
    }

    #[test]
    fn claude_code_gets_a_docker_command_line_with_the_chosen_program_and_image() {
        let (_dir, root) = workspace();
        let (line, _) = config(&[
            "claude-code",
            "--via",
            "docker",
            "--docker",
            "podman",
            "--image",
            "registry.example/rsrc:1",
            &format!("{root}/docs"),
        ])
        .unwrap();
        let words = shlex::split(line.trim()).unwrap();
        assert_eq!(words[..6], ["claude", "mcp", "add", "rsrc", "--", "podman"]);
        let image = words.iter().position(|w| w == "registry.example/rsrc:1");
        let serve = words.iter().position(|w| w == "serve");
        assert!(
            image.is_some() && image.map(|i| i + 1) == serve,
            "{words:?}"
        );
        assert!(words.contains(&format!("{root}/docs:/data/docs:ro")));
    }

    #[test]
    fn docker_refuses_what_it_cannot_mount_and_binary_refuses_docker_flags() {
        let (_dir, root) = workspace();
        let missing = config(&[
            "cursor",
            "--via",
            "docker",
            &format!("git:{root}/no-such-repo"),
        ]);
        assert!(missing.is_err(), "docker would create it, empty");
        std::fs::create_dir(format!("{root}/a:b")).unwrap();
        let colon = config(&["cursor", "--via", "docker", &format!("{root}/a:b")]);
        assert!(colon.unwrap_err().contains("':'"));
        let wrong = config(&["cursor", "--image", "x", &format!("{root}/docs")]);
        assert!(wrong.unwrap_err().contains("--via docker"));
    }

    #[test]
    fn binary_stays_the_default_and_names_this_program() {
        let (_dir, root) = workspace();
        let (snippet, _) = config(&["cursor", &format!("{root}/docs")]).unwrap();
        let parsed: Value = serde_json::from_str(&snippet).unwrap();
        let entry = &parsed["mcpServers"]["rsrc"];
        let program = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(entry["command"], program.to_str().unwrap());
        assert_eq!(
            entry["args"],
            serde_json::json!(["serve", "--tools", format!("{root}/docs")])
        );
    }
}
