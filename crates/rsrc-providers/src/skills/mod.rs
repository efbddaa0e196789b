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
//!   the filesystem provider does; a large file is read on a blocking thread that stops
//!   when its request goes away (`kit::open::read_file`).
//! - A directory that breaks the naming rules or the limits (512 files, 16 MiB) is not
//!   served at all, with a warning naming the reason: never a partial skill.
//! - A changed file changes its digest in the next snapshot and notifies its subscribers;
//!   a skill or file that appears or goes notifies `list_changed`.

mod index;
mod manifest;

use std::path::PathBuf;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use base64::Engine as _;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rsrc::protocol::{
    Body, CacheHint, CacheScope, DIRECTORY_MIME_TYPE, Resource, ResourceContents,
};
use rsrc::{
    ChangeFeed, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput, RequestContext,
    ResourceError, ServerBuilder, keyset,
};
use serde_json::{Map, Value, json};

use crate::kit::content::{mime_from_name, text_or_bytes};
use crate::kit::open::{INLINE_READ, open_resolved, read_error, read_file};
use crate::kit::rel_path::RelPath;
use crate::poll::Turns;
use index::{FileInfo, Index, publish, scan};

pub use manifest::{MAX_BYTES, MAX_FILES};

/// The URI prefix of skills.
pub const PREFIX: &str = "skill://";
/// The extension's identifier, under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

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
    served: Arc<ServedSkills>,
}

/// What the provider serves: the skills directories, the settings, and the index of the
/// last scan (swapped whole by each scan). Shared with the thread that scans.
struct ServedSkills {
    roots: Vec<Root>,
    config: SkillsConfig,
    index: RwLock<Arc<Index>>,
}

/// One skills directory.
struct Root {
    /// The organisational prefix of its skills (`NAME=skills:DIR`), if any.
    name: Option<String>,
    path: PathBuf,
    dir: Dir,
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
        let served = Arc::new(ServedSkills {
            roots,
            config,
            index: RwLock::new(Arc::new(Index::default())),
        });
        let first = scan(&served.roots, &Index::default());
        *served
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(first);
        Ok(SkillsProvider { served })
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
                .served
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
            let hint = self.served.config.cache;
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
        let rest = index
            .skills
            .range::<str, _>(keyset::range(after.as_deref()));
        let page = keyset::page(rest.map(|(_, e)| e), self.served.config.page_size, |e| {
            e.uri.clone()
        });
        let skills: Vec<Value> = page.items.iter().map(|e| e.to_json()).collect();
        let mut result = json!({ "skills": skills });
        if let Some(last) = page.next {
            result["nextCursor"] =
                json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(last));
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
            None => r.mime_type = mime_from_name(f.name.as_bytes()),
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
        let weak: Weak<ServedSkills> = Arc::downgrade(&self.served);
        let turns = Turns::new(feed, PREFIX);
        let spawned = std::thread::Builder::new()
            .name("rsrc-skills-poll".into())
            .spawn(move || {
                while let Ok(turn) = turns.wait(interval, SLICE, || weak.strong_count() > 0) {
                    let (Some(turn), Some(served)) = (turn, weak.upgrade()) else {
                        continue;
                    };
                    let this = SkillsProvider { served };
                    let old = this.index();
                    let new = Arc::new(scan(&this.served.roots, &old));
                    // Swapped even when nothing was published: new stamps spare the next
                    // scan from hashing a file that was only touched.
                    *this
                        .served
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

impl Provider for SkillsProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        let watched = self.served.config.poll_interval.is_some();
        ProviderCapabilities::default()
            .with_subscribe(watched)
            .with_list_changed(watched)
    }

    fn attach(&self, feed: ChangeFeed) {
        if let Some(interval) = self.served.config.poll_interval {
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
            .map(std::str::from_utf8)
            .transpose()
            .map_err(|_| ResourceError::bad_position(""))?;
        // Keyset pages on the URI, the filter applied to each resource as listed.
        let page = |rest: &mut dyn Iterator<Item = (&String, Resource)>| {
            let page = rsrc::filter::page(
                req.filter,
                rest,
                req.limit,
                |f, (_, r)| f.matches_resource(r),
                |(u, _)| u.as_bytes().to_vec(),
            );
            Page {
                resources: page.items.into_iter().map(|(_, r)| r.into()).collect(),
                next: page.next,
                cache: Some(self.served.config.cache),
            }
        };
        Ok(match req.parent {
            None => page(
                &mut index
                    .files
                    .range::<str, _>(keyset::range(after))
                    .map(|(u, f)| (u, Self::file_resource(u, f))),
            ),
            Some(parent) => {
                let Some(children) = index.dirs.get(parent) else {
                    return Err(if index.files.contains_key(parent) {
                        ResourceError::not_a_collection(parent)
                    } else {
                        ResourceError::not_found(parent)
                    });
                };
                page(
                    &mut children.range::<str, _>(keyset::range(after)).filter_map(
                        |(u, is_dir)| {
                            let r = if *is_dir {
                                Self::dir_resource(u)
                            } else {
                                Self::file_resource(u, index.files.get(u)?)
                            };
                            Some((u, r))
                        },
                    ),
                )
            }
        })
    }

    async fn metadata(&self, _ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        Self::resource(&self.index(), uri).ok_or_else(|| ResourceError::not_found(uri))
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        let index = self.index();
        let cache = Some(self.served.config.cache);
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
        let dir = &self.served.roots[f.root].dir;
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
        let bytes = read_file(ctx, file, md, MAX_BYTES, INLINE_READ)
            .await
            .map_err(|e| read_error(uri, e, MAX_BYTES))?;
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
                &self
                    .served
                    .roots
                    .iter()
                    .map(|r| &r.path)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
