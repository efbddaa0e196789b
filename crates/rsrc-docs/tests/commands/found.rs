//! Finding the example commands of the docs: the shell lines of their ```sh blocks
//! (continuation lines joined, comments left out) that build and run something of the
//! workspace or talk to a stdio server, and the `cargo run` commands quoted inline.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The documents whose example commands are run here.
const DOCUMENTS: [&str; 4] = [
    "README.md",
    "docs/rmcp.md",
    "docs/writing-resources.md",
    "docs/providers.md",
];

/// The client commands shown with a stdio server.
const INSPECT: [&str; 6] = ["ls", "read", "stat", "templates", "complete", "watch"];
/// The repository.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A shell line of a ```sh block with its continuation lines joined and its comment left
/// out.
fn logical_lines(block: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in block {
        let line = line.trim();
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head.trim_end());
            current.push(' ');
            continue;
        }
        current.push_str(line);
        out.push(strip_comment(&std::mem::take(&mut current)));
    }
    out.into_iter().filter(|l| !l.is_empty()).collect()
}

/// The line without its `# comment` (a `#` after a space, outside quotes).
fn strip_comment(line: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => {
                return line[..i].trim_end().to_owned();
            }
            _ => {}
        }
        previous = c;
    }
    line.trim_end().to_owned()
}

/// Whether a shell line is an example command: it builds and runs something of the
/// workspace, or it is a client command talking to a stdio server.
fn is_example(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let cargo_run = line.starts_with("cargo run ") || line.contains("| cargo run ");
    let stdio_client = words.len() > 2
        && words[0] == "rsrc"
        && INSPECT.contains(&words[1])
        && words.contains(&"--");
    cargo_run || stdio_client
}

/// The example commands of `text`: its ```sh lines, and the `cargo run … --example` or
/// `--bin` commands quoted inline.
fn example_commands_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut block: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        // Blocks other than ```sh arrive emptied (`sh_blocks_only`).
        match (&mut block, fence) {
            (None, Some(_)) => block = Some(Vec::new()),
            (Some(lines), Some(_)) => {
                let lines = std::mem::take(lines);
                out.extend(logical_lines(&lines).into_iter().filter(|l| is_example(l)));
                block = None;
            }
            (Some(lines), None) => lines.push(line),
            (None, None) => {
                prose.push_str(line);
                prose.push(' ');
            }
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
        if i % 2 == 1
            && span.starts_with("cargo run ")
            && (span.contains("--example ") || span.contains("--bin "))
        {
            out.push(span);
        }
    }
    out
}

/// Every example command of [`DOCUMENTS`], with the documents it is in.
pub(crate) fn example_commands() -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut out: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for doc in DOCUMENTS {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        // Only ```sh blocks are read as shell: other blocks are skipped whole.
        let text = sh_blocks_only(&text);
        for command in example_commands_of(&text) {
            out.entry(command).or_default().insert(doc);
        }
    }
    out
}

/// `text` with every fenced block that is not ```sh emptied (its fences kept), so that
/// a Rust or TOML block never reads as prose.
fn sh_blocks_only(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut inside = false;
    for line in text.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if inside {
                inside = false;
                skipping = false;
            } else {
                inside = true;
                skipping = info.trim() != "sh";
            }
            out.push_str(line);
        } else if !skipping {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Whether `run`, an entry of the list of commands the tests run, stands for the
/// documented `command`: the same text, or, when `run` starts with `… `, a command that
/// ends with the rest.
pub(crate) fn covers(run: &str, command: &str) -> bool {
    run.strip_prefix("… ")
        .map_or(run == command, |tail| command.ends_with(tail))
}

/// The documented command `run` (an entry of that list) stands for; it must still be in
/// the docs.
pub(crate) fn documented(run: &str) -> String {
    let commands = example_commands();
    commands
        .keys()
        .find(|c| covers(run, c))
        .unwrap_or_else(|| {
            panic!(
                "`{run}` is no longer in {DOCUMENTS:?}: update its test in \
                 crates/rsrc-docs/tests/commands/ (the docs' example commands: {:#?})",
                commands.keys().collect::<Vec<_>>()
            )
        })
        .clone()
}

#[test]
fn commands_are_read_from_sh_blocks_and_inline_cargo_runs() {
    let text = "Run `cargo run -p a --example b` or `cargo run --release`.\n\
                ```sh\n\
                cargo run -p x --example y -- DIR   # a comment\n\
                printf '%s\\n' '{\"a\":\"#\"}' \\\n    | cargo run -q --bin z -- serve\n\
                rsrc read file:///x -- rsrc serve d/\n\
                rsrc read http://h/mcp file:///x\n\
                ```\n\
                ```rust\ncargo run -p not --example this\n```\n";
    assert_eq!(
        example_commands_of(&sh_blocks_only(text)),
        [
            "cargo run -p x --example y -- DIR",
            "printf '%s\\n' '{\"a\":\"#\"}' | cargo run -q --bin z -- serve",
            "rsrc read file:///x -- rsrc serve d/",
            "cargo run -p a --example b",
        ]
    );
}
