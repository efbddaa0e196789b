//! `rsrc ls | read | stat | templates | complete | watch`: inspect any MCP server's
//! resources, over Streamable HTTP (a `http(s)://` URL) or stdio (a command after `--`).
//!
//! Invariants:
//! - Exit codes: 0 success, 1 the server answered with an error (its code and message are
//!   printed), 2 a usage error or a connection failure (including timeouts).
//! - stdout carries only the requested output (a table, JSON, or the resource's bytes);
//!   progress, warnings and errors go to stderr, and progress only when stderr is a
//!   terminal.
//! - Every listing follows cursors under a page cap, and `ls --tree` under a depth and a
//!   node cap, so no server can make a command run or grow without bound.

mod render;

pub(crate) use render::clean;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use futures_util::StreamExt;
use rsrc::client::{Change, Client, ClientError, ClientOptions, EraPreference};
use rsrc::protocol::jsonrpc::ErrorCode;
use rsrc::protocol::resources::{Body, ReadResourceResult};
use rsrc::protocol::{ProtocolVersion, Resource};

/// The inspection commands.
#[derive(Subcommand, Debug)]
pub(crate) enum InspectCommand {
    /// List a server's resources (or a collection's children) as a table, a tree or JSON.
    #[command(override_usage = "rsrc ls [OPTIONS] <URL>\n       rsrc ls [OPTIONS] -- <COMMAND>...")]
    Ls(LsArgs),
    /// Read a resource: text to stdout, a blob as its bytes.
    #[command(
        override_usage = "rsrc read [OPTIONS] <URL> <URI>\n       rsrc read [OPTIONS] <URI> -- <COMMAND>..."
    )]
    Read(ReadArgs),
    /// Show a resource's metadata (`resources/metadata`, or its listing entry).
    #[command(
        override_usage = "rsrc stat [OPTIONS] <URL> <URI>\n       rsrc stat [OPTIONS] <URI> -- <COMMAND>..."
    )]
    Stat(StatArgs),
    /// List the server's resource templates.
    #[command(
        override_usage = "rsrc templates [OPTIONS] <URL>\n       rsrc templates [OPTIONS] -- <COMMAND>..."
    )]
    Templates(TemplatesArgs),
    /// Ask the server to complete a template variable.
    #[command(
        override_usage = "rsrc complete [OPTIONS] <URL> <URI-TEMPLATE> <VAR> <PREFIX>\n       rsrc complete [OPTIONS] <URI-TEMPLATE> <VAR> <PREFIX> -- <COMMAND>..."
    )]
    Complete(CompleteArgs),
    /// Subscribe to resources and print each change until interrupted.
    #[command(
        override_usage = "rsrc watch [OPTIONS] <URL> <URI>...\n       rsrc watch [OPTIONS] <URI>... -- <COMMAND>..."
    )]
    Watch(WatchArgs),
}

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

#[derive(Args, Debug)]
pub(crate) struct LsArgs {
    #[command(flatten)]
    target: Target,
    /// List the children of this collection instead of the server's default listing.
    #[arg(long, value_name = "URI")]
    uri: Option<String>,
    /// Walk collections and print a tree (where the server can list a collection's
    /// children).
    #[arg(long)]
    tree: bool,
    /// How deep `--tree` descends.
    #[arg(long, default_value_t = 8, requires = "tree")]
    depth: usize,
    /// Keep resources whose name, title, URI or MIME type matches this glob
    /// (case-insensitive; a pattern without `*?[{` matches anywhere); repeatable, any
    /// pattern may match.
    #[arg(long, value_name = "GLOB")]
    filter: Vec<String>,
    /// Print JSON (an array of resources; with `--tree`, nested `children`).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ReadArgs {
    #[command(flatten)]
    target: Target,
    /// Pick the format alternative of this MIME type (`text/plain`, `image/*`).
    #[arg(long, value_name = "MIME")]
    accept: Option<String>,
    /// Write the content to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write binary content to a terminal anyway.
    #[arg(long)]
    force: bool,
    /// Print the whole read result as JSON.
    #[arg(long, conflicts_with_all = ["accept", "output"])]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct StatArgs {
    #[command(flatten)]
    target: Target,
    /// Print the metadata as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct TemplatesArgs {
    #[command(flatten)]
    target: Target,
    /// Print JSON (an array of templates).
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct CompleteArgs {
    #[command(flatten)]
    target: Target,
    /// A variable already chosen, as `NAME=VALUE`; repeatable.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_pair)]
    context: Vec<(String, String)>,
    /// Print the completion as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    target: Target,
    /// Also report changes to the list of resources.
    #[arg(long)]
    list_changes: bool,
    /// Print one JSON object per change.
    #[arg(long)]
    json: bool,
    /// Stop after this many changes (exit 0).
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}

fn parse_era(s: &str) -> Result<EraPreference, String> {
    if s == "auto" {
        return Ok(EraPreference::Auto);
    }
    match s.parse::<ProtocolVersion>() {
        Ok(v) if v.is_modern() => Ok(EraPreference::Modern),
        Ok(v) => Ok(EraPreference::Legacy(v)),
        Err(_) => Err("expected auto, 2026-07-28, 2025-11-25 or 2025-06-18".into()),
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| "expected `Name: value`".to_owned())?;
    let name = name.trim();
    if name.is_empty() {
        return Err("the header name is empty".into());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| "expected NAME=VALUE".to_owned())
}

/// Why a command failed, and so its exit code.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Exit 1: the server answered with an error.
    Server(String),
    /// Exit 2: bad usage, or the server could not be reached or stopped answering.
    Usage(String),
}

