//! The client commands (`rsrc ls / read / stat / templates / complete / watch`) run as
//! the real binary against `rsrc serve`, over stdio (the server command after `--`) and
//! Streamable HTTP, in both eras; their human output is snapshot-tested.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime};

use tokio::process::Command;

/// A served tree (`site` in a temporary directory) with fixed names, contents and
/// modification times, so output is stable.
struct Tree {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Tree {
    fn path(&self) -> &Path {
        &self.root
    }
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = &dir.path().join("site");
    std::fs::create_dir_all(root.join("docs/deep")).unwrap();
    std::fs::create_dir_all(root.join("images")).unwrap();
    let files: [(&str, Vec<u8>); 5] = [
        ("README.md", b"# Sample\n\nRead me first.\n".to_vec()),
        ("docs/guide.md", b"A guide.\n".to_vec()),
        ("docs/deep/notes.txt", b"deep notes\n".to_vec()),
        (
            "docs/report.pdf",
            rsrc_testkit::fixtures::pdf("Quarterly Report"),
        ),
        (
            "images/logo.png",
            [&b"\x89PNG\r\n\x1a\n"[..], &[0u8, 1, 2, 255, 254, 0, 7][..]].concat(),
        ),
    ];
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000);
    for (path, bytes) in files {
        let p = root.join(path);
        std::fs::write(&p, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    Tree {
        root: root.clone(),
        _dir: dir,
    }
}

/// Where a command finds its server.
#[derive(Clone)]
enum Target {
    /// `-- rsrc serve DIR`
    Stdio(String),
    /// A Streamable HTTP URL.
    Http(String),
}

impl Target {
    fn label(&self) -> &'static str {
        match self {
            Target::Stdio(_) => "stdio",
            Target::Http(_) => "http",
        }
    }
}

/// `rsrc ARGS…` against `target`, the URL first or the server command last.
async fn rsrc(target: &Target, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    let (first, rest) = args.split_first().expect("a command");
    command.arg(first);
    match target {
        Target::Http(url) => {
            command.arg(url).args(rest);
        }
        Target::Stdio(dir) => {
            command
                .args(rest)
                .args(["--", env!("CARGO_BIN_EXE_rsrc"), "serve", dir.as_str()]);
        }
    }
    tokio::time::timeout(
        Duration::from_secs(60),
        command.stdin(Stdio::null()).kill_on_drop(true).output(),
    )
    .await
    .expect("the command finishes")
    .expect("the command runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_ok(o: &Output) {
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(o));
}

/// Both transports against the same tree: (stdio, http), keeping the HTTP server alive.
async fn targets(dir: &Path) -> (Vec<Target>, tokio::process::Child) {
    let dir = dir.to_str().unwrap().to_owned();
    let (child, addr) = common::serve_http(&[&dir]).await;
    (
        vec![
            Target::Stdio(dir),
            Target::Http(format!("http://{addr}/mcp")),
        ],
        child,
    )
}

const ERAS: [&str; 3] = ["2026-07-28", "2025-11-25", "2025-06-18"];

#[tokio::test]
async fn ls_prints_the_same_table_over_both_transports_and_every_era() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut tables = Vec::new();
    for t in &targets {
        for era in ["auto"].iter().chain(&ERAS) {
            let o = rsrc(t, &["ls", "--era", era]).await;
            assert_ok(&o);
            tables.push((t.label(), *era, stdout(&o)));
        }
    }
    for (label, era, table) in &tables {
        assert_eq!(table, &tables[0].2, "{label} {era}");
    }
    insta::assert_snapshot!(tables[0].2);
}

#[tokio::test]
async fn ls_json_filter_and_collection_children() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut children = Vec::new();
    for t in &targets {
        let o = rsrc(t, &["ls", "--json"]).await;
        assert_ok(&o);
        let items: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
        let uris: Vec<&str> = items.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert!(uris.contains(&"file:///docs/guide.md"), "{uris:?}");
        assert!(items.iter().all(|r| r["name"].is_string()));

        // Globs are case-insensitive; a bare word matches anywhere; any may match.
        let o = rsrc(t, &["ls", "--json", "--filter", "*.MD", "--filter", "logo"]).await;
        assert_ok(&o);
        let items: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
        let mut uris: Vec<&str> = items.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        uris.sort_unstable();
        assert_eq!(
            uris,
            [
                "file:///README.md",
                "file:///docs/guide.md",
                "file:///images/logo.png"
            ],
            "{}",
            t.label()
        );

        let o = rsrc(t, &["ls", "--json", "--uri", "file:///docs"]).await;
        assert_ok(&o);
        children.push(serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap());
    }
    assert_eq!(children[0], children[1], "stdio and http");
    // The directory's modification time is when the test made it (the files' are fixed).
    assert_eq!(children[0][0]["name"], "deep");
    insta::assert_json_snapshot!("ls_json_children_of_docs", children[0], {
        "[0].annotations.lastModified" => "[mtime]",
    });
}

