//! Human-readable output of the inspection commands: tables, trees and key/value blocks.
//!
//! Invariants: pure functions of their input (no terminal probing, no clock), so that the
//! output can be snapshot-tested; machine output (`--json`) goes through [`json_safe`]
//! only. Every string that came from a server passes through [`clean`] before it is
//! printed, so a server cannot send the terminal escape sequences (ANSI, OSC: retitling
//! the window, hyperlinks, clipboard writes), control characters or bidirectional
//! overrides that would make its names display as something else.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` would act on a terminal, or reorder or hide text, instead of being shown:
/// C0 controls (line breaks included: a name stays on its line), DEL, C1 controls (U+009B
/// is a one-character CSI) and the bidirectional formatting characters.
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(u32::from(c), 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// `text` with every unsafe character shown as a Rust-style escape (`\u{1b}`).
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    escape_where(text, is_unsafe)
}

/// A document's text for a terminal: like [`clean`], but lines and tabs stay as they are.
pub(crate) fn clean_text(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| is_unsafe(c) && !matches!(c, '\n' | '\t'))
}

fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Serialized JSON with the unsafe characters `serde_json` leaves raw (DEL, C1 controls,
/// bidirectional formatting) written as `\uXXXX` escapes: still the same JSON, but inert
/// on a terminal. (They can only occur inside strings, where the escape is valid.)
pub(crate) fn json_safe(json: String) -> String {
    if !json.chars().any(is_unsafe) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        // serde_json escapes C0 controls itself; what is left of them is formatting.
        if is_unsafe(c) && !matches!(c, '\n' | ' ') {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

use rsrc::protocol::{Completion, Resource, ResourceTemplate};

/// `1536` → `1.5 KiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A table with a header row, columns padded to their widest cell; the last column is
/// not padded.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| clean(cell).into_owned()).collect())
        .collect();
    let rows = rows.as_slice();
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<&str> = cells.collect();
        let last = cells.len().saturating_sub(1);
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            text.push_str(cell);
            if i < last {
                text.push_str(&" ".repeat(widths[i] - width(cell) + 2));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

fn display_name(r: &Resource, group: bool) -> String {
    let name = r.title.as_deref().unwrap_or(&r.name);
    if group || r.is_collection() {
        format!("{name}/")
    } else {
        name.to_owned()
    }
}

fn modified(r: &Resource) -> String {
    r.annotations
        .as_ref()
        .and_then(|a| a.last_modified.clone())
        .unwrap_or_default()
}

/// The `ls` table: name (collections end in `/`), URI, type, size, modification time.
pub(crate) fn resources_table(resources: &[Resource]) -> String {
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                display_name(r, false),
                r.uri.clone(),
                r.mime_type.clone().unwrap_or_default(),
                r.size.map(human_size).unwrap_or_default(),
                modified(r),
            ]
        })
        .collect();
    table(&["NAME", "URI", "TYPE", "SIZE", "MODIFIED"], &rows)
}

/// One node of `ls --tree`.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) resource: Resource,
    pub(crate) children: Vec<Node>,
    /// The collection's children could not be listed (the server does not support it,
    /// or the depth limit was reached).
    pub(crate) unlisted: Option<String>,
    /// Not a resource: a shared URI prefix that groups resources.
    pub(crate) group: bool,
}

impl Node {
    /// A node without children (yet).
    pub(crate) fn leaf(resource: Resource) -> Node {
        Node {
            resource,
            children: Vec::new(),
            unlisted: None,
            group: false,
        }
    }

    /// Keeps the nodes that `keep` accepts, and the collections with such a descendant.
    pub(crate) fn prune(nodes: Vec<Node>, keep: &dyn Fn(&Resource) -> bool) -> Vec<Node> {
        nodes
            .into_iter()
            .filter_map(|mut n| {
                n.children = Node::prune(std::mem::take(&mut n.children), keep);
                (keep(&n.resource) || !n.children.is_empty()).then_some(n)
            })
            .collect()
    }

