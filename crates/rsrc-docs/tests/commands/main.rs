//! The example commands of the docs, run as written: every `cargo run …` of `README.md`,
//! `docs/rmcp.md`, `docs/writing-resources.md` and `docs/providers.md`, and every client
//! command of theirs that talks to a stdio server (`rsrc read URI -- rsrc serve docs/`).
//! Each is found in its document (a test fails if its command is no longer there, and
//! another if the docs gain a command no test runs), then run from the repository root
//! (the client commands from a directory holding a copy of `docs/`) and driven as a
//! reader would: a short exchange over its stdio (the peer validates every message
//! against the official schema), or its output read, then its input closed and its exit
//! awaited, each wait bounded.
//!
//! Two departures from the text, both to keep this cheap: `--release` is left out (the
//! same code, without minutes of optimized build), and a documented `--http` port is
//! replaced by 0 (the address served is read from the example's stderr). Each command's
//! build runs first, alone and without a time bound (`cargo build` with the command's
//! own flags); what it builds is reused by every later run.
//!
//! Also here: no two examples of the workspace share a name, since they would overwrite
//! each other in `target/*/examples/`.

mod examples;
mod found;
mod running;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::{HttpPeer, Peer};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use found::{covers, documented, example_commands, root};
use running::{Running, START, STEP, build, without_release};

/// Every example command of the docs (`found::DOCUMENTS`) a test below runs: as written, or, for one
/// starting with `… `, any command that ends with the rest (the README's pipeline, whose
/// requests may change without changing what the test checks).
const RUN: [&str; 13] = [
    README_SERVE,
    README_PIPELINE,
    RSRC_NOTION,
    RMCP_NOTION,
    RMCP_DIR,
    RMCP_DIR_HTTP,
    "rsrc ls -- rsrc serve docs/",
    "rsrc ls --tree -- rsrc serve docs/",
    "rsrc read file:///rmcp.md -- rsrc serve docs/",
    "rsrc stat file:///rmcp.md -- rsrc serve docs/",
    "rsrc templates -- rsrc serve docs/",
    "rsrc complete 'file:///{+path}' path rm -- rsrc serve docs/",
    RSRC_WATCH,
];

const README_SERVE: &str = "cargo run --release --bin rsrc -- serve";
/// `printf '%s\n' REQUEST… | cargo run …`.
const README_PIPELINE: &str = "… | cargo run -q --release --bin rsrc -- serve";
const RSRC_NOTION: &str = "cargo run -p rsrc --example notion";
const RMCP_NOTION: &str = "cargo run -p rsrc-rmcp --example rmcp-notion";
const RMCP_DIR: &str = "cargo run -p rsrc-rmcp --example rmcp-dir -- docs/";
const RMCP_DIR_HTTP: &str =
    "cargo run -p rsrc-rmcp --example rmcp-dir -- docs/ --http 127.0.0.1:8080";
const RSRC_WATCH: &str = "rsrc watch --count 1 file:///rmcp.md -- rsrc serve docs/";

#[test]
fn every_example_command_of_the_docs_is_run_by_a_test() {
    let missing: Vec<String> = example_commands()
        .into_iter()
        .filter(|(c, _)| !RUN.iter().any(|r| covers(r, c)))
        .map(|(c, docs)| format!("{c}   (in {docs:?})"))
        .collect();
    assert!(
        missing.is_empty(),
        "example commands no test runs (add them to crates/rsrc-docs/tests/commands/):\n{}",
        missing.join("\n")
    );
}

