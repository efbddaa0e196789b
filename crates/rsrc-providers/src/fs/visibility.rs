//! Visibility: which files and directories a root exposes at all — hidden names,
//! `.gitignore` / `.ignore` rules, include / exclude globs and withheld files. (Not to be
//! confused with a *filter*, which is SEP-2564's selection among what a listing shows:
//! a filter only ever narrows what is visible.)
//!
//! Invariants:
//! - One rule for every operation: an entry that a listing omits also reads, lists and
//!   completes as not found, so a hidden `.env` cannot be read by guessing its URI.
//! - Ignore files are read through the root's capability handle exactly like resources
//!   (non-blocking open, regular files only: a FIFO named `.gitignore` cannot hang the
//!   server), and only up to [`MAX_IGNORE_FILE`] bytes. An ignore file that exists but
//!   cannot be read whole (not a regular file, unreadable, larger than the bound, rules
//!   that do not compile) fails closed: every entry of its directory, and so everything
//!   below it, is hidden, and the reason is logged. Within a file read whole, a pattern
//!   that does not parse is skipped as git skips it, and bytes that are not UTF-8 are
//!   replaced (the other patterns still apply).
//! - `.git` directories are never exposed.
//!
//! Semantics follow git's: the deepest ignore file with a matching pattern decides, `!`
//! patterns re-include, and a directory that is ignored hides everything below it. Unlike
//! git (and like `ripgrep --no-require-git`), ignore files apply whether or not the root is
//! inside a repository.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cap_std::fs::Dir;
use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::kit::open::{ReadError, open_checked};
use crate::kit::rel_path::RelPath;

/// What a directory's ignore file holds.
enum IgnoreFile {
    /// There is none.
    Absent,
    /// Its text, read whole.
    Text(String),
    /// It exists but could not be read whole: its rules are unknown.
    Unreadable,
}

/// One ignore file, read like a resource: opened without blocking through the root's
/// handle, regular files only, at most [`MAX_IGNORE_FILE`] bytes. Anything that keeps it
/// from being read whole is logged and makes it [`IgnoreFile::Unreadable`].
fn read_ignore_file(dir_handle: &Dir, path: &RelPath) -> IgnoreFile {
    let shown = path.to_path();
    let unreadable = |why: &dyn std::fmt::Display| {
        tracing::warn!(file = %shown.display(), "ignore file cannot be read whole ({why}): everything in its directory is hidden");
        IgnoreFile::Unreadable
    };
    let (file, md) = match open_checked(dir_handle, path) {
        Ok(opened) => opened,
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return IgnoreFile::Absent;
        }
        Err(e) => return unreadable(&format_args!("{e:?}")),
    };
    if !md.is_file() {
        return unreadable(&"not a regular file");
    }
    if md.len() > MAX_IGNORE_FILE {
        return unreadable(&format_args!(
            "{} bytes, over the limit of {MAX_IGNORE_FILE}",
            md.len()
        ));
    }
    let mut bytes = Vec::new();
    // One byte more than the limit tells a file that grew since it was looked at.
    if let Err(e) = file.take(MAX_IGNORE_FILE + 1).read_to_end(&mut bytes) {
        return unreadable(&e);
    }
    if bytes.len() as u64 > MAX_IGNORE_FILE {
        return unreadable(&format_args!("over the limit of {MAX_IGNORE_FILE} bytes"));
    }
    IgnoreFile::Text(decode_rules(bytes, &shown))
}

/// An ignore file's text: UTF-8, or with the invalid bytes replaced (the other patterns
/// still apply).
fn decode_rules(bytes: Vec<u8>, shown: &Path) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!(file = %shown.display(), "ignore file is not UTF-8: invalid bytes replaced");
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}

/// Adds every pattern of `text` that parses to `builder` (a bad one is skipped and
/// logged, as git skips it); whether there was any line.
fn add_rules(builder: &mut GitignoreBuilder, text: &str, shown: &Path) -> bool {
    let mut any = false;
    for line in text.lines() {
        if let Err(e) = builder.add_line(None, line) {
            tracing::warn!(file = %shown.display(), error = %e, "ignore pattern skipped");
        }
        any = true;
    }
    any
}