    /// The node as JSON: the resource's members, and `children` when it has any.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut value = if self.group {
            serde_json::json!({"uri": self.resource.uri, "name": self.resource.name, "group": true})
        } else {
            serde_json::to_value(&self.resource).unwrap_or_default()
        };
        if let Some(obj) = value.as_object_mut() {
            if !self.children.is_empty() {
                let children = self.children.iter().map(Node::to_json).collect();
                obj.insert("children".into(), serde_json::Value::Array(children));
            }
            if let Some(why) = &self.unlisted {
                obj.insert("childrenNotListed".into(), why.clone().into());
            }
        }
        value
    }
}

/// `ls --tree`: names with box-drawing branches, and each entry's type and size.
pub(crate) fn tree(nodes: &[Node]) -> String {
    fn walk(out: &mut String, nodes: &[Node], prefix: &str) {
        for (i, n) in nodes.iter().enumerate() {
            let last = i + 1 == nodes.len();
            let branch = if last { "└── " } else { "├── " };
            let mut details = Vec::new();
            if let Some(m) = n.resource.mime_type.as_deref()
                && !n.resource.is_collection()
            {
                details.push(m.to_owned());
            }
            if let Some(s) = n.resource.size {
                details.push(human_size(s));
            }
            if let Some(why) = &n.unlisted {
                details.push(why.clone());
            }
            let details: Vec<String> = details.iter().map(|d| clean(d).into_owned()).collect();
            let details = if details.is_empty() {
                String::new()
            } else {
                format!("  ({})", details.join(", "))
            };
            let _ = writeln!(
                out,
                "{prefix}{branch}{}{details}",
                clean(&display_name(&n.resource, n.group))
            );
            let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
            walk(out, &n.children, &deeper);
        }
    }
    let mut out = String::new();
    walk(&mut out, nodes, "");
    out
}