#[tokio::test]
async fn ls_tree_nests_the_listing_and_walks_collections() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut trees = Vec::new();
    for t in &targets {
        let o = rsrc(t, &["ls", "--tree"]).await;
        assert_ok(&o);
        trees.push(stdout(&o));
        // Listing a collection's children walks into its sub-collections.
        let o = rsrc(t, &["ls", "--tree", "--uri", "file:///docs"]).await;
        assert_ok(&o);
        assert_eq!(
            stdout(&o),
            "├── deep/\n│   └── notes.txt  (text/plain, 11 B)\n├── guide.md  (text/markdown, 9 B)\n└── report.pdf  (application/pdf, 591 B)\n",
            "{}",
            t.label()
        );
        // --depth stops the walk and says so.
        let o = rsrc(
            t,
            &["ls", "--tree", "--depth", "0", "--uri", "file:///docs"],
        )
        .await;
        assert_ok(&o);
        assert!(stdout(&o).contains("deep/  (depth limit)"));
        let o = rsrc(t, &["ls", "--tree", "--json", "--uri", "file:///docs"]).await;
        assert_ok(&o);
        let nodes: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            nodes[0]["children"][0]["uri"],
            "file:///docs/deep/notes.txt"
        );
    }
    assert_eq!(trees[0], trees[1]);
    insta::assert_snapshot!(trees[0]);
}

#[tokio::test]
async fn read_prints_text_writes_blobs_and_picks_format_alternatives() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut reads = Vec::new();
    for t in &targets {
        for era in ERAS {
            let o = rsrc(t, &["read", "--era", era, "file:///README.md"]).await;
            assert_ok(&o);
            assert_eq!(
                stdout(&o),
                "# Sample\n\nRead me first.\n",
                "{} {era}",
                t.label()
            );
        }
        // A blob is written as its bytes (stdout here is a pipe, not a terminal).
        let o = rsrc(t, &["read", "file:///images/logo.png"]).await;
        assert_ok(&o);
        assert_eq!(
            o.stdout,
            std::fs::read(dir.path().join("images/logo.png")).unwrap()
        );
        let out = dir.path().join(format!("out-{}.png", t.label()));
        let o = rsrc(
            t,
            &[
                "read",
                "-o",
                out.to_str().unwrap(),
                "file:///images/logo.png",
            ],
        )
        .await;
        assert_ok(&o);
        assert!(o.stdout.is_empty());
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(dir.path().join("images/logo.png")).unwrap()
        );
        // The PDF's text alternative, by MIME type or pattern.
        for accept in ["text/plain", "text/*"] {
            let o = rsrc(t, &["read", "--accept", accept, "file:///docs/report.pdf"]).await;
            assert_ok(&o);
            assert!(stdout(&o).contains("Quarterly Report"), "{}", stdout(&o));
        }
        let o = rsrc(
            t,
            &["read", "--accept", "text/html", "file:///docs/report.pdf"],
        )
        .await;
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("offers application/pdf, text/plain"),
            "{}",
            stderr(&o)
        );
        // --json shows every entry.
        let o = rsrc(t, &["read", "--json", "file:///docs/report.pdf"]).await;
        assert_ok(&o);
        reads.push(serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap());
        // A collection's read lists what it returned.
        let o = rsrc(t, &["read", "file:///docs/deep"]).await;
        assert_ok(&o);
        assert!(
            stdout(&o).contains("file:///docs/deep/notes.txt"),
            "{}",
            stdout(&o)
        );
    }
    assert_eq!(reads[0], reads[1], "stdio and http");
    let pdf = std::fs::read(dir.path().join("docs/report.pdf")).unwrap();
    insta::assert_json_snapshot!("read_json_pdf_with_its_text", reads[0], {
        "._meta[\"io.modelcontextprotocol/serverInfo\"].version" => "[version]",
        // The PDF's bytes, checked by length rather than spelled out.
        ".contents[0].blob" => insta::dynamic_redaction(move |value, _| {
            let blob = value.as_str().expect("a base64 string");
            assert_eq!(blob.len(), pdf.len().div_ceil(3) * 4, "the whole PDF");
            "[the PDF, base64]"
        }),
    });
}

