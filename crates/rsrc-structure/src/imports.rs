//! Which source file imports which: every path a file writes that names something of its
//! own crate, resolved to the file that defines it.
//!
//! A path is made absolute from where it is written (`crate::`, `super::`, `self::`, or a
//! name in scope: a child module, a `use`d name, a name a glob brings in), then walked
//! down the module tree to the longest module prefix that exists; the next segment is the
//! item, and the file of the module that defines it is what the path depends on. A name
//! that module only re-exports (`pub use`) is followed to where it is defined, so that
//! reaching an item through a facade (`crate::Error`) does not make a file depend on the
//! facade; one re-exported from another crate is no dependency between files at all. A
//! path naming a module itself depends on that module's file.
//!
//! An edge runs *up* when the module that defines the name is above the module that
//! writes it (its parent, or the crate's root), outside tests: the parent is then no
//! facade. Invariant: an edge is never drawn for a `mod` declaration, nor within one file.

use std::collections::{BTreeMap, BTreeSet};

use crate::modules::{ModPath, Tree};
use crate::source::Sources;

/// How deep re-exports and globs are followed (a loop of `use`s ends here).
const DEPTH: u8 = 16;

/// Importing file → imported file → the names it takes from it.
pub type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// One import between two files, and the names it takes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The importing file.
    pub from: String,
    /// The imported file.
    pub to: String,
    /// The names it takes, sorted.
    pub names: Vec<String>,
}

/// What the files of a tree import.
#[derive(Debug, Default)]
pub struct Imports {
    /// Every import between two files.
    pub graph: Graph,
    /// The imports that run up (see the module's docs), a subset of `graph`.
    pub upward: Graph,
}

impl Imports {
    /// The edges of `graph`, in order.
    pub fn edges(graph: &Graph) -> Vec<Edge> {
        graph
            .iter()
            .flat_map(|(from, tos)| {
                tos.iter().map(|(to, names)| Edge {
                    from: from.clone(),
                    to: to.clone(),
                    names: names.iter().cloned().collect(),
                })
            })
            .collect()
    }

    /// Takes the import `from` → `to` out of both graphs; whether there was one.
    pub fn remove(&mut self, from: &str, to: &str) -> bool {
        let mut removed = false;
        for graph in [&mut self.graph, &mut self.upward] {
            if let Some(tos) = graph.get_mut(from) {
                removed |= tos.remove(to).is_some();
            }
        }
        removed
    }
}

/// The imports of every target of every crate of `sources`; errors are files that do
/// not parse and modules without a file.
pub fn graph(sources: &Sources) -> Result<Imports, Vec<String>> {
    let mut imports = Imports::default();
    let mut errors = Vec::new();
    for dir in sources.crates() {
        for (root, test) in sources.targets(dir) {
            match Tree::read(sources, &root, test) {
                Ok(tree) => tree.edges(&mut imports),
                Err(e) => errors.extend(e),
            }
        }
    }
    errors.sort();
    errors.dedup();
    if errors.is_empty() {
        Ok(imports)
    } else {
        Err(errors)
    }
}

fn joined(a: &[String], b: &[String]) -> ModPath {
    a.iter().chain(b).cloned().collect()
}

impl Tree {
    /// Adds this target's edges to `imports`.
    fn edges(&self, imports: &mut Imports) {
        for w in &self.written {
            let Some(absolute) = self.absolute(&w.module, &w.segments, 0) else {
                continue;
            };
            let Some((module, name)) = self.definer(&absolute, 0) else {
                continue;
            };
            let to = &self.modules[&module].file;
            if *to == w.file {
                continue;
            }
            let up = module.len() < w.module.len()
                && w.module.starts_with(&module)
                && !self.modules.get(&w.module).is_some_and(|m| m.test);
            let graphs = [Some(&mut imports.graph), up.then_some(&mut imports.upward)];
            for graph in graphs.into_iter().flatten() {
                graph
                    .entry(w.file.clone())
                    .or_default()
                    .entry(to.clone())
                    .or_default()
                    .insert(name.clone());
            }
        }
    }

    /// Whether `module` has `name` in scope as a child, an item or an import.
    fn has(&self, module: &[String], name: &str) -> bool {
        let m = &self.modules[module];
        m.defines.contains(name) || m.imports.contains_key(name)
    }

    /// `segments`, written in `module`, as a path from the crate's root; `None` when it
    /// starts outside the crate (another crate, the prelude, a local, a generic).
    fn absolute(&self, module: &[String], segments: &[String], depth: u8) -> Option<ModPath> {
        let first = segments.first()?.as_str();
        match first {
            "crate" => Some(segments[1..].to_vec()),
            "self" => Some(joined(module, &segments[1..])),
            "super" => {
                let up = segments.iter().take_while(|s| *s == "super").count();
                let base = module.get(..module.len().checked_sub(up)?)?;
                Some(joined(base, &segments[up..]))
            }
            _ if depth >= DEPTH || !self.modules.contains_key(module) => None,
            _ => {
                let m = &self.modules[module];
                if m.defines.contains(first) {
                    return Some(joined(module, segments));
                }
                if let Some(imported) = m.imports.get(first) {
                    let target = self.absolute(module, imported, depth + 1)?;
                    return Some(joined(&target, &segments[1..]));
                }
                m.globs.iter().find_map(|glob| {
                    let from = self.absolute(module, glob, depth + 1)?;
                    (self.modules.contains_key(&from) && self.has(&from, first))
                        .then(|| joined(&from, segments))
                })
            }
        }
    }

    /// The module that defines what the absolute `path` names, and the name taken from
    /// it; `None` when it is defined in another crate.
    fn definer(&self, path: &[String], depth: u8) -> Option<(ModPath, String)> {
        let mut module: ModPath = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let mut deeper = module.clone();
            deeper.push(segment.clone());
            if self.modules.contains_key(&deeper) {
                module = deeper;
                continue;
            }
            let m = &self.modules[&module];
            if m.defines.contains(segment) || depth >= DEPTH {
                return Some((module, segment.clone()));
            }
            if let Some(imported) = m.imports.get(segment) {
                // A re-export: followed to where it is defined, if in this crate.
                let target = self.absolute(&module, imported, depth + 1)?;
                return self.definer(&joined(&target, &path[i + 1..]), depth + 1);
            }
            for glob in &m.globs {
                if let Some(from) = self.absolute(&module, glob, depth + 1)
                    && self.modules.contains_key(&from)
                    && self.has(&from, segment)
                {
                    return self.definer(&joined(&from, &path[i..]), depth + 1);
                }
            }
            // Not found (a macro's output, a `cfg`'d item): the module is the best guess.
            return Some((module, segment.clone()));
        }
        let name = module.last().cloned().unwrap_or_else(|| "crate".to_owned());
        Some((module, name))
    }
}
