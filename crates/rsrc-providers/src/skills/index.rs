//! The skills index: one scan of every skills directory — each skill's entry (its
//! frontmatter and every file's digest and size), its files and its directories — and the
//! differences between two scans, published as changes.
//!
//! Invariants:
//! - A scan is bounded ([`MAX_DIRS`] directories, [`MAX_DEPTH`] levels; per skill the
//!   limits of [`super::manifest`]), follows no symbolic link and enters no hidden
//!   directory; a directory that breaks a rule is left out whole, with a warning naming
//!   the reason (once per reason).
//! - A file whose size and modification time did not change keeps its digest from the
//!   previous scan; any other file is read again, through the root's capability handle.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cap_std::fs::Dir;
use rsrc::ChangeFeed;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::manifest::{self, MAX_BYTES, MAX_FILES};
use super::roots::{PREFIX, Root};
use crate::kit::blocking::Stop;
use crate::kit::open::{open_checked, read_open};
use crate::kit::rel_path::RelPath;

/// Most directories a scan visits, and most levels deep.
const MAX_DIRS: usize = 10_000;
const MAX_DEPTH: usize = 16;

/// A file's identity between two scans: what must not change for its digest to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

/// One served file.
#[derive(Debug, Clone)]
pub(super) struct FileInfo {
    /// The index of its root.
    pub(super) root: usize,
    /// Its path from the root.
    pub(super) rel: RelPath,
    /// Its file name.
    pub(super) name: String,
    pub(super) size: u64,
    digest: String,
    stamp: Stamp,
    /// For a `SKILL.md`: its skill's name and description.
    pub(super) skill: Option<(String, String)>,
}

/// A skill's entry in `skills/list` and `skills/get`.
#[derive(Debug, Clone)]
pub(super) struct SkillEntry {
    /// Its `SKILL.md`'s URI.
    pub(super) uri: String,
    frontmatter: Map<String, Value>,
    /// (uri, digest, size) of every file, `SKILL.md` first.
    resources: Vec<(String, String, u64)>,
}

impl SkillEntry {
    pub(super) fn to_json(&self) -> Value {
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
pub(super) struct Index {
    /// `SKILL.md` URI → the skill's entry.
    pub(super) skills: BTreeMap<String, SkillEntry>,
    /// File URI → the file.
    pub(super) files: BTreeMap<String, FileInfo>,
    /// Directory URI → its children's URIs (a `true` marks a directory).
    pub(super) dirs: BTreeMap<String, BTreeMap<String, bool>>,
    /// Directories not served as skills, and why (warned about once per reason).
    refused: BTreeMap<PathBuf, String>,
}

/// Publishes the differences between two snapshots; whether there were any.
pub(super) fn publish(old: &Index, new: &Index, feed: &ChangeFeed) -> bool {
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
pub(super) fn scan(roots: &[Root], previous: &Index) -> Index {
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
    SkillEntry,
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
    let entry = SkillEntry {
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
    let bytes = read_open(file, &md, cap, &Stop::default())
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    String::from_utf8(bytes)
        .map_err(|_| manifest::Refusal(format!("{} is not UTF-8", rel.encode())))
}

/// `sha256:<hex>` of a file's bytes.
fn digest(dir: &Dir, rel: &RelPath) -> Result<String, manifest::Refusal> {
    let (file, md) = open_checked(dir, rel)
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    let bytes = read_open(file, &md, MAX_BYTES, &Stop::default())
        .map_err(|e| manifest::Refusal(format!("{} cannot be read: {e:?}", rel.encode())))?;
    let hash = Sha256::digest(&bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}
