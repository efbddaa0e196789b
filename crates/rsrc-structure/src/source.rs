//! The source files the checks read, held in memory by their path relative to the
//! repository's root (always with `/`): the real tree, or a handful of files written by
//! a test. Invariant: nothing here reads the disk but [`Sources::from_disk`], so the
//! checker runs the same on a fixture as on the repository.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Rust source files by path.
#[derive(Default)]
pub struct Sources {
    files: BTreeMap<String, String>,
    /// Directories holding a `Cargo.toml` (crates), relative.
    crates: Vec<String>,
}

impl Sources {
    /// Every `.rs` file under `dirs` of `root` (build output and hidden directories
    /// left out), and every crate among them.
    pub fn from_disk(root: &Path, dirs: &[&str]) -> Self {
        let mut sources = Sources::default();
        for dir in dirs {
            sources.walk(&root.join(dir), dir);
        }
        sources.crates.sort();
        sources
    }

    fn walk(&mut self, dir: &Path, rel: &str) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let path = format!("{rel}/{name}");
            if entry.file_type().unwrap().is_dir() {
                if name != "target" && name != "node_modules" && !name.starts_with('.') {
                    self.walk(&entry.path(), &path);
                }
            } else if name == "Cargo.toml" {
                self.crates.push(rel.to_owned());
            } else if name.ends_with(".rs") {
                let text = fs::read_to_string(entry.path())
                    .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
                self.files.insert(path, text);
            }
        }
    }

    /// Sources written out by a test: `(path, text)` pairs; `crates` are their crates.
    pub fn from_files(crates: &[&str], files: &[(&str, &str)]) -> Self {
        Sources {
            files: files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
                .collect(),
            crates: crates.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    /// The text of the file at `path`.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    /// Every file, by path, in order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(p, t)| (p.as_str(), t.as_str()))
    }

    /// The directories of the crates.
    pub fn crates(&self) -> &[String] {
        &self.crates
    }

    /// The root files of every build target of the crate in `dir`, found where Cargo
    /// finds them by itself (every target of this workspace is): the library, the
    /// binaries, the build script, and each test, bench and example; each with whether
    /// it is a test's or a bench's.
    pub fn targets(&self, dir: &str) -> Vec<(String, bool)> {
        let fixed = ["src/lib.rs", "src/main.rs", "build.rs"];
        let mut out: Vec<(String, bool)> = fixed
            .iter()
            .map(|f| format!("{dir}/{f}"))
            .filter(|f| self.files.contains_key(f))
            .map(|f| (f, false))
            .collect();
        for kind in ["src/bin", "tests", "benches", "examples"] {
            let prefix = format!("{dir}/{kind}/");
            for path in self.files.keys() {
                let Some(rest) = path.strip_prefix(&prefix) else {
                    continue;
                };
                // `kind/name.rs`, or `kind/name/main.rs`.
                let parts: Vec<&str> = rest.split('/').collect();
                if parts.len() == 1 || parts.len() == 2 && parts[1] == "main.rs" {
                    out.push((path.clone(), matches!(kind, "tests" | "benches")));
                }
            }
        }
        out
    }
}

/// The directory of a file's path (`a/b/c.rs` → `a/b`).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `dir/rel` with `.` and `..` components resolved.
pub(crate) fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}
