//! The module tree of one build target (a library, a binary, a test, a bench, an
//! example), read with `syn` from its root file through its `mod` declarations: the file
//! of each module, what each module defines and imports, and every path each file
//! writes. Invariant: a module is looked for where rustc looks for it (`foo.rs`,
//! `foo/mod.rs`, `#[path]`, inline `mod foo { … }`), and a file that does not parse or a
//! declared module without its file is an error, never skipped. A module is a test's when
//! its target is a test or a bench, or a `#[cfg(test)]` declaration leads to it.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Item, Lit, Meta, UseTree};

use crate::source::{Sources, dir_of, join};

/// A module's path from its crate's root (empty for the root).
pub(crate) type ModPath = Vec<String>;

/// One module of a target.
#[derive(Debug, Default)]
pub(crate) struct Module {
    /// The file it is written in (an inline module's is its parent's).
    pub(crate) file: String,
    /// The names of the items it defines (its child modules too).
    pub(crate) defines: BTreeSet<String>,
    /// Each name it imports with `use`, and the path imported, as written.
    pub(crate) imports: BTreeMap<String, Vec<String>>,
    /// The paths it imports every public name of (`use path::*`), as written.
    pub(crate) globs: Vec<Vec<String>>,
    /// Whether it is a test's (see the module's docs).
    pub(crate) test: bool,
}

/// A path written in a file, inside `module`.
#[derive(Debug)]
pub(crate) struct Written {
    pub(crate) file: String,
    pub(crate) module: ModPath,
    pub(crate) segments: Vec<String>,
}

/// A target's modules and the paths its files write.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub(crate) modules: BTreeMap<ModPath, Module>,
    pub(crate) written: Vec<Written>,
}

impl Tree {
    /// The tree of the target whose root file is `root`; `test` when it is a test's or a
    /// bench's.
    pub(crate) fn read(sources: &Sources, root: &str, test: bool) -> Result<Tree, Vec<String>> {
        let mut reader = Reader {
            sources,
            tree: Tree::default(),
            errors: Vec::new(),
        };
        reader.file(root, &[], dir_of(root), test);
        if reader.errors.is_empty() {
            Ok(reader.tree)
        } else {
            Err(reader.errors)
        }
    }
}

struct Reader<'s> {
    sources: &'s Sources,
    tree: Tree,
    errors: Vec<String>,
}

impl Reader<'_> {
    /// Reads `path` as module `module`, whose `mod x;` children are under `children`.
    fn file(&mut self, path: &str, module: &[String], children: &str, test: bool) {
        let Some(text) = self.sources.get(path) else {
            self.errors.push(format!("{path}: no such file"));
            return;
        };
        let syntax = match syn::parse_file(text) {
            Ok(f) => f,
            Err(e) => {
                // (rustc tells where: without proc-macro2's span-locations, syn cannot.)
                self.errors.push(format!("{path} does not parse: {e}"));
                return;
            }
        };
        let mut written = Collector {
            file: path,
            module: module.to_vec(),
            out: &mut self.tree.written,
        };
        written.visit_file(&syntax);
        // Outside inline modules, `#[path]` is relative to the file's own directory.
        self.items(path, module, children, dir_of(path), &syntax.items, test);
    }

    /// The items of `module`, written in `file`.
    fn items(
        &mut self,
        file: &str,
        module: &[String],
        children: &str,
        paths: &str,
        items: &[Item],
        test: bool,
    ) {
        let mut this = Module {
            file: file.to_owned(),
            test,
            ..Module::default()
        };
        let mut nested = Vec::new();
        for item in items {
            if let Some(name) = defined_name(item) {
                this.defines.insert(name);
            }
            match item {
                Item::Use(u) if u.leading_colon.is_none() => {
                    let mut leaves = Vec::new();
                    flatten(&u.tree, &mut Vec::new(), &mut leaves);
                    for leaf in leaves {
                        match leaf {
                            Leaf::Name(name, path) if name != "_" => {
                                this.imports.insert(name, path);
                            }
                            Leaf::Name(..) => {}
                            Leaf::Glob(path) => this.globs.push(path),
                        }
                    }
                }
                Item::Mod(m) => nested.push(m),
                _ => {}
            }
        }
        self.tree.modules.insert(module.to_vec(), this);
        for m in nested {
            let name = m.ident.to_string();
            let mut child = module.to_vec();
            child.push(name.clone());
            let attr = path_attr(&m.attrs);
            let test = test || cfg_test(&m.attrs);
            match (&m.content, attr) {
                (Some((_, inner)), attr) => {
                    let dir = join(children, attr.as_deref().unwrap_or(&name));
                    self.items(file, &child, &dir, &dir, inner, test);
                }
                (None, Some(rel)) => {
                    // A file named by `#[path]` owns its directory, like a `mod.rs`.
                    let path = join(paths, &rel);
                    self.file(&path, &child, dir_of(&path), test);
                }
                (None, None) => {
                    let flat = format!("{children}/{name}.rs");
                    let nested = format!("{children}/{name}/mod.rs");
                    if self.sources.get(&flat).is_some() {
                        self.file(&flat, &child, &format!("{children}/{name}"), test);
                    } else if self.sources.get(&nested).is_some() {
                        self.file(&nested, &child, &format!("{children}/{name}"), test);
                    } else {
                        self.errors.push(format!(
                            "{file}: `mod {name};` has neither {flat} nor {nested}"
                        ));
                    }
                }
            }
        }
    }
}