impl Failure {
    /// The process exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Failure::Server(_) => 1,
            Failure::Usage(_) => 2,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Server(m) | Failure::Usage(m) => f.write_str(m),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        match e.rpc() {
            Some(err) => {
                let mut m = format!("server error {}: {}", err.code.0, err.message);
                if let Some(data) = &err.data {
                    m.push_str(&format!(" ({data})"));
                }
                Failure::Server(m)
            }
            None => Failure::Usage(e.to_string()),
        }
    }
}

fn io_failure(what: &str, e: &std::io::Error) -> Failure {
    Failure::Usage(format!("{what}: {e}"))
}

/// Runs an inspection command to completion on a single-threaded runtime.
pub(crate) fn run(command: InspectCommand) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_failure("cannot start the runtime", &e))?;
    runtime.block_on(async move {
        match command {
            InspectCommand::Ls(a) => ls(a).await,
            InspectCommand::Read(a) => read(a).await,
            InspectCommand::Stat(a) => stat(a).await,
            InspectCommand::Templates(a) => templates(a).await,
            InspectCommand::Complete(a) => complete(a).await,
            InspectCommand::Watch(a) => watch(a).await,
        }
    })
}

/// A connected server and the command's own positional arguments.
struct Session {
    client: Client,
    // Keeps a stdio server alive for as long as the client; killed when dropped.
    _child: Option<tokio::process::Child>,
    args: Vec<String>,
    max_pages: usize,
}

impl Target {
    /// Connects to the server this target names. `arity` is how many positional arguments
    /// the command takes (`None`: at least one).
    async fn connect(self, arity: Option<usize>, names: &str) -> Result<Session, Failure> {
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
            return Err(Failure::Usage(if names.is_empty() {
                format!("unexpected arguments: {}", args.join(" "))
            } else {
                format!("expected {names} after the server")
            }));
        }
        let options = ClientOptions {
            request_timeout: self.timeout,
            probe_timeout: self.timeout.min(Duration::from_secs(5)),
            era: self.era,
            http_headers: self.headers,
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
                let (client, child) = Client::spawn(&mut command, options).await.map_err(|e| {
                    Failure::Usage(format!(
                        "cannot start or talk to `{}`: {e}",
                        self.command[0]
                    ))
                })?;
                (client, Some(child))
            }
        };
        Ok(Session {
            client,
            _child: child,
            args,
            max_pages: self.max_pages as usize,
        })
    }
}