/// The ignore-file parser on arbitrary bytes, for the fuzz target and its corpus replay:
/// decoding, patterns and matching never panic. Behind the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn fuzz_ignore_file(data: &[u8]) {
    let shown = Path::new(".gitignore");
    let text = decode_rules(data.to_vec(), shown);
    let mut builder = GitignoreBuilder::new("/");
    add_rules(&mut builder, &text, shown);
    if let Ok(rules) = builder.build() {
        for (path, is_dir) in [
            ("a", false),
            ("a/b.log", false),
            ("dir", true),
            (".env", false),
        ] {
            let _ = rules.matched(path, is_dir);
        }
    }
}

/// The largest ignore file read.
pub(crate) const MAX_IGNORE_FILE: u64 = 1024 * 1024;
/// How many directories' ignore rules are cached before the cache is cleared.
const CACHE_LIMIT: usize = 4096;

/// Visibility rules of the filesystem provider.
#[derive(Debug, Clone, Default)]
pub struct VisibilityConfig {
    /// Expose names starting with `.` (default: no).
    pub include_hidden: bool,
    /// Honour `.gitignore` and `.ignore` files (default: yes).
    pub respect_ignore_files: bool,
    /// If not empty, only files matching one of these globs are exposed (directories are
    /// always traversed). Globs match the path relative to the root, e.g. `**/*.md`.
    pub include: Vec<String>,
    /// Files and directories matching one of these globs are never exposed.
    pub exclude: Vec<String>,
    /// Files never exposed wherever they lie in the root: the server's own secrets (its
    /// configuration, key, token and password files). Withheld by path (and so through a
    /// symbolic link) and, when read, by identity (device and inode: a hard link too).
    pub withheld: Vec<PathBuf>,
}

impl VisibilityConfig {
    /// The default rules: no hidden files, ignore files honoured, no globs.
    pub fn standard() -> Self {
        VisibilityConfig {
            include_hidden: false,
            respect_ignore_files: true,
            include: Vec::new(),
            exclude: Vec::new(),
            withheld: Vec::new(),
        }
    }
}

/// The ignore rules of one directory.
#[derive(Debug, Clone)]
enum DirIgnore {
    /// It has no ignore file.
    None,
    /// The rules of its ignore files.
    Rules(Arc<Gitignore>),
    /// An ignore file could not be read whole: everything in the directory is hidden.
    Closed,
}

/// Ignore rules by directory (each root has its own [`Visibility`]), with when they were
/// read.
type IgnoreCache = HashMap<RelPath, (Instant, DirIgnore)>;

/// How long ignore rules read from disk are trusted before being read again.
const RULES_TTL: Duration = Duration::from_secs(2);

/// Compiled visibility rules, with a cache of per-directory ignore rules.
#[derive(Debug)]
pub(crate) struct Visibility {
    include_hidden: bool,
    respect_ignore_files: bool,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// [`VisibilityConfig::withheld`] inside the root, relative to it.
    withheld_paths: Vec<PathBuf>,
    /// [`VisibilityConfig::withheld`] as (device, inode).
    withheld_ids: Vec<(u64, u64)>,
    ignore_cache: Mutex<IgnoreCache>,
}

fn globset(globs: &[String]) -> Result<Option<GlobSet>, String> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).map_err(|e| format!("invalid glob {g:?}: {e}"))?);
    }
    b.build().map(Some).map_err(|e| e.to_string())
}

/// The rules of the ignore files of `dir` (`.gitignore`, then `.ignore`).
fn read_rules(dir_handle: &Dir, dir: &RelPath) -> DirIgnore {
    let mut builder = GitignoreBuilder::new("/");
    let mut any = false;
    for file in [".gitignore", ".ignore"] {
        let path = dir.join(OsStr::new(file));
        match read_ignore_file(dir_handle, &path) {
            IgnoreFile::Absent => {}
            IgnoreFile::Text(text) => any |= add_rules(&mut builder, &text, &path.to_path()),
            IgnoreFile::Unreadable => return DirIgnore::Closed,
        }
    }
    if !any {
        return DirIgnore::None;
    }
    match builder.build() {
        Ok(rules) => DirIgnore::Rules(Arc::new(rules)),
        Err(e) => {
            tracing::warn!(dir = %dir.to_path().display(), error = %e, "ignore rules do not compile: everything in their directory is hidden");
            DirIgnore::Closed
        }
    }
}

