//! Agent skills served over MCP (SEP-2640): every subdirectory of a skills directory that
//! holds a `SKILL.md` with YAML frontmatter is a skill, each of its files a resource
//! `skill://<skill-path>/<file>`, each of its directories a directory resource; the
//! extension's `skills/list` and `skills/get` give each skill's entry (its frontmatter and
//! every file with a `sha256:` digest and size), and `resources/directory/read` lists a
//! directory's children.
//!
//! Invariants:
//! - The index is one immutable snapshot, rebuilt off the async threads and swapped whole:
//!   an entry, the listing and the files served always describe the same scan.
//! - Only regular, non-hidden files inside a skill directory are served; symbolic links
//!   are never followed, and files are opened through the root's capability handle, as
//!   the filesystem provider does.
//! - A directory that breaks the naming rules or the limits (512 files, 16 MiB) is not
//!   served at all, with a warning naming the reason: never a partial skill.
//! - A changed file changes its digest in the next snapshot and notifies its subscribers;
//!   a skill or file that appears or goes notifies `list_changed`.

mod manifest;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rsrc::protocol::{
    Body, CacheHint, CacheScope, DIRECTORY_MIME_TYPE, Resource, ResourceContents,
};
use rsrc::{
    ChangeFeed, ListRequest, Listed, Page, Provider, ProviderCapabilities, ReadOutput,
    RequestContext, ResourceError, ServerBuilder,
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::fs::path::RelPath;
use crate::fs::read::{open_checked, open_resolved, read_open, text_or_bytes};
use crate::poll::Turns;

pub use manifest::{MAX_BYTES, MAX_FILES};

/// The URI prefix of skills.
pub const PREFIX: &str = "skill://";
/// The extension's identifier, under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
/// Most directories a scan visits, and most levels deep.
const MAX_DIRS: usize = 10_000;
const MAX_DEPTH: usize = 16;

/// Settings of the skills provider.
#[derive(Debug, Clone)]
pub struct SkillsConfig {
    /// How often the directories are scanned for changes (default 2 s; `None`: never, and
    /// no subscriptions).
    pub poll_interval: Option<Duration>,
    /// Entries per `skills/list` page (default 100).
    pub page_size: usize,
    /// Caching hint for 2026-07-28 clients (default: immediately stale, private).
    pub cache: CacheHint,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            poll_interval: Some(Duration::from_secs(2)),
            page_size: 100,
            cache: CacheHint::new(0, CacheScope::Private),
        }
    }
}

/// Why the provider could not start.
#[derive(Debug)]
pub enum SkillsError {
    /// A directory could not be opened.
    Open(PathBuf, std::io::Error),
    /// A name is not a valid first URI segment, or two sources share it.
    BadName(String),
    /// Several directories need a name each.
    Unnamed,
}

impl std::fmt::Display for SkillsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkillsError::Open(p, e) => write!(f, "{}: {e}", p.display()),
            SkillsError::BadName(n) => write!(
                f,
                "{n:?} cannot name skills (lowercase letters, digits and inner hyphens; once each)"
            ),
            SkillsError::Unnamed => {
                f.write_str("several skills directories need names: NAME=skills:DIR")
            }
        }
    }
}

impl std::error::Error for SkillsError {}

/// Serves the skills of one or more directories (see the module docs).
#[derive(Clone)]
pub struct SkillsProvider {
    inner: Arc<Inner>,
}

struct Inner {
    roots: Vec<Root>,
    config: SkillsConfig,
    index: RwLock<Arc<Index>>,
}

struct Root {
    /// The organisational prefix of its skills (`NAME=skills:DIR`), if any.
    name: Option<String>,
    path: PathBuf,
    dir: Dir,
}

/// A file's identity between two scans: what must not change for its digest to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

#[derive(Debug, Clone)]
struct FileInfo {
    root: usize,
    rel: RelPath,
    name: String,
    size: u64,
    digest: String,
    stamp: Stamp,
    /// For a `SKILL.md`: its skill's name and description.
    skill: Option<(String, String)>,
}