#[tokio::test]
async fn stat_shows_metadata_as_a_block_or_json() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut blocks = Vec::new();
    let mut collections = Vec::new();
    for t in &targets {
        for era in ERAS {
            let o = rsrc(t, &["stat", "--era", era, "file:///docs/guide.md"]).await;
            assert_ok(&o);
            blocks.push(stdout(&o));
        }
        let o = rsrc(t, &["stat", "--json", "file:///docs"]).await;
        assert_ok(&o);
        collections.push(serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap());
    }
    assert!(blocks.iter().all(|b| b == &blocks[0]));
    insta::assert_snapshot!(blocks[0]);
    assert_eq!(collections[0], collections[1], "stdio and http");
    // A directory's modification time is when the test made it.
    insta::assert_json_snapshot!("stat_json_of_a_collection", collections[0], {
        ".annotations.lastModified" => "[mtime]",
    });
}

#[tokio::test]
async fn templates_and_completion() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let mut tables = Vec::new();
    let mut lists = Vec::new();
    for t in &targets {
        let o = rsrc(t, &["templates"]).await;
        assert_ok(&o);
        tables.push(stdout(&o));
        let o = rsrc(t, &["templates", "--json"]).await;
        assert_ok(&o);
        lists.push(serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap());
        for era in ERAS {
            let o = rsrc(
                t,
                &["complete", "--era", era, "file:///{+path}", "path", "do"],
            )
            .await;
            assert_ok(&o);
            assert_eq!(stdout(&o), "docs/\n", "{} {era}", t.label());
            let o = rsrc(t, &["complete", "file:///{+path}", "path", "docs/"]).await;
            assert_ok(&o);
            assert_eq!(
                stdout(&o),
                "docs/deep/\ndocs/guide.md\ndocs/report.pdf\n",
                "{}",
                t.label()
            );
        }
        let o = rsrc(t, &["complete", "--json", "file:///{+path}", "path", "im"]).await;
        assert_ok(&o);
        let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(c["values"], serde_json::json!(["images/"]));
    }
    assert_eq!(tables[0], tables[1]);
    insta::assert_snapshot!(tables[0]);
    assert_eq!(lists[0], lists[1], "stdio and http");
    insta::assert_json_snapshot!("templates_json", lists[0]);
}

/// Runs `rsrc watch --count 1 ARGS` and appends to `file` until the watcher reports the
/// change and exits.
async fn watch_once(t: &Target, args: &[&str], file: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    command.args(["watch", "--count", "1"]);
    match t {
        Target::Http(url) => {
            command.arg(url).args(args);
        }
        Target::Stdio(dir) => {
            command
                .args(args)
                .args(["--", env!("CARGO_BIN_EXE_rsrc"), "serve", dir.as_str()]);
        }
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = child.wait_with_output();
    tokio::pin!(output);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        tokio::select! {
            o = &mut output => return o.unwrap(),
            () = tokio::time::sleep(Duration::from_millis(200)) => {
                assert!(tokio::time::Instant::now() < deadline, "no change reported");
                let mut f = std::fs::File::options().append(true).open(file).unwrap();
                std::io::Write::write_all(&mut f, b"more\n").unwrap();
            }
        }
    }
}

#[tokio::test]
async fn watch_reports_a_change_in_both_eras_over_both_transports() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    let file = dir.path().join("docs/guide.md");
    for t in &targets {
        for era in ["2026-07-28", "2025-11-25"] {
            let o = watch_once(t, &["--era", era, "--json", "file:///docs/guide.md"], &file).await;
            assert_ok(&o);
            let line: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            insta::assert_json_snapshot!("watch_json_line", line, {
                ".time" => insta::dynamic_redaction(|value, _| {
                    let time = value.as_str().expect("a time");
                    assert!(humantime::parse_rfc3339(time).is_ok(), "RFC 3339: {time}");
                    "[time]"
                }),
            });
        }
        let o = watch_once(t, &["file:///docs/guide.md"], &file).await;
        assert_ok(&o);
        assert!(
            stdout(&o)
                .trim_end()
                .ends_with("updated       file:///docs/guide.md"),
            "{}",
            stdout(&o)
        );
    }
}