/// A legacy session with `peer`: `initialize`, then `resources/list`'s URIs.
async fn listed_uris(peer: &mut Peer) -> Vec<String> {
    peer.initialize(ProtocolVersion::LATEST_LEGACY).await;
    let list = peer.request("resources/list", json!({})).await;
    list["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("a listing: {list}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of `uri`'s first content, read through `peer`.
async fn read_text(peer: &mut Peer, uri: &str) -> String {
    let read = peer.request("resources/read", json!({"uri": uri})).await;
    read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text read of {uri}: {read}"))
        .to_owned()
}

#[tokio::test]
async fn readme_first_command_serves_the_sample_on_stdio() {
    let command = documented(README_SERVE);
    build(&command);
    let mut running = Running::start(&command, &root());
    let mut peer = running.peer().await;
    let uris = listed_uris(&mut peer).await;
    assert!(uris.iter().any(|u| u == "sample:///README.md"), "{uris:?}");
    assert!(!read_text(&mut peer, "sample:///README.md").await.is_empty());
    peer.close().await;
    running.exits_cleanly().await;
}

#[tokio::test]
async fn readme_pipeline_prints_an_answer_to_each_request() {
    let command = documented(README_PIPELINE);
    build(&command);
    let requests: Vec<Value> = shlex::split(&command)
        .unwrap()
        .iter()
        .filter_map(|w| serde_json::from_str::<Value>(w).ok())
        .filter(|m| m.get("method").is_some())
        .collect();
    assert!(!requests.is_empty(), "{command}");
    // `-q`: nothing says when the program starts, so the bound covers `cargo run`'s start.
    let out = tokio::time::timeout(
        START + STEP,
        Command::new("sh")
            .args(["-c", &without_release(&command)])
            .current_dir(root())
            .env("CARGO_NET_OFFLINE", "true")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the pipeline ends")
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), requests.len(), "{answers:#?}");
    for (request, answer) in requests.iter().zip(&answers) {
        assert_eq!(answer["id"], request["id"], "{answer}");
        assert!(answer.get("result").is_some(), "{answer}");
        let revision = request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .map_or(ProtocolVersion::LATEST_LEGACY, |v| v.parse().unwrap());
        rsrc_testkit::validate(revision, answer, request["method"].as_str()).unwrap();
    }
}

#[tokio::test]
async fn rsrc_notion_example_serves_the_guides_resources_on_stdio() {
    let command = documented(RSRC_NOTION);
    build(&command);
    let mut running = Running::start(&command, &root());
    let mut peer = running.peer().await;
    let uris = listed_uris(&mut peer).await;
    assert!(
        uris.iter().any(|u| u == "notion://workspace/info"),
        "{uris:?}"
    );
    assert!(
        read_text(&mut peer, "notion://workspace/info")
            .await
            .contains("workspace")
    );
    peer.close().await;
    running.exits_cleanly().await;
}

#[tokio::test]
async fn rmcp_notion_example_serves_the_resources_beside_its_tool() {
    let command = documented(RMCP_NOTION);
    build(&command);
    let mut running = Running::start(&command, &root());
    let mut peer = running.peer().await;
    let uris = listed_uris(&mut peer).await;
    assert!(
        uris.iter().any(|u| u == "notion://workspace/info"),
        "{uris:?}"
    );
    let tools = peer.request("tools/list", json!({})).await;
    assert_eq!(
        tools["result"]["tools"][0]["name"], "create_page",
        "{tools}"
    );
    assert!(
        read_text(&mut peer, "notion://workspace/info")
            .await
            .contains("workspace")
    );
    peer.close().await;
    running.exits_cleanly().await;
}

#[tokio::test]
async fn rmcp_dir_example_serves_the_directory_it_is_given_on_stdio() {
    let command = documented(RMCP_DIR);
    build(&command);
    let mut running = Running::start(&command, &root());
    let mut peer = running.peer().await;
    let uris = listed_uris(&mut peer).await;
    assert!(uris.iter().any(|u| u == "file:///rmcp.md"), "{uris:?}");
    let text = std::fs::read_to_string(root().join("docs/rmcp.md")).unwrap();
    assert_eq!(read_text(&mut peer, "file:///rmcp.md").await, text);
    peer.close().await;
    running.exits_cleanly().await;
}

#[tokio::test]
async fn rmcp_dir_example_serves_streamable_http_with_http() {
    let command = documented(RMCP_DIR_HTTP);
    build(&command);
    let any_port = command.replace("127.0.0.1:8080", "127.0.0.1:0");
    let mut running = Running::start(&any_port, &root());
    running.program_started().await;
    let serving = running
        .stderr_line(STEP, |l| l.starts_with("serving http://"))
        .await;
    let addr = serving
        .trim_start_matches("serving http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let mut peer = HttpPeer::new(addr);
    peer.initialize().await;
    let id = peer.next_id();
    let list = peer
        .post(&json!({"jsonrpc": "2.0", "id": id, "method": "resources/list"}))
        .await;
    let uris: Vec<&str> = list.json()["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"file:///rmcp.md"), "{uris:?}");
    // It serves until Ctrl-C; `cargo run` replaced itself with the example.
    running.child.kill().await.unwrap();
}

/// A directory holding a copy of the repository's `docs/`, for the client commands.
fn docs_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), docs.join(entry.file_name())).unwrap();
        }
    }
    dir
}