#[derive(Debug, Clone)]
struct Entry {
    uri: String,
    frontmatter: Map<String, Value>,
    /// (uri, digest, size) of every file, `SKILL.md` first.
    resources: Vec<(String, String, u64)>,
}

impl Entry {
    fn to_json(&self) -> Value {
        let resources: Vec<Value> = self
            .resources
            .iter()
            .map(|(uri, digest, size)| json!({"uri": uri, "digest": digest, "size": size}))
            .collect();
        json!({"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources})
    }
}

/// One scan of every root.
#[derive(Debug, Default)]
struct Index {
    skills: BTreeMap<String, Entry>,
    files: BTreeMap<String, FileInfo>,
    /// Directory URI → its children's URIs (a `true` marks a directory).
    dirs: BTreeMap<String, BTreeMap<String, bool>>,
    /// Directories not served as skills, and why (warned about once per reason).
    refused: BTreeMap<PathBuf, String>,
}

impl SkillsProvider {
    /// Serves `dirs`: `(name, path)` pairs; a single directory may go unnamed (its skills
    /// are then `skill://<skill>/…`), several need names (`skill://<name>/<skill>/…`).
    pub fn new(
        dirs: Vec<(Option<String>, PathBuf)>,
        config: SkillsConfig,
    ) -> Result<SkillsProvider, SkillsError> {
        if dirs.len() > 1 && dirs.iter().any(|(n, _)| n.is_none()) {
            return Err(SkillsError::Unnamed);
        }
        let mut roots: Vec<Root> = Vec::with_capacity(dirs.len());
        for (name, path) in dirs {
            if let Some(n) = &name
                && (manifest::check_name(n).is_err()
                    || roots.iter().any(|r| r.name.as_deref() == Some(n)))
            {
                return Err(SkillsError::BadName(n.clone()));
            }
            let dir = Dir::open_ambient_dir(&path, ambient_authority())
                .map_err(|e| SkillsError::Open(path.clone(), e))?;
            roots.push(Root { name, path, dir });
        }
        let inner = Arc::new(Inner {
            roots,
            config,
            index: RwLock::new(Arc::new(Index::default())),
        });
        let first = scan(&inner.roots, &Index::default());
        *inner
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(first);
        Ok(SkillsProvider { inner })
    }

    /// Mounts this provider on `builder` with the extension: its capability
    /// (`directoryRead: true`), `skills/list` and `skills/get`.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        let (list, get) = (self.clone(), self.clone());
        builder
            .extension(EXTENSION, json!({"directoryRead": true}))
            .method("skills/list", move |ctx, params| {
                let this = list.clone();
                async move { this.skills_list(&ctx, &params) }
            })
            .method("skills/get", move |ctx, params| {
                let this = get.clone();
                async move { this.skills_get(&ctx, &params) }
            })
            .mount(PREFIX, self)
    }

    fn index(&self) -> Arc<Index> {
        Arc::clone(
            &self
                .inner
                .index
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The names of the skills served, in URI order.
    pub fn skill_uris(&self) -> Vec<String> {
        self.index().skills.keys().cloned().collect()
    }

    fn cached(&self, ctx: &RequestContext, mut result: Value) -> Value {
        if ctx.protocol_version().is_modern() {
            let hint = self.inner.config.cache;
            result["ttlMs"] = json!(hint.ttl_ms);
            result["cacheScope"] = json!(hint.scope);
        }
        result
    }

    fn skills_list(
        &self,
        ctx: &RequestContext,
        params: &Map<String, Value>,
    ) -> Result<Value, ResourceError> {
        let after = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(c)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(|| ResourceError::bad_position(""))?,
            ),
            Some(_) => return Err(ResourceError::bad_position("")),
        };
        let index = self.index();
        let range = match &after {
            None => index.skills.range::<String, _>(..),
            Some(a) => index
                .skills
                .range::<String, _>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded)),
        };
        let page_size = self.inner.config.page_size.max(1);
        let page: Vec<&Entry> = range.map(|(_, e)| e).take(page_size + 1).collect();
        let more = page.len() > page_size;
        let page = &page[..page.len().min(page_size)];
        let mut result = json!({"skills": page.iter().map(|e| e.to_json()).collect::<Vec<_>>()});
        if more && let Some(last) = page.last() {
            result["nextCursor"] =
                json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&last.uri));
        }
        Ok(self.cached(ctx, result))
    }

    fn skills_get(
        &self,
        ctx: &RequestContext,
        params: &Map<String, Value>,
    ) -> Result<Value, ResourceError> {
        let Some(Value::String(uri)) = params.get("uri") else {
            return Err(ResourceError::invalid(
                "",
                "skills/get needs the \"uri\" of a SKILL.md",
            ));
        };
        let index = self.index();
        let entry = index.skills.get(uri).ok_or_else(|| {
            ResourceError::invalid(uri, format!("{uri} is not a skill this server serves"))
        })?;
        Ok(self.cached(ctx, json!({"skill": entry.to_json()})))
    }

    fn file_resource(uri: &str, f: &FileInfo) -> Resource {
        let mut r = Resource::new(uri, f.name.clone())
            .with_size(f.size)
            .document();
        match &f.skill {
            Some((name, description)) => {
                r.name = name.clone();
                r.description = Some(description.clone());
                r.mime_type = Some("text/markdown".into());
            }
            None => r.mime_type = crate::fs::read::mime_from_name(OsStr::new(&f.name)),
        }
        r
    }

    fn dir_resource(uri: &str) -> Resource {
        let name = uri.rsplit('/').next().unwrap_or(uri).to_owned();
        Resource::new(uri, name)
            .with_mime_type(DIRECTORY_MIME_TYPE)
            .collection()
    }

    fn resource(index: &Index, uri: &str) -> Option<Resource> {
        if let Some(f) = index.files.get(uri) {
            return Some(Self::file_resource(uri, f));
        }
        index
            .dirs
            .contains_key(uri)
            .then(|| Self::dir_resource(uri))
    }

    /// Watches the roots by scanning them every `interval`, publishing what changed (in
    /// turns with the other instances of a deployment, [`crate::poll`]).
    fn watch(&self, feed: &ChangeFeed, interval: Duration) {
        const SLICE: Duration = Duration::from_millis(500);
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let turns = Turns::new(feed, PREFIX);
        let spawned = std::thread::Builder::new()
            .name("rsrc-skills-poll".into())
            .spawn(move || {
                while let Ok(turn) = turns.wait(interval, SLICE, || weak.strong_count() > 0) {
                    let (Some(turn), Some(inner)) = (turn, weak.upgrade()) else {
                        continue;
                    };
                    let this = SkillsProvider { inner };
                    let old = this.index();
                    let new = Arc::new(scan(&this.inner.roots, &old));
                    // Swapped even when nothing was published: new stamps spare the next
                    // scan from hashing a file that was only touched.
                    *this
                        .inner
                        .index
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&new);
                    if publish(&old, &new, turns.feed()) {
                        turns.found_change(turn);
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "skills are not watched: no thread");
        }
    }
}

