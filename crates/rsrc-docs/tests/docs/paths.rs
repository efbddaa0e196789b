//! Paths as the documents write them: backticked words that name a file or directory of
//! the repository, whole from the root or by their last components (`fs/read.rs` for
//! `crates/rsrc-providers/src/fs/read.rs`), with `{a,b}` braces expanded. Invariant: a
//! path matches a file only along whole components.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Backticked words of `text` that name a file or directory of the repository.
pub(crate) fn named_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, chunk) in text.split('`').enumerate() {
        // Odd chunks are inside backticks; code blocks' fences split evenly too.
        if i % 2 == 1 && is_path(chunk) {
            out.extend(expand_braces(chunk));
        }
    }
    out
}

/// Whether a backticked word names a path of the repository.
pub(crate) fn is_path(word: &str) -> bool {
    const EXTENSIONS: [&str; 11] = [
        ".rs", ".md", ".toml", ".txt", ".sql", ".sh", ".py", ".mjs", ".yml", ".json", ".js",
    ];
    const ROOTS: [&str; 7] = [
        "crates/",
        "docs/",
        "scripts/",
        "fuzz/",
        "interop/",
        "conformance/",
        ".ci/",
    ];
    if word.contains([' ', ':', '*', '<', '>', '\n', '=', '"', '(']) {
        return false;
    }
    // A folder: `legacy/`, `rsrc/src/server/tools/`.
    let folder = word.len() > 1 && word.ends_with('/') && !word.starts_with('/');
    let path_like = EXTENSIONS.iter().any(|e| word.ends_with(e))
        || ROOTS.iter().any(|r| word.starts_with(r))
        || folder;
    path_like && !word.starts_with('.') || word.starts_with(".ci/")
}

/// `db/{mod,model}.rs` → `db/mod.rs`, `db/model.rs`.
pub(crate) fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|alt| expand_braces(&format!("{}{alt}{}", &path[..open], &path[close + 1..])))
            .collect(),
        _ => vec![path.to_owned()],
    }
}

/// Every file and directory under the repository's root (but `target/` and hidden ones,
/// `.ci/` aside), relative, directories ending in `/`.
pub(crate) struct Tree {
    root: PathBuf,
    paths: Vec<String>,
}

impl Tree {
    pub(crate) fn read(root: &Path) -> Tree {
        let mut paths = Vec::new();
        walk(root, "", &mut paths);
        Tree {
            root: root.to_owned(),
            paths,
        }
    }

    /// The files and directories a document's `path` can name: itself from the root, or
    /// any ending with it.
    pub(crate) fn matching(&self, path: &str) -> Vec<&str> {
        let p = path.trim_end_matches('/');
        self.paths
            .iter()
            .map(String::as_str)
            .filter(|f| {
                let f = f.trim_end_matches('/');
                f == p || f.ends_with(&format!("/{p}"))
            })
            .collect()
    }

    /// The text of the Rust sources at `path`: the file, or every `.rs` file under the
    /// directory.
    pub(crate) fn source_of(&self, path: &str) -> Vec<String> {
        let files: Vec<&String> = if path.ends_with('/') {
            self.paths
                .iter()
                .filter(|f| f.starts_with(path) && f.ends_with(".rs"))
                .collect()
        } else {
            self.paths.iter().filter(|f| *f == path).collect()
        };
        files
            .into_iter()
            .filter_map(|f| fs::read_to_string(self.root.join(f)).ok())
            .collect()
    }
}

fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name == "target" || name == "node_modules" || (name.starts_with('.') && name != ".ci") {
            continue;
        }
        let path = format!("{rel}{name}");
        if entry.file_type().unwrap().is_dir() {
            out.push(format!("{path}/"));
            walk(&entry.path(), &format!("{path}/"), out);
        } else {
            out.push(path);
        }
    }
}