/// Runs a client command as written from `cwd`, its input closed, and returns its
/// stdout once it succeeded.
async fn client(command: &str, cwd: &Path) -> String {
    let mut running = Running::start(&documented(command), cwd);
    drop(running.child.stdin.take());
    let stdout = running.child.stdout.take().unwrap();
    let read = tokio::spawn(async move {
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut BufReader::new(stdout), &mut out)
            .await
            .unwrap();
        out
    });
    running.exits_cleanly().await;
    read.await.unwrap()
}

#[tokio::test]
async fn readme_client_commands_reach_a_stdio_server_named_after_the_double_dash() {
    build(&documented(README_SERVE)); // the `rsrc` they run, and the one they start
    let dir = docs_copy();
    let cwd = dir.path();
    let text = std::fs::read_to_string(cwd.join("docs/rmcp.md")).unwrap();

    let table = client("rsrc ls -- rsrc serve docs/", cwd).await;
    assert!(table.contains("file:///rmcp.md"), "{table}");
    let tree = client("rsrc ls --tree -- rsrc serve docs/", cwd).await;
    assert!(tree.contains("rmcp.md"), "{tree}");
    let read = client("rsrc read file:///rmcp.md -- rsrc serve docs/", cwd).await;
    assert_eq!(read, text);
    let stat = client("rsrc stat file:///rmcp.md -- rsrc serve docs/", cwd).await;
    assert!(stat.contains("file:///rmcp.md"), "{stat}");
    let templates = client("rsrc templates -- rsrc serve docs/", cwd).await;
    assert!(templates.contains("file:///{+path}"), "{templates}");
    let completed = client(
        "rsrc complete 'file:///{+path}' path rm -- rsrc serve docs/",
        cwd,
    )
    .await;
    assert!(
        completed.lines().any(|l| l.trim() == "rmcp.md"),
        "{completed}"
    );
}

#[tokio::test]
async fn readme_watch_command_reports_a_change_to_the_file() {
    build(&documented(README_SERVE));
    let dir = docs_copy();
    let file = dir.path().join("docs/rmcp.md");
    let mut running = Running::start(&documented(RSRC_WATCH), dir.path());
    drop(running.child.stdin.take());
    let mut stdout = BufReader::new(running.child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(STEP, async {
        // Until the watch has subscribed, a write goes unreported: write until one is.
        let mut writes = tokio::time::interval(Duration::from_millis(200));
        loop {
            tokio::select! {
                line = stdout.next_line() => return line.unwrap(),
                _ = writes.tick() => {
                    let mut f = std::fs::File::options().append(true).open(&file).unwrap();
                    std::io::Write::write_all(&mut f, b"more\n").unwrap();
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no change reported; stderr:\n{}", running.stderr()))
    .unwrap_or_else(|| panic!("the watch ended; stderr:\n{}", running.stderr()));
    assert!(line.ends_with("updated       file:///rmcp.md"), "{line}");
    running.exits_cleanly().await;
}