/// Publishes the differences between two snapshots; whether there were any.
fn publish(old: &Index, new: &Index, feed: &ChangeFeed) -> bool {
    let mut any = false;
    for (uri, f) in &new.files {
        match old.files.get(uri) {
            Some(o) if o.digest == f.digest && o.skill == f.skill => {}
            _ => {
                feed.updated(uri);
                any = true;
            }
        }
    }
    let gone: Vec<&String> = old
        .files
        .keys()
        .filter(|u| !new.files.contains_key(*u))
        .collect();
    for uri in &gone {
        feed.updated(uri);
        any = true;
    }
    let listing_changed = !gone.is_empty()
        || new.files.keys().any(|u| !old.files.contains_key(u))
        || old.skills.keys().ne(new.skills.keys());
    if listing_changed {
        feed.list_changed();
    }
    any || listing_changed
}

/// The URI of `rel` (a path from root `root`) under `root`'s prefix.
fn uri_of(roots: &[Root], root: usize, rel: &RelPath) -> String {
    let mut uri = String::from(PREFIX);
    if let Some(name) = &roots[root].name {
        uri.push_str(name);
        if !rel.is_root() {
            uri.push('/');
        }
    }
    uri.push_str(&rel.encode());
    uri
}

/// Scans every root; digests of files whose stamp did not change are taken from
/// `previous`.
fn scan(roots: &[Root], previous: &Index) -> Index {
    let mut index = Index::default();
    for (i, root) in roots.iter().enumerate() {
        for skill_dir in skill_dirs(&root.dir, &root.path) {
            match skill(roots, i, &skill_dir, previous) {
                Ok((entry, files, dirs)) => {
                    index.files.extend(files);
                    for (dir, children) in dirs {
                        index.dirs.entry(dir).or_default().extend(children);
                    }
                    index.skills.insert(entry.uri.clone(), entry);
                }
                Err(manifest::Refusal(why)) => {
                    let shown = root.path.join(skill_dir.to_path());
                    if previous.refused.get(&shown) != Some(&why) {
                        tracing::warn!(skill = %shown.display(), reason = %why, "not served as a skill");
                    }
                    index.refused.insert(shown, why);
                }
            }
        }
    }
    index
}