impl Visibility {
    /// The rules of `config` for the root at `root`.
    pub(crate) fn new(config: &VisibilityConfig, root: &Path) -> Result<Visibility, String> {
        use std::os::unix::fs::MetadataExt as _;
        let root = std::fs::canonicalize(root).ok();
        let mut withheld_paths = Vec::new();
        let mut withheld_ids = Vec::new();
        for file in &config.withheld {
            // One that does not exist has nothing to withhold.
            if let Ok(md) = std::fs::metadata(file) {
                withheld_ids.push((md.dev(), md.ino()));
            }
            if let (Some(root), Ok(file)) = (&root, std::fs::canonicalize(file))
                && let Ok(rel) = file.strip_prefix(root)
            {
                withheld_paths.push(rel.to_path_buf());
            }
        }
        Ok(Visibility {
            include_hidden: config.include_hidden,
            respect_ignore_files: config.respect_ignore_files,
            include: globset(&config.include)?,
            exclude: globset(&config.exclude)?,
            withheld_paths,
            withheld_ids,
            ignore_cache: Mutex::new(HashMap::new()),
        })
    }

    /// Whether the file opened with metadata `md` is one of [`VisibilityConfig::withheld`]
    /// (by any name).
    pub(crate) fn withholds(&self, md: &cap_std::fs::Metadata) -> bool {
        use cap_std::fs::MetadataExt as _;
        !self.withheld_ids.is_empty() && self.withheld_ids.contains(&(md.dev(), md.ino()))
    }

    /// The ignore rules of the directory `dir`, read on first use.
    fn rules(&self, dir_handle: &Dir, dir: &RelPath) -> DirIgnore {
        if let Some((read, rules)) = self
            .ignore_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(dir)
            && read.elapsed() < RULES_TTL
        {
            return rules.clone();
        }
        let rules = read_rules(dir_handle, dir);
        let mut cache = self
            .ignore_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(dir.clone(), (Instant::now(), rules.clone()));
        rules
    }

    /// Forgets the ignore rules read for `dir` (its ignore file changed).
    pub(crate) fn forget_rules(&self, dir: &RelPath) {
        self.ignore_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(dir);
    }

    /// The ignore rules that apply to the entries of `dir`, looked up once per directory.
    pub(crate) fn rules_for(&self, root: &Dir, dir: &RelPath) -> DirRules {
        let mut rules = DirRules::default();
        self.add_rules_of(root, &mut rules);
        for c in dir.components() {
            rules.descend(c);
            self.add_rules_of(root, &mut rules);
        }
        rules
    }

    /// Puts the ignore rules of `rules.dir` itself (if it has any) before those of its
    /// ancestors: the deepest ignore file comes first.
    fn add_rules_of(&self, root: &Dir, rules: &mut DirRules) {
        if !self.respect_ignore_files {
            return;
        }
        match self.rules(root, &rules.dir) {
            DirIgnore::None => {}
            DirIgnore::Rules(r) => rules.rules.insert(0, (rules.path.clone(), r)),
            DirIgnore::Closed => rules.closed = true,
        }
    }