/// `stat`: one line per known field.
pub(crate) fn resource_details(r: &Resource) -> String {
    let mut rows: Vec<(&str, String)> = vec![("uri", r.uri.clone()), ("name", r.name.clone())];
    if let Some(t) = &r.title {
        rows.push(("title", t.clone()));
    }
    if let Some(d) = &r.description {
        rows.push(("description", d.clone()));
    }
    if let Some(k) = r.kind() {
        rows.push((
            "kind",
            match k {
                rsrc::protocol::resources::ResourceKind::Collection => "collection".into(),
                rsrc::protocol::resources::ResourceKind::Document => "document".into(),
            },
        ));
    }
    if let Some(m) = &r.mime_type {
        rows.push(("type", m.clone()));
    }
    if let Some(s) = r.size {
        rows.push(("size", format!("{} ({s} bytes)", human_size(s))));
    }
    if let Some(a) = &r.annotations {
        if let Some(m) = &a.last_modified {
            rows.push(("modified", m.clone()));
        }
        if let Some(aud) = &a.audience {
            let who: Vec<String> = aud
                .iter()
                .map(|r| {
                    serde_json::to_value(r)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                })
                .collect();
            rows.push(("audience", who.join(", ")));
        }
        if let Some(p) = a.priority {
            rows.push(("priority", format!("{p}")));
        }
    }
    if let Some(icons) = &r.icons {
        rows.push(("icons", icons.len().to_string()));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in rows {
        let _ = writeln!(out, "{k:width$}  {}", clean(&v));
    }
    out
}

/// The `templates` table.
pub(crate) fn templates_table(templates: &[ResourceTemplate]) -> String {
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                t.title.clone().unwrap_or_else(|| t.name.clone()),
                t.uri_template.clone(),
                t.mime_type.clone().unwrap_or_default(),
                t.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table(&["NAME", "TEMPLATE", "TYPE", "DESCRIPTION"], &rows)
}

/// `complete`: one value per line, then how many more there are when the server says.
pub(crate) fn completion(c: &Completion) -> (String, Option<String>) {
    let mut out = String::new();
    for v in &c.values {
        out.push_str(&clean(v));
        out.push('\n');
    }
    let more = match (c.total, c.has_more) {
        (Some(total), _) if total > c.values.len() as u64 => {
            Some(format!("{} of {total} values shown", c.values.len()))
        }
        (_, Some(true)) => Some(format!(
            "{} values shown; the server has more",
            c.values.len()
        )),
        _ => None,
    };
    (out, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_strings_cannot_drive_the_terminal() {
        let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2Jname\u{9b}31m\u{202e}txt.exe\nfake row";
        let r = Resource::new("x:///a", evil)
            .with_description(evil)
            .with_mime_type(evil);
        for out in [
            resources_table(std::slice::from_ref(&r)),
            resource_details(&r),
            tree(&[Node::leaf(r.clone())]),
            completion(&Completion::from_matches(vec![evil.to_owned()])).0,
        ] {
            assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
            assert!(!out.contains('\u{202e}'), "{out:?}");
            assert!(out.contains("\\u{1b}]0;pwned\\u{7}"), "{out:?}");
            assert!(
                !out.contains("\nfake row"),
                "a name stays on its line: {out:?}"
            );
        }
        let json = json_safe(serde_json::to_string(&serde_json::json!({"name": evil})).unwrap());
        assert!(
            !json.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{json}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&json).unwrap()["name"],
            evil
        );
        assert_eq!(clean_text("a\n\tb\u{1b}c"), "a\n\tb\\u{1b}c");
    }
    use rsrc::protocol::Annotations;

    fn sample() -> Vec<Resource> {
        vec![
            Resource::new("file:///docs", "docs")
                .with_mime_type("inode/directory")
                .collection(),
            Resource::new("file:///docs/guide.md", "guide.md")
                .with_mime_type("text/markdown")
                .with_size(1536)
                .with_last_modified("2026-11-01T10:00:00Z")
                .document(),
            Resource::new("file:///logo.png", "logo.png")
                .with_title("The logo")
                .with_mime_type("image/png")
                .with_size(12),
        ]
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(10 * 1024 * 1024), "10.0 MiB");
    }

    #[test]
    fn the_ls_table() {
        insta::assert_snapshot!(resources_table(&sample()));
    }

    #[test]
    fn the_ls_tree() {
        let r = sample();
        let mut docs = Node::leaf(r[0].clone());
        docs.children = vec![Node::leaf(r[1].clone())];
        let mut deep = Node::leaf(Resource::new("file:///deep", "deep").collection());
        deep.unlisted = Some("children not listed".into());
        let mut group = Node::leaf(Resource::new("file:///misc", "misc"));
        group.group = true;
        group.children = vec![Node::leaf(r[2].clone())];
        let nodes = vec![docs, deep, group];
        insta::assert_snapshot!(tree(&nodes));
    }

    #[test]
    fn the_stat_block() {
        let mut r = sample()[1].clone();
        r.title = Some("The guide".into());
        r.description = Some("How to use it".into());
        r.annotations = Some(Annotations {
            priority: Some(0.8),
            ..r.annotations.clone().unwrap_or_default()
        });
        insta::assert_snapshot!(resource_details(&r));
    }

    #[test]
    fn the_templates_table_and_completions() {
        let t = vec![
            ResourceTemplate::new("file:///{+path}", "files")
                .with_title("Files")
                .with_description("Any file by its path"),
            ResourceTemplate::new("db://{table}/{id}", "rows").with_mime_type("application/json"),
        ];
        insta::assert_snapshot!(templates_table(&t));
        let c = Completion {
            values: vec!["alpha".into(), "alps".into()],
            total: Some(7),
            has_more: Some(true),
        };
        let (values, more) = completion(&c);
        assert_eq!(values, "alpha\nalps\n");
        assert_eq!(more.as_deref(), Some("2 of 7 values shown"));
    }
}