fn hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// The directories under the root (not the root itself) that hold a `SKILL.md`, breadth
/// first, within the bounds; symbolic links and hidden directories are not entered.
fn skill_dirs(dir: &Dir, shown: &Path) -> Vec<RelPath> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([RelPath::root()]);
    let mut visited = 0;
    while let Some(rel) = queue.pop_front() {
        visited += 1;
        if visited > MAX_DIRS {
            tracing::warn!(dir = %shown.display(), "more than {MAX_DIRS} directories: the rest is not scanned for skills");
            break;
        }
        let entries = if rel.is_root() {
            dir.entries()
        } else {
            dir.read_dir(rel.to_path())
        };
        let Ok(entries) = entries else { continue };
        let mut has_skill = false;
        for e in entries.flatten() {
            let name = e.file_name();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_file() && name == "SKILL.md" {
                has_skill = true;
            } else if kind.is_dir() && !hidden(&name) && rel.components().len() < MAX_DEPTH {
                queue.push_back(rel.join(&name));
            }
        }
        if has_skill && !rel.is_root() {
            found.push(rel);
        }
    }
    found.sort_by(|a, b| a.components().cmp(b.components()));
    found
}

type SkillParts = (
    Entry,
    Vec<(String, FileInfo)>,
    Vec<(String, BTreeMap<String, bool>)>,
);

