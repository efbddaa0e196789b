//! How results are shaped for a model: a resource as an item, its `resource_link` block,
//! the compact table of a page, and a page as a tool result.
//!
//! Invariant: names, titles and URIs from served content have their control characters
//! escaped before they reach a table, so they cannot forge rows.

use rsrc_protocol::resources::Resource;
use serde_json::{Map, Value, json};

/// A resource as a tool result item.
pub(super) fn item(r: &Resource) -> Value {
    let mut o = Map::new();
    o.insert("uri".into(), r.uri.clone().into());
    o.insert("name".into(), r.name.clone().into());
    for (key, value) in [
        ("title", &r.title),
        ("description", &r.description),
        ("mimeType", &r.mime_type),
    ] {
        if let Some(v) = value {
            o.insert(key.into(), v.clone().into());
        }
    }
    if let Some(size) = r.size {
        o.insert("size".into(), size.into());
    }
    o.insert("collection".into(), r.is_collection().into());
    Value::Object(o)
}

/// A `resource_link` content block for `item`.
fn link(item: &Value) -> Value {
    let mut link = item.as_object().cloned().unwrap_or_default();
    link.remove("collection");
    link.insert("type".into(), "resource_link".into());
    Value::Object(link)
}

/// The compact table of a page of items, and what to do next.
pub(super) fn table(items: &[Value], next: Option<&str>, empty: &str) -> String {
    if items.is_empty() && next.is_none() {
        return empty.to_owned();
    }
    let mut out = String::new();
    for i in items {
        let kind = if i["collection"] == true {
            "dir"
        } else {
            "doc"
        };
        let mime = i["mimeType"].as_str().unwrap_or("-");
        let size = i["size"].as_u64().map_or("-".to_owned(), |s| s.to_string());
        // Names come from served content: a line break or tab in one must not forge rows.
        let title = i["title"]
            .as_str()
            .or(i["name"].as_str())
            .unwrap_or_default();
        out.push_str(&format!(
            "{kind}\t{}\t{}\t{size}\t{}\n",
            i["uri"].as_str().unwrap_or_default(),
            one_line(mime),
            one_line(title)
        ));
    }
    if let Some(c) = next {
        out.push_str(&format!("More follow: call again with cursor \"{c}\".\n"));
    }
    out
}

/// `text` with its control characters (line breaks, tabs, escapes) shown as `\u{…}`.
pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A page of items as a tool result.
pub(super) fn page_result(
    key: &str,
    items: Vec<Value>,
    next: Option<String>,
    text: String,
) -> Value {
    let mut content = vec![json!({"type": "text", "text": Value::String(text)})];
    if key == "resources" {
        content.extend(items.iter().map(link));
    }
    let mut structured = Value::Object(Map::from_iter([(key.to_owned(), Value::Array(items))]));
    if let Some(c) = next {
        structured["nextCursor"] = c.into();
    }
    json!({"content": content, "structuredContent": structured})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_forge_table_rows() {
        assert_eq!(one_line("a\tb\nc\u{1b}[31m"), "a\\u{9}b\\u{a}c\\u{1b}[31m");
        assert_eq!(one_line("plain é"), "plain é");
    }
}