#[tokio::test]
async fn exit_codes_tell_server_errors_from_usage_and_connection_failures() {
    let dir = tree();
    let (targets, _server) = targets(dir.path()).await;
    for t in &targets {
        let o = rsrc(t, &["read", "file:///missing.txt"]).await;
        assert_eq!(o.status.code(), Some(1), "{}", t.label());
        assert!(
            stderr(&o).contains("server error -32602: Resource not found"),
            "{}",
            stderr(&o)
        );
        let o = rsrc(t, &["stat", "file:///../etc/passwd"]).await;
        assert_eq!(o.status.code(), Some(1));
        let o = rsrc(t, &["watch", "file:///missing.txt"]).await;
        assert_eq!(o.status.code(), Some(1));
        // Wrong arity, bad options.
        let o = rsrc(t, &["read"]).await;
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("expected <URI>"), "{}", stderr(&o));
        let o = rsrc(t, &["ls", "--era", "1999-01-01"]).await;
        assert_eq!(o.status.code(), Some(2));
    }
    let bin = env!("CARGO_BIN_EXE_rsrc");
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    // No server named.
    let o = run(&["ls"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("name the server"));
    // Nothing listening.
    let o = run(&["ls", "--timeout", "5s", "http://127.0.0.1:9/mcp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot connect to http://127.0.0.1:9/mcp"));
    // A command that is not an MCP server.
    let o = run(&["ls", "--timeout", "2s", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["ls", "--", "/nonexistent/server"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot start"), "{}", stderr(&o));
}

#[test]
fn a_uri_given_after_the_stdio_command_is_shown_where_it_goes() {
    let bin = env!("CARGO_BIN_EXE_rsrc");
    // `rsrc read -- CMD URI`: the URI was read as the server's last argument.
    let o = std::process::Command::new(bin)
        .args(["read", "--", bin, "serve", "docs/", "file:///README.md"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("expected <URI> before `--`"), "{e}");
    assert!(
        e.contains(&format!("rsrc read file:///README.md -- {bin} serve docs/")),
        "the hint shows the command with the URI moved: {e}"
    );
}

#[tokio::test]
async fn headers_carry_a_bearer_token() {
    let dir = tree();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret-s3cret-s3cret-s3cret-s3cret\n").unwrap();
    // A secret file must be private to its owner (and a token at least 32 bytes).
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (_server, addr) = common::serve_http(&[
        dir.path().to_str().unwrap(),
        "--bearer-token-file",
        token.to_str().unwrap(),
    ])
    .await;
    let url = Target::Http(format!("http://{addr}/mcp"));
    let o = rsrc(&url, &["ls"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("authentication required"),
        "{}",
        stderr(&o)
    );
    let o = rsrc(
        &url,
        &[
            "ls",
            "-H",
            "Authorization: Bearer s3cret-s3cret-s3cret-s3cret-s3cret",
        ],
    )
    .await;
    assert_ok(&o);
    assert!(stdout(&o).contains("file:///README.md"));
}

#[tokio::test]
async fn a_name_with_escape_sequences_is_shown_not_obeyed() {
    // A file whose name retitles the terminal window and clears the screen.
    let dir = tempfile::tempdir().unwrap();
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2Jnotes.txt";
    std::fs::write(dir.path().join(evil), "\u{1b}[31mred\u{1b}[0m\n").unwrap();
    let target = Target::Stdio(dir.path().to_str().unwrap().to_owned());
    for args in [&["ls"][..], &["ls", "--tree"], &["ls", "--json"]] {
        let out = rsrc(&target, args).await;
        assert_ok(&out);
        let text = stdout(&out);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{args:?}: {text:?}"
        );
        assert!(
            text.contains("pwned"),
            "{args:?}: the name is still shown: {text:?}"
        );
    }
}

#[test]
fn a_stdio_server_that_exits_during_start_shows_its_last_lines_of_stderr_cleaned() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.sh");
    let mut text = String::from("#!/bin/sh\n");
    for i in 0..30 {
        text.push_str(&format!("echo 'starting, step {i}' >&2\n"));
    }
    text.push_str(
        "printf 'Error: Declaration {\\033]0;pwned\\007 OutsideMount }\\n' >&2\nexit 3\n",
    );
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["ls", "--timeout", "20s", "--"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("the server exited (exit status: 3)"), "{err}");
    assert!(
        err.contains("  | Error: Declaration {\\u{1b}]0;pwned\\u{7} OutsideMount }"),
        "{err}"
    );
    assert!(err.contains("  | starting, step 29"), "{err}");
    assert!(
        !err.contains("step 10\n"),
        "only the last lines are kept: {err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "no raw escape reaches the terminal: {err}"
    );
}
