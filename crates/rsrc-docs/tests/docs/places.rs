//! The "where" columns of the documents' tables: each cell names files (or folders) and,
//! after each, the items it places there, as `` `path` (`item`, `Type::method`) `` or
//! `` `path`, `item` ``. Invariant: an item is checked against the last path written
//! before it in its cell (a path in parentheses after a folder is inside that folder),
//! and an item before any path is not checked.

use super::paths::is_path;

/// Each table cell under a header named `where`, with its line number.
pub(crate) fn where_cells(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut column = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('|') {
            column = None;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        match column {
            None => column = cells.iter().position(|c| c.eq_ignore_ascii_case("where")),
            Some(at) if !cells.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))) => {
                if let Some(cell) = cells.get(at) {
                    out.push((i + 1, (*cell).to_owned()));
                }
            }
            Some(_) => {}
        }
    }
    out
}

/// The items a cell places, each with the path it places it in.
pub(crate) fn placed_items(cell: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // The last path, and the folder a path in parentheses is inside.
    let mut place: Option<String> = None;
    let mut folder: Option<String> = None;
    let mut depth = 0usize;
    for (i, chunk) in cell.split('`').enumerate() {
        if i % 2 == 0 {
            for ch in chunk.chars() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            if depth == 0 {
                folder = None;
            }
            continue;
        }
        if is_path(chunk) {
            let path = match (&folder, depth) {
                (Some(f), 1..) => format!("{f}{chunk}"),
                _ => chunk.to_owned(),
            };
            if path.ends_with('/') && depth == 0 {
                folder = Some(path.clone());
            }
            place = Some(path);
        } else if let (Some(p), Some(item)) = (&place, item_name(chunk)) {
            out.push((p.clone(), item));
        }
    }
    out
}

/// `chunk` as an item's path (`name`, `Type::name`, `name()`), if it is one.
fn item_name(chunk: &str) -> Option<String> {
    let name = chunk.strip_suffix("()").unwrap_or(chunk);
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    (name.split("::").all(ident)).then(|| name.to_owned())
}

/// Whether `source` defines every segment of `item`: as an item (`fn`, `struct`, `enum`,
/// `trait`, `const`, `static`, `type`, `mod`, a macro, or the type of an `impl` here), or
/// as a variant or field.
pub(crate) fn defines(source: &str, item: &str) -> bool {
    item.split("::").all(|name| {
        let keyword = [
            "fn", "struct", "enum", "trait", "const", "static", "type", "mod", "union", "impl",
        ]
        .iter()
        .any(|k| has_words(source, &[k, name]));
        keyword
            || source.contains(&format!("macro_rules! {name}"))
            || source.lines().any(|l| {
                // A variant or a field: `Name,` `Name(…)` `Name {` `name: T`.
                let l = l.trim_start().trim_start_matches("pub ").trim_start();
                l.strip_prefix(name).is_some_and(|rest| {
                    rest.is_empty() || rest.starts_with([',', '(', ' ', '{', ':'])
                })
            })
    })
}

/// Whether `words` occur in `source` one after the other, separated by whitespace.
fn has_words(source: &str, words: &[&str]) -> bool {
    let tokens: Vec<&str> = source
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    tokens.windows(words.len()).any(|w| w == words)
}

#[test]
fn items_are_placed_in_the_last_path_before_them() {
    let cell = "`rsrc/src/server/dispatch/` (`prepare.rs` decoding, `run.rs` running), \
                `gate.rs` (`decide`, `Place::LegacySession`), `x.rs`, `item()`; `-32020`";
    assert_eq!(
        placed_items(cell),
        [
            ("gate.rs".to_owned(), "decide".to_owned()),
            ("gate.rs".to_owned(), "Place::LegacySession".to_owned()),
            ("x.rs".to_owned(), "item".to_owned()),
        ]
    );
}

#[test]
fn a_where_column_is_found_under_its_header() {
    let text = "| rule | where |\n|---|---|\n| a | `a.rs` (`f`) |\n\nafter\n| x |\n";
    assert_eq!(where_cells(text), [(3, "`a.rs` (`f`)".to_owned())]);
}

#[test]
fn definitions_are_recognised_and_mentions_are_not() {
    let source =
        "pub(crate) fn decide() {}\nenum Place {\n    LegacySession,\n}\n// uses other()\n";
    assert!(defines(source, "decide"));
    assert!(defines(source, "Place::LegacySession"));
    assert!(!defines(source, "other"));
}

#[test]
fn a_path_in_parentheses_after_a_folder_is_inside_it() {
    let cell = "`rsrc/src/server/tools/` (`call.rs` the call, `config.rs` `offers`), `x.rs`";
    assert_eq!(
        placed_items(cell),
        [(
            "rsrc/src/server/tools/config.rs".to_owned(),
            "offers".to_owned()
        )]
    );
}