/// One skill: its entry, its files and its directories, or why it is not served.
fn skill(
    roots: &[Root],
    root: usize,
    skill_dir: &RelPath,
    previous: &Index,
) -> Result<SkillParts, manifest::Refusal> {
    let dir = &roots[root].dir;
    let dir_name = skill_dir
        .name()
        .and_then(OsStr::to_str)
        .ok_or_else(|| manifest::Refusal("the directory's name is not UTF-8".into()))?;
    // Every regular, non-hidden file, with its directories, within the limits.
    let mut files: Vec<(RelPath, Stamp)> = Vec::new();
    let mut dirs: Vec<RelPath> = vec![skill_dir.clone()];
    let mut total = 0u64;
    let mut i = 0;
    while i < dirs.len() {
        let current = dirs[i].clone();
        i += 1;
        let mut entries: Vec<_> = dir
            .read_dir(current.to_path())
            .map_err(|e| manifest::Refusal(format!("cannot be read: {e}")))?
            .flatten()
            .collect();
        entries.sort_by_key(cap_std::fs::DirEntry::file_name);
        for e in entries {
            let name = e.file_name();
            if hidden(&name) {
                continue;
            }
            let Ok(kind) = e.file_type() else { continue };
            let rel = current.join(&name);
            if kind.is_dir() {
                if rel.components().len() - skill_dir.components().len() > MAX_DEPTH {
                    return Err(manifest::Refusal("directories nest too deep".into()));
                }
                dirs.push(rel);
            } else if kind.is_file() {
                let md = e
                    .metadata()
                    .map_err(|e| manifest::Refusal(format!("cannot be read: {e}")))?;
                total += md.len();
                files.push((
                    rel,
                    Stamp {
                        len: md.len(),
                        modified: md.modified().ok().map(cap_std::time::SystemTime::into_std),
                    },
                ));
                if files.len() > MAX_FILES {
                    return Err(manifest::Refusal(format!("more than {MAX_FILES} files")));
                }
                if total > MAX_BYTES {
                    return Err(manifest::Refusal(format!(
                        "its files hold more than {MAX_BYTES} bytes"
                    )));
                }
            }
        }
    }
    let skill_md = skill_dir.join(OsStr::new("SKILL.md"));
    let text = read_text(dir, &skill_md, manifest::MAX_SKILL_MD)?;
    let frontmatter = manifest::frontmatter(&text, dir_name)?;
    let description = frontmatter
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let skill_uri = uri_of(roots, root, &skill_md);
    let mut infos = Vec::with_capacity(files.len());
    for (rel, stamp) in files {
        let uri = uri_of(roots, root, &rel);
        let digest = match previous.files.get(&uri) {
            Some(f) if f.stamp == stamp && f.root == root => f.digest.clone(),
            _ => digest(dir, &rel)?,
        };
        let name = rel
            .name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let skill = (rel == skill_md).then(|| (dir_name.to_owned(), description.clone()));
        infos.push((
            uri,
            FileInfo {
                root,
                rel,
                name,
                size: stamp.len,
                digest,
                stamp,
                skill,
            },
        ));
    }
    // SKILL.md first, then the rest in path order.
    infos.sort_by_key(|(uri, _)| (uri != &skill_uri, uri.clone()));
    let resources = infos
        .iter()
        .map(|(uri, f)| (uri.clone(), f.digest.clone(), f.size))
        .collect();
    let mut tree: Vec<(String, BTreeMap<String, bool>)> = Vec::new();
    for d in &dirs {
        let mut children = BTreeMap::new();
        for (uri, f) in &infos {
            if f.rel.parent().as_ref() == Some(d) {
                children.insert(uri.clone(), false);
            }
        }
        for sub in &dirs {
            if sub.parent().as_ref() == Some(d) {
                children.insert(uri_of(roots, root, sub), true);
            }
        }
        tree.push((uri_of(roots, root, d), children));
    }
    let entry = Entry {
        uri: skill_uri,
        frontmatter,
        resources,
    };
    Ok((entry, infos, tree))
}

/// A file's text, at most `cap` bytes, opened as resources are.
fn read_text(dir: &Dir, rel: &RelPath, cap: u64) -> Result<String, manifest::Refusal> {
    let (file, md) = open_checked(dir, rel)
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    let bytes = read_open(file, &md, cap, &std::sync::atomic::AtomicBool::new(false))
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    String::from_utf8(bytes)
        .map_err(|_| manifest::Refusal(format!("{} is not UTF-8", rel.encode())))
}