    /// Whether the entry `name` (a directory if `is_dir`) of the directory `rules` was
    /// made for is exposed, given that the directory itself is.
    pub(crate) fn entry_visible(&self, rules: &DirRules, name: &OsStr, is_dir: bool) -> bool {
        let bytes = name.as_encoded_bytes();
        if rules.closed
            || bytes == b".git"
            || (!self.include_hidden && bytes.first() == Some(&b'.'))
        {
            return false;
        }
        if self.exclude.is_none()
            && self.include.is_none()
            && rules.rules.is_empty()
            && self.withheld_paths.is_empty()
        {
            return true;
        }
        let rel = rules.path.join(name);
        if self.withheld_paths.contains(&rel) {
            return false;
        }
        if self.exclude.as_ref().is_some_and(|g| g.is_match(&rel)) {
            return false;
        }
        if !is_dir && self.include.as_ref().is_some_and(|g| !g.is_match(&rel)) {
            return false;
        }
        // The deepest ignore file that has an opinion decides; patterns are relative to
        // the directory holding the file.
        for (base, gitignore) in &rules.rules {
            let below = rel.strip_prefix(base).unwrap_or(&rel);
            match gitignore.matched(below, is_dir) {
                Match::Ignore(_) => return false,
                Match::Whitelist(_) => return true,
                Match::None => {}
            }
        }
        true
    }

    /// Whether `path` is exposed (`is_dir` says what its last component is), and so is what it resolves to: a symlink inside the root
    /// cannot lend its visible name to a hidden, ignored, excluded or `.git` target
    /// (`notes.txt -> .env`, `docs/g -> ../.git`). The one rule every operation applies
    /// to a path (reads, metadata, listings, completion, subscriptions).
    pub(crate) fn resolved_visible(&self, root: &Dir, path: &RelPath, is_dir: bool) -> bool {
        if !self.path_visible(root, path, is_dir) {
            return false;
        }
        if path.is_root() || without_links(root, path) {
            return true;
        }
        // Resolved beneath the root by the capability handle; a link that cannot be
        // resolved there does not exist.
        match root
            .canonicalize(path.to_path())
            .ok()
            .as_deref()
            .and_then(RelPath::from_canonical)
        {
            Some(target) => target == *path || self.path_visible(root, &target, is_dir),
            None => false,
        }
    }

    /// Whether every component of `path` itself is exposed (what it resolves to aside).
    /// The rules of each directory on the way are gathered as the walk descends, each
    /// looked up once.
    pub(crate) fn path_visible(&self, root: &Dir, path: &RelPath, is_dir: bool) -> bool {
        let mut rules = DirRules::default();
        let comps = path.components();
        for (i, c) in comps.iter().enumerate() {
            self.add_rules_of(root, &mut rules);
            let last = i + 1 == comps.len();
            if !self.entry_visible(&rules, c, !last || is_dir) {
                return false;
            }
            if !last {
                rules.descend(c);
            }
        }
        true
    }
}

/// Whether `path` reaches what it names beneath `root` without following any symbolic
/// link, so that it is its own resolution: one `openat2` (`RESOLVE_NO_SYMLINKS`) and one
/// `fstat`, where resolving component by component costs a dozen system calls per read.
/// Any doubt (a link, another kernel, an error) is `false`: the caller then resolves.
#[cfg(target_os = "linux")]
fn without_links(root: &Dir, path: &RelPath) -> bool {
    use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
    let Ok(fd) = rustix::fs::openat2(
        root,
        path.to_path(),
        OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
    ) else {
        return false;
    };
    // `O_PATH | O_NOFOLLOW` opens a final symbolic link itself.
    rustix::fs::fstat(&fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) != FileType::Symlink)
}

#[cfg(not(target_os = "linux"))]
fn without_links(_root: &Dir, _path: &RelPath) -> bool {
    false
}

/// The ignore rules in force inside one directory, deepest first, each with the path of
/// the directory holding it (empty for the root).
#[derive(Debug, Default)]
pub(crate) struct DirRules {
    dir: RelPath,
    /// `dir` as a relative path, empty for the root: what entries' paths are joined to.
    path: PathBuf,
    rules: Vec<(PathBuf, Arc<Gitignore>)>,
    /// An ignore file of `dir` or of one of its ancestors could not be read whole: no
    /// entry is exposed.
    closed: bool,
}

impl DirRules {
    /// Moves into the subdirectory `name`.
    fn descend(&mut self, name: &OsStr) {
        self.dir.push(name);
        self.path.push(name);
    }
}