fn stdout_write(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe (`rsrc ls … | head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| io_failure("cannot write to stdout", &e)),
    }
}

fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<(), Failure> {
    let mut text = render::json_safe(
        serde_json::to_string_pretty(value)
            .map_err(|e| Failure::Usage(format!("cannot encode JSON: {e}")))?,
    );
    text.push('\n');
    stdout_write(text.as_bytes())
}

/// A message on stderr; it may quote the server, so it is cleaned first.
fn warn(message: &str) {
    eprintln!("rsrc: {}", render::clean(message));
}

/// `--filter`: case-insensitive globs over name, title, URI and MIME type.
struct Filter(Option<globset::GlobSet>);

impl Filter {
    fn new(patterns: &[String]) -> Result<Filter, Failure> {
        if patterns.is_empty() {
            return Ok(Filter(None));
        }
        let mut set = globset::GlobSetBuilder::new();
        for p in patterns {
            let p = if p.contains(['*', '?', '[', '{']) {
                p.clone()
            } else {
                format!("*{p}*")
            };
            let glob = globset::GlobBuilder::new(&p)
                .case_insensitive(true)
                .literal_separator(false)
                .build()
                .map_err(|e| Failure::Usage(format!("bad --filter {p:?}: {e}")))?;
            set.add(glob);
        }
        set.build()
            .map(|s| Filter(Some(s)))
            .map_err(|e| Failure::Usage(format!("bad --filter: {e}")))
    }

    fn matches(&self, r: &Resource) -> bool {
        let Some(set) = &self.0 else { return true };
        [
            Some(r.name.as_str()),
            r.title.as_deref(),
            Some(r.uri.as_str()),
            r.mime_type.as_deref(),
        ]
        .into_iter()
        .flatten()
        .any(|s| set.is_match(s))
    }

    fn active(&self) -> bool {
        self.0.is_some()
    }
}

/// The most resources `ls --tree` visits.
const TREE_MAX_NODES: usize = 100_000;

async fn ls(a: LsArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(0), "").await?;
    let filter = Filter::new(&a.filter)?;
    if a.tree {
        return ls_tree(&s, a.uri, a.depth, &filter, a.json).await;
    }
    let mut items = Vec::new();
    let mut stream = std::pin::pin!(s.client.resources(a.uri.clone(), s.max_pages));
    while let Some(item) = stream.next().await {
        match item {
            Ok(r) => {
                if filter.matches(&r) {
                    items.push(r);
                }
            }
            // A listing cut short by the page cap is still printed, with a warning.
            Err(e @ ClientError::Protocol(_)) if !items.is_empty() => {
                warn(&format!("the listing is incomplete: {e}"));
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if a.json {
        print_json(&items)
    } else {
        stdout_write(render::resources_table(&items).as_bytes())
    }
}

/// Walks collections breadth-first from the default listing (or `root`), listing each
/// collection's children where the server says it can.
async fn ls_tree(
    s: &Session,
    root: Option<String>,
    depth: usize,
    filter: &Filter,
    json: bool,
) -> Result<(), Failure> {
    let mut visited = 0usize;
    // Whether the server understood `resources/list` with a `uri`; decided on first use.
    let mut children_listable = true;
    let top = list_all(s, root.as_deref()).await?;
    visited += top.len();
    // A recursive default listing names resources inside collections: put each under its
    // collection, then list the collections.
    let mut nodes = nest_by_uri(top);
    // Children of `--uri`: start below the groups that spell the collection's own URI.
    if let Some(root) = root.as_deref() {
        while nodes.len() == 1 && nodes[0].group && root.starts_with(&nodes[0].resource.uri) {
            nodes = std::mem::take(&mut nodes[0].children);
        }
    }
    let mut queue = std::collections::VecDeque::new();
    unexpanded_collections(&nodes, &mut Vec::new(), &mut queue);
    while let Some((path, level)) = queue.pop_front() {
        let node = node_at(&mut nodes, &path);
        if level > depth {
            node.unlisted = Some("depth limit".into());
            continue;
        }
        if !children_listable {
            node.unlisted = Some("the server cannot list children".into());
            continue;
        }
        if node
            .resource
            .capabilities
            .as_ref()
            .and_then(|c| c.list)
            .is_some_and(|l| !l)
        {
            node.unlisted = Some("not listable".into());
            continue;
        }
        if visited >= TREE_MAX_NODES {
            node.unlisted = Some(format!("stopped after {TREE_MAX_NODES} resources"));
            continue;
        }
        let uri = node.resource.uri.clone();
        match list_all(s, Some(&uri)).await {
            // A server without SEP-2093 may ignore `uri` and answer its whole listing,
            // which then contains the collection itself.
            Ok(children) if children.iter().any(|c| c.uri == uri) => {
                children_listable = false;
                node_at(&mut nodes, &path).unlisted =
                    Some("the server cannot list children".into());
            }
            Ok(children) => {
                visited += children.len();
                let node = node_at(&mut nodes, &path);
                node.children = children.into_iter().map(render::Node::leaf).collect();
                for (i, c) in node.children.iter().enumerate() {
                    if c.resource.is_collection() {
                        let mut p = path.clone();
                        p.push(i);
                        queue.push_back((p, level + 1));
                    }
                }
            }
            Err(ClientError::Rpc(e))
                if e.code == ErrorCode::METHOD_NOT_FOUND || e.code == ErrorCode::INVALID_PARAMS =>
            {
                children_listable = false;
                node_at(&mut nodes, &path).unlisted =
                    Some("the server cannot list children".into());
            }
            Err(ClientError::Rpc(e)) => {
                node_at(&mut nodes, &path).unlisted = Some(format!("{} ({})", e.message, e.code.0));
            }
            Err(e) => return Err(e.into()),
        }
    }
    if filter.active() {
        nodes = render::Node::prune(nodes, &|r| filter.matches(r));
    }
    if json {
        print_json(&nodes.iter().map(render::Node::to_json).collect::<Vec<_>>())
    } else {
        stdout_write(render::tree(&nodes).as_bytes())
    }
}

fn node_at<'a>(nodes: &'a mut [render::Node], path: &[usize]) -> &'a mut render::Node {
    let (first, rest) = path.split_first().expect("paths are never empty");
    let mut node = &mut nodes[*first];
    for &i in rest {
        node = &mut node.children[i];
    }
    node
}

/// Queues the path (indices from the roots) and depth of every collection, outermost
/// first: each is listed, and its listing replaces what the default listing nested
/// under it (which may be partial, such as a table's schema document without its rows).
fn unexpanded_collections(
    nodes: &[render::Node],
    path: &mut Vec<usize>,
    queue: &mut std::collections::VecDeque<(Vec<usize>, usize)>,
) {
    for (i, n) in nodes.iter().enumerate() {
        path.push(i);
        if n.resource.is_collection() && !n.group {
            queue.push_back((path.clone(), path.len()));
        } else {
            unexpanded_collections(&n.children, path, queue);
        }
        path.pop();
    }
}

/// Arranges a listing by the path segments of its URIs: each resource goes under the
/// resource (or, when the listing has none, a group named after the segment) whose URI is
/// its prefix, so a recursive listing reads as a tree. One shared `scheme://authority`
/// is not shown as a level.
fn nest_by_uri(resources: Vec<Resource>) -> Vec<render::Node> {
    #[derive(Default)]
    struct Trie {
        resource: Option<Resource>,
        children: BTreeMap<String, Trie>,
    }
    fn key(uri: &str) -> Vec<&str> {
        let (origin, path) = match uri.find("://") {
            Some(i) => {
                let rest = &uri[i + 3..];
                let end = rest.find('/').unwrap_or(rest.len());
                (&uri[..i + 3 + end], &rest[end..])
            }
            None => match uri.split_once(':') {
                Some((scheme, path)) => (&uri[..scheme.len() + 1], path),
                None => ("", uri),
            },
        };
        std::iter::once(origin)
            .chain(path.split('/').filter(|s| !s.is_empty()))
            .collect()
    }
    fn into_nodes(trie: Trie, prefix: &str) -> Vec<render::Node> {
        trie.children
            .into_iter()
            .map(|(segment, t)| {
                let uri = if prefix.is_empty() {
                    segment.clone()
                } else if prefix.ends_with(':') {
                    format!("{prefix}{segment}")
                } else {
                    format!("{prefix}/{segment}")
                };
                let group = t.resource.is_none();
                let resource = t
                    .resource
                    .clone()
                    .unwrap_or_else(|| Resource::new(uri.clone(), segment.clone()));
                let uri = resource.uri.trim_end_matches('/').to_owned();
                let mut node = render::Node::leaf(resource);
                node.group = group;
                node.children = into_nodes(t, &uri);
                node
            })
            .collect()
    }
    let mut root = Trie::default();
    for r in resources {
        let mut at = &mut root;
        for segment in key(&r.uri) {
            at = at.children.entry(segment.to_owned()).or_default();
        }
        match &at.resource {
            // The same URI twice: keep both, the second as a sibling.
            Some(_) => {
                let twin = format!("{}#{}", r.name, at.children.len());
                at.children.entry(twin).or_default().resource = Some(r);
            }
            None => at.resource = Some(r),
        }
    }
    // One origin for everything: start below it.
    if root.children.len() == 1
        && root.children.values().all(|only| only.resource.is_none())
        && let Some((origin, only)) = root.children.pop_first()
    {
        return into_nodes(only, &origin);
    }
    into_nodes(root, "")
}

async fn list_all(s: &Session, uri: Option<&str>) -> Result<Vec<Resource>, ClientError> {
    let mut out = Vec::new();
    let mut stream = std::pin::pin!(s.client.resources(uri.map(str::to_owned), s.max_pages));
    while let Some(item) = stream.next().await {
        match item {
            Ok(r) => out.push(r),
            Err(e @ ClientError::Protocol(_)) if !out.is_empty() => {
                warn(&format!(
                    "the listing of {} is incomplete: {e}",
                    uri.unwrap_or("the server")
                ));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Reads larger than this show a progress bar while being written.
const PROGRESS_BYTES: usize = 1024 * 1024;

async fn read(a: ReadArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(1), "<URI>").await?;
    let uri = &s.args[0];
    let spinner = progress_spinner(&format!("reading {uri}"));
    let result = s.client.read(uri).await;
    spinner.finish_and_clear();
    let result = result?;
    if a.json {
        return print_json(&result);
    }
    let body = pick(&result, uri, a.accept.as_deref())?;
    let bytes: &[u8] = match body {
        Picked::Body(Body::Text(t)) => t.as_bytes(),
        Picked::Body(Body::Blob(b)) => b,
        Picked::Collection(children) => {
            return stdout_write(render::resources_table(&children).as_bytes());
        }
    };
    let binary = matches!(body, Picked::Body(Body::Blob(_)));
    match &a.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| io_failure(&format!("cannot create {}", path.display()), &e))?;
            write_with_progress(file, bytes)
                .map_err(|e| io_failure(&format!("cannot write {}", path.display()), &e))
        }
        None => {
            if binary && !a.force && std::io::stdout().is_terminal() {
                return Err(Failure::Usage(format!(
                    "{uri} is binary ({} bytes); write it with -o FILE, or pass --force",
                    bytes.len()
                )));
            }
            // Text shown on a terminal is shown, not obeyed: its escape sequences are
            // written as escapes (with --force, or to a pipe or file, it is byte for byte).
            let shown;
            let bytes = if !binary && !a.force && std::io::stdout().is_terminal() {
                shown = render::clean_text(std::str::from_utf8(bytes).unwrap_or_default());
                shown.as_bytes()
            } else {
                bytes
            };
            match write_with_progress(std::io::stdout().lock(), bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.map_err(|e| io_failure("cannot write to stdout", &e)),
            }
        }
    }
}

enum Picked<'a> {
    Body(&'a Body),
    /// A collection's read: its children.
    Collection(Vec<Resource>),
}

/// The entry to print: with `accept`, the alternative of that MIME type (a `type/*`
/// pattern allowed); otherwise the first entry for the requested URI. A read that
/// returned other URIs' contents (a collection) is shown as the list of them.
fn pick<'a>(
    result: &'a ReadResourceResult,
    uri: &str,
    accept: Option<&str>,
) -> Result<Picked<'a>, Failure> {
    let own: Vec<_> = result.contents.iter().filter(|c| c.uri() == uri).collect();
    if own.is_empty() || (accept.is_none() && result.contents.len() > own.len()) {
        if let Some(accept) = accept {
            return Err(Failure::Usage(format!(
                "{uri} is a collection; --accept {accept} picks among one document's formats"
            )));
        }
        return Ok(Picked::Collection(
            result.contents.iter().map(|c| c.resource.clone()).collect(),
        ));
    }
    let Some(accept) = accept else {
        return Ok(Picked::Body(&own[0].body));
    };
    let wanted = accept.to_ascii_lowercase();
    let matches = |mime: &str| {
        let mime = mime
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match wanted.strip_suffix("/*") {
            Some(top) => mime.split('/').next() == Some(top),
            None => mime == wanted,
        }
    };
    own.iter()
        .find(|c| c.resource.mime_type.as_deref().is_some_and(matches))
        .map(|c| Picked::Body(&c.body))
        .ok_or_else(|| {
            let offered: Vec<&str> = own
                .iter()
                .map(|c| c.resource.mime_type.as_deref().unwrap_or("(no type)"))
                .collect();
            Failure::Usage(format!(
                "{uri} has no {accept} alternative; it offers {}",
                offered.join(", ")
            ))
        })
}

