//! `rsrc ls`: a server's resources (or a collection's children) as a table, a tree
//! (`--tree`, collections walked with `resources/list` and a `uri`) or JSON.
//!
//! Invariant: every listing follows cursors under the page cap, and the tree walk stops at
//! its depth and at `TREE_MAX_NODES` resources, marking where it stopped, so no server can
//! make the command run or grow without bound. A listing cut short is printed with a
//! warning on stderr, never silently. A collection's children are asked for
//! (`resources/list` with its `uri`) only from a server that declares rsrc's SEP-2093
//! extension; elsewhere `--uri` keeps what the whole listing holds below the URI, and
//! says so, and `--tree` does not descend.
//!
//! `--filter` on a server that declares SEP-2564 filtering of names and URIs (and without
//! `--tree`) asks the server for the resources whose name, or one of whose URI segments,
//! matches ([`rsrc_client::Client::search_resources`]) instead of listing everything;
//! elsewhere (or with `--filter-here`, or a pattern with `{…}` alternatives, which a
//! server would read literally) every resource is listed and matched here, on its title
//! and MIME type too.

use std::collections::BTreeMap;

use clap::Args;
use futures_util::StreamExt;
use rsrc::protocol::Resource;
use rsrc::protocol::jsonrpc::ErrorCode;
use rsrc::protocol::resources::{Feature, ListFilter, RESOURCE_METADATA_EXTENSION};
use rsrc_client::{ClientError, anywhere};

use super::failure::Failure;
use super::output::{print_json, stdout_write, warn};
use super::render;
use super::target::{Session, Target};

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
    /// pattern may match. A server that declares filtering (SEP-2564) is asked for the
    /// names and URI segments that match instead (titles and MIME types are then not
    /// searched).
    #[arg(long, value_name = "GLOB")]
    filter: Vec<String>,
    /// Match `--filter` here on every resource listed, even if the server could filter.
    #[arg(long, requires = "filter")]
    filter_here: bool,
    /// Print JSON (an array of resources; with `--tree`, nested `children`).
    #[arg(long)]
    json: bool,
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
            let p = anywhere(p);
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

pub(super) async fn run(a: LsArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(0), "").await?;
    let filter = Filter::new(&a.filter)?;
    if a.tree {
        return ls_tree(&s, a.uri, a.depth, &filter, a.json).await;
    }
    let names: Vec<String> = a
        .filter
        .iter()
        .flat_map(|p| rsrc_client::spellings(&anywhere(p)))
        .collect();
    let uris: Vec<String> = names
        .iter()
        .flat_map(|g| rsrc_client::in_any_segment(g))
        .collect();
    let by_server = ListFilter {
        name_patterns: Some(names.clone()),
        uri_patterns: Some(uris.clone()),
    };
    let expressible = a.filter.iter().all(|p| rsrc_client::expressible(p));
    let scoped = a.uri.is_none() || s.client.offers(Feature::ScopedList);
    if filter.active() && !a.filter_here && expressible && scoped && s.client.filters(&by_server) {
        let found = s
            .client
            .search_resources(a.uri.as_deref(), &names, &uris, s.max_pages)
            .await?;
        if found.truncated {
            warn(&format!(
                "the listing is incomplete: more than {} pages",
                s.max_pages
            ));
        }
        let items: Vec<Resource> = found
            .items
            .into_iter()
            .filter(|r| filter.matches(r))
            .collect();
        return print_listing(&items, a.json);
    }
    let items: Vec<Resource> = list_all(&s, a.uri.as_deref())
        .await?
        .into_iter()
        .filter(|r| filter.matches(r))
        .collect();
    print_listing(&items, a.json)
}

fn print_listing(items: &[Resource], json: bool) -> Result<(), Failure> {
    if json {
        print_json(items)
    } else {
        stdout_write(render::resources_table(items).as_bytes())
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
    // Whether the server understands `resources/list` with a `uri`: not unless it
    // declares scoped listings; if it does, decided again on first use.
    let mut children_listable = s.client.offers(Feature::ScopedList);
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

/// Every resource of the listing, or of a collection (`uri`): its children from a server
/// that declares scoped listings (rsrc's SEP-2093 extension), elsewhere what the whole
/// listing holds below its URI, announced on stderr. A listing the page cap cut short is
/// kept, with a warning.
async fn list_all(s: &Session, uri: Option<&str>) -> Result<Vec<Resource>, ClientError> {
    if let Some(uri) = uri.filter(|_| !s.client.offers(Feature::ScopedList)) {
        warn(&format!(
            "the server does not declare {RESOURCE_METADATA_EXTENSION} (no scoped \
             resources/list): listing everything and keeping what lies below {uri}"
        ));
        let below = s.client.children(uri, s.max_pages).await?;
        if below.truncated {
            warn(&format!(
                "the listing is incomplete: more than {} pages",
                s.max_pages
            ));
        }
        return Ok(below.items);
    }
    let mut out = Vec::new();
    let mut stream = std::pin::pin!(s.client.resources(uri.map(str::to_owned), s.max_pages));
    while let Some(item) = stream.next().await {
        match item {
            Ok(r) => out.push(r),
            Err(e @ ClientError::Protocol(_)) if !out.is_empty() => {
                let listing = uri.map_or("the listing".into(), |u| format!("the listing of {u}"));
                warn(&format!("{listing} is incomplete: {e}"));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