/// The name an item defines in its module's namespace, if any.
fn defined_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::ExternCrate(i) => i.rename.as_ref().map_or(&i.ident, |(_, r)| r),
        Item::Fn(i) => &i.sig.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        Item::Mod(i) => &i.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        Meta::List(l) if l.path.is_ident("cfg") => l.tokens.to_string().trim() == "test",
        _ => false,
    })
}

/// The value of a `#[path = "…"]` attribute.
fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Some(s.value()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

/// One name a `use` item brings in.
enum Leaf {
    /// The local name, and the path it stands for.
    Name(String, Vec<String>),
    /// `path::*`.
    Glob(Vec<String>),
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) if n.ident == "self" => {
            let local = prefix.last().cloned().unwrap_or_default();
            out.push(Leaf::Name(local, prefix.clone()));
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push(Leaf::Name(n.ident.to_string(), path));
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push(Leaf::Name(r.rename.to_string(), path));
        }
        UseTree::Glob(_) => out.push(Leaf::Glob(prefix.clone())),
        UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// Collects every path a file writes: in `use` items (at any depth), in code, types and
/// patterns, and the `crate::`/`super::`/`self::` paths inside macro calls. Visibilities
/// (`pub(super)`) and attributes (docs, `#[path]`) name no dependency and are skipped,
/// and so is a `mod` declaration: a parent declaring a child does not import it.
struct Collector<'a> {
    file: &'a str,
    module: ModPath,
    out: &'a mut Vec<Written>,
}

impl Collector<'_> {
    fn push(&mut self, segments: Vec<String>) {
        if !segments.is_empty() {
            self.out.push(Written {
                file: self.file.to_owned(),
                module: self.module.clone(),
                segments,
            });
        }
    }

    /// `crate::a::b`, `super::x`, `self::y` sequences among `tokens` (not `$crate`).
    fn scan(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.scan(g.stream()),
                TokenTree::Ident(id)
                    if (id == "crate" || id == "super" || id == "self")
                        && !(i > 0
                            && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$')) =>
                {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.push(segments);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            self.module.push(m.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if u.leading_colon.is_some() {
            return;
        }
        let mut leaves = Vec::new();
        flatten(&u.tree, &mut Vec::new(), &mut leaves);
        for leaf in leaves {
            match leaf {
                Leaf::Name(_, path) | Leaf::Glob(path) => self.push(path),
            }
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            self.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.scan(m.tokens.clone());
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_attribute(&mut self, _: &'ast Attribute) {}
}