fn progress_spinner(message: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner().with_message(message.to_owned());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Writes `bytes` in chunks, with a progress bar on a terminal's stderr for large ones.
fn write_with_progress(mut out: impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let bar = if bytes.len() >= PROGRESS_BYTES && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(bytes.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} ({bytes_per_sec})",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    for chunk in bytes.chunks(256 * 1024) {
        out.write_all(chunk)?;
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    out.flush()
}

async fn stat(a: StatArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(1), "<URI>").await?;
    let uri = s.args[0].clone();
    let resource = match s.client.metadata(&uri).await {
        Ok(r) => r,
        Err(e) if e.is_method_not_found() => {
            warn("the server has no resources/metadata; looking the URI up in its listing");
            find_in_listing(&s, &uri).await?
        }
        Err(e) => return Err(e.into()),
    };
    if a.json {
        print_json(&resource)
    } else {
        stdout_write(render::resource_details(&resource).as_bytes())
    }
}

async fn find_in_listing(s: &Session, uri: &str) -> Result<Resource, Failure> {
    let mut stream = std::pin::pin!(s.client.resources(None, s.max_pages));
    while let Some(item) = stream.next().await {
        let r = item?;
        if r.uri == uri {
            return Ok(r);
        }
    }
    Err(Failure::Server(format!(
        "{uri} is not in the server's listing"
    )))
}