/// `sha256:<hex>` of a file's bytes.
fn digest(dir: &Dir, rel: &RelPath) -> Result<String, manifest::Refusal> {
    let (file, md) = open_checked(dir, rel)
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    let bytes = read_open(
        file,
        &md,
        MAX_BYTES,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    let hash = Sha256::digest(&bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}

impl Provider for SkillsProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        let watched = self.inner.config.poll_interval.is_some();
        ProviderCapabilities::default()
            .with_subscribe(watched)
            .with_list_changed(watched)
    }

    fn attach(&self, feed: ChangeFeed) {
        if let Some(interval) = self.inner.config.poll_interval {
            self.watch(&feed, interval);
        }
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let index = self.index();
        let after = req
            .after
            .map(|a| String::from_utf8(a.to_vec()))
            .transpose()
            .map_err(|_| ResourceError::internal("bad position"))?;
        let bound = |a: &Option<String>| match a {
            Some(a) => std::ops::Bound::Excluded(a.clone()),
            None => std::ops::Bound::Unbounded,
        };
        let limit = req.limit.max(1);
        let (resources, next): (Vec<Listed>, Option<Vec<u8>>) = match req.parent {
            None => {
                let mut page: Vec<(&String, &FileInfo)> = index
                    .files
                    .range((bound(&after), std::ops::Bound::Unbounded))
                    .take(limit + 1)
                    .collect();
                let more = page.len() > limit;
                page.truncate(limit);
                let next = more
                    .then(|| page.last().map(|(u, _)| u.as_bytes().to_vec()))
                    .flatten();
                (
                    page.iter()
                        .map(|(u, f)| Self::file_resource(u, f).into())
                        .collect(),
                    next,
                )
            }
            Some(parent) => {
                let Some(children) = index.dirs.get(parent) else {
                    return Err(if index.files.contains_key(parent) {
                        ResourceError::not_a_collection(parent)
                    } else {
                        ResourceError::not_found(parent)
                    });
                };
                let mut page: Vec<(&String, &bool)> = children
                    .range((bound(&after), std::ops::Bound::Unbounded))
                    .take(limit + 1)
                    .collect();
                let more = page.len() > limit;
                page.truncate(limit);
                let next = more
                    .then(|| page.last().map(|(u, _)| u.as_bytes().to_vec()))
                    .flatten();
                let resources = page
                    .iter()
                    .filter_map(|(u, is_dir)| {
                        if **is_dir {
                            Some(Self::dir_resource(u).into())
                        } else {
                            index
                                .files
                                .get(*u)
                                .map(|f| Self::file_resource(u, f).into())
                        }
                    })
                    .collect();
                (resources, next)
            }
        };
        Ok(Page {
            resources,
            next,
            cache: Some(self.inner.config.cache),
        })
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        Self::resource(&self.index(), uri).ok_or_else(|| ResourceError::not_found(uri))
    }

    async fn read(&self, _ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let index = self.index();
        let cache = Some(self.inner.config.cache);
        let Some(f) = index.files.get(uri) else {
            return if index.dirs.contains_key(uri) {
                Ok(ReadOutput {
                    contents: Vec::new(),
                    cache,
                })
            } else {
                Err(ResourceError::not_found(uri))
            };
        };
        let dir = &self.inner.roots[f.root].dir;
        // A file swapped for a link since the scan is not part of the skill any more.
        let unlinked = |rel: &RelPath| {
            dir.canonicalize(rel.to_path())
                .ok()
                .as_deref()
                .and_then(RelPath::from_canonical)
                .as_ref()
                == Some(rel)
        };
        let (file, md) = match open_resolved(dir, &f.rel) {
            Ok((file, md, linked)) if !linked || unlinked(&f.rel) => (file, md),
            _ => return Err(ResourceError::not_found(uri)),
        };
        let bytes = read_open(
            file,
            &md,
            MAX_BYTES,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .map_err(|e| ResourceError::internal(format!("{uri}: {e:?}")))?;
        let mut resource = Self::file_resource(uri, f);
        resource.size = Some(bytes.len() as u64);
        let body = match text_or_bytes(bytes) {
            Ok(text) => Body::Text(text),
            Err(bytes) => Body::Blob(bytes.into()),
        };
        Ok(ReadOutput {
            contents: vec![ResourceContents { resource, body }],
            cache,
        })
    }
}

impl std::fmt::Debug for SkillsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsProvider")
            .field(
                "roots",
                &self.inner.roots.iter().map(|r| &r.path).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