async fn templates(a: TemplatesArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(0), "").await?;
    let mut items = Vec::new();
    let mut stream = std::pin::pin!(s.client.templates(s.max_pages));
    while let Some(item) = stream.next().await {
        items.push(item?);
    }
    if a.json {
        print_json(&items)
    } else {
        stdout_write(render::templates_table(&items).as_bytes())
    }
}

async fn complete(a: CompleteArgs) -> Result<(), Failure> {
    let s = a
        .target
        .connect(Some(3), "<URI-TEMPLATE> <VAR> <PREFIX>")
        .await?;
    let context: BTreeMap<String, String> = a.context.into_iter().collect();
    let completion = s
        .client
        .complete(&s.args[0], &s.args[1], &s.args[2], context)
        .await?;
    if a.json {
        return print_json(&completion);
    }
    let (values, more) = render::completion(&completion);
    stdout_write(values.as_bytes())?;
    if let Some(more) = more {
        warn(&more);
    }
    Ok(())
}

async fn watch(a: WatchArgs) -> Result<(), Failure> {
    let s = a.target.connect(None, "<URI>...").await?;
    let mut watch = s.client.watch(&s.args, a.list_changes).await?;
    let refused: Vec<&String> = s
        .args
        .iter()
        .filter(|u| !watch.accepted().contains(u))
        .collect();
    if !refused.is_empty() {
        let list: Vec<&str> = refused.iter().map(|s| s.as_str()).collect();
        warn(&format!(
            "the server will not report on {}",
            list.join(", ")
        ));
        if refused.len() == s.args.len() && !a.list_changes {
            return Err(Failure::Server(
                "the server accepted no subscription".into(),
            ));
        }
    }
    if std::io::stderr().is_terminal() {
        eprintln!(
            "watching {} resource(s); Ctrl-C stops",
            watch.accepted().len()
        );
    }
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut seen = 0u64;
    loop {
        if a.count.is_some_and(|n| seen >= n) {
            return Ok(());
        }
        tokio::select! {
            _ = &mut interrupted => return Ok(()),
            change = watch.next() => {
                let Some(change) = change else {
                    return Err(Failure::Usage("the server closed the connection".into()));
                };
                let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
                let line = match (&change, a.json) {
                    (Change::Updated(uri), true) => render::json_safe(
                        serde_json::json!({"time": now.to_string(), "change": "updated", "uri": uri}).to_string(),
                    ),
                    (Change::ListChanged, true) => {
                        serde_json::json!({"time": now.to_string(), "change": "list_changed"}).to_string()
                    }
                    (Change::Updated(uri), false) => {
                        format!("{now}  updated       {}", render::clean(uri))
                    }
                    (Change::ListChanged, false) => format!("{now}  list changed"),
                    _ => continue,
                };
                stdout_write(format!("{line}\n").as_bytes())?;
                seen += 1;
            }
        }
    }
}
