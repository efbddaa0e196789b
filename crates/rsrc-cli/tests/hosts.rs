//! `rsrc config HOST`: each host's snippet names this program and every source by an
//! absolute path, and the command it describes really serves. And what an installed
//! `rsrc` tells of itself: its version and commit, shell completions, manual pages.

use std::path::Path;
use std::process::Output;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::Value;
use tokio::process::Command;

/// `rsrc config ARGS`, run in `cwd`.
fn config_command(cwd: &Path, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"));
    command.arg("config").args(args).current_dir(cwd);
    command
}

fn config(cwd: &Path, args: &[&str]) -> Output {
    config_command(cwd, args).output().unwrap()
}

fn program() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_rsrc"))
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// A directory holding `docs/` and `notes/`, canonical.
fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/a.md"), "# A\n").unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root.to_str().unwrap().to_owned())
}

#[test]
fn every_host_gets_its_snippet_with_absolute_paths() {
    let (dir, root) = workspace();
    let expected_args = vec![
        "serve".to_owned(),
        "--tools".to_owned(),
        format!("{root}/docs"),
        format!("n={root}/notes"),
        format!("sqlite:{root}/shop.db"),
        "postgres://reader@localhost/shop".to_owned(),
    ];
    let sources = [
        "docs",
        "n=notes",
        "sqlite:shop.db",
        "postgres://reader@localhost/shop",
    ];
    for (host, key) in [
        ("claude-desktop", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
    ] {
        let out = config(dir.path(), &[&[host][..], &sources[..]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
        let entry = &snippet[key]["rsrc"];
        assert_eq!(entry["command"], program(), "{host}");
        assert_eq!(entry["args"], serde_json::json!(expected_args), "{host}");
        assert_eq!(entry["type"] == "stdio", host == "vscode");
        assert!(!out.stderr.is_empty(), "where the snippet goes is said");
    }
    let out = config(dir.path(), &[&["claude-code"][..], &sources[..]].concat());
    let line = String::from_utf8(out.stdout).unwrap();
    let words = shlex::split(line.trim()).unwrap();
    let mut expected = vec!["claude", "mcp", "add", "rsrc", "--"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    expected.push(program());
    expected.extend(expected_args);
    assert_eq!(words, expected);
}

#[test]
fn tools_can_be_left_out_and_the_server_renamed() {
    let (dir, root) = workspace();
    let out = config(
        dir.path(),
        &["cursor", "--no-tools", "--name", "notes", "notes"],
    );
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        snippet["mcpServers"]["notes"]["args"],
        serde_json::json!(["serve", format!("{root}/notes")])
    );
}

#[test]
fn a_source_that_cannot_be_served_is_refused() {
    let (dir, _) = workspace();
    let out = config(dir.path(), &["vscode", "missing-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing-dir: not a directory"));
    let unknown = config(dir.path(), &["emacs"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[tokio::test]
async fn the_configured_command_serves_from_anywhere() {
    let (dir, _) = workspace();
    let out = config(dir.path(), &["vscode", "docs"]);
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = &snippet["servers"]["rsrc"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // Launched the way a host would: from another directory.
    let mut child = Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .current_dir("/")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut peer = Peer::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    peer.begin(ProtocolVersion::V2025_11_25).await;
    let read = peer
        .call("resources/read", serde_json::json!({"uri": "file:///a.md"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "# A\n", "{read}");
}

/// A directory holding an executable `uvx` and `npx` (never run), to be the whole PATH.
fn launchers() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    for name in ["uvx", "npx"] {
        let path = dir.path().join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[test]
fn uvx_and_npx_entries_name_the_launcher_absolutely_and_pin_this_version() {
    let (dir, root) = workspace();
    let bin = launchers();
    let bin_dir = std::fs::canonicalize(bin.path()).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    for (via, expected) in [
        (
            "uvx",
            vec![
                "--from".to_owned(),
                format!("rsrc=={version}"),
                "rsrc".to_owned(),
            ],
        ),
        ("npx", vec!["-y".to_owned(), format!("rsrc@{version}")]),
    ] {
        let out = config_command(dir.path(), &["cursor", "--via", via, "docs"])
            .env("PATH", bin.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
        let entry = &snippet["mcpServers"]["rsrc"];
        assert_eq!(entry["command"], bin_dir.join(via).to_str().unwrap());
        let mut want = expected;
        want.extend([
            "serve".to_owned(),
            "--tools".to_owned(),
            format!("{root}/docs"),
        ]);
        assert_eq!(entry["args"], serde_json::json!(want), "{via}");
    }
    // A package given by a relative path is named absolutely.
    std::fs::write(dir.path().join("rsrc.whl"), "").unwrap();
    let out = config_command(
        dir.path(),
        &["vscode", "--via", "uvx", "--package", "rsrc.whl"],
    )
    .env("PATH", bin.path())
    .output()
    .unwrap();
    let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        snippet["servers"]["rsrc"]["args"][1],
        format!("{root}/rsrc.whl")
    );
}

#[test]
fn a_launcher_missing_from_path_or_a_stray_package_is_refused_with_a_reason() {
    let (dir, _) = workspace();
    let empty = tempfile::tempdir().unwrap();
    for (via, needle) in [("uvx", "uvx is not on PATH"), ("npx", "npx is not on PATH")] {
        let out = config_command(dir.path(), &["claude-desktop", "--via", via, "docs"])
            .env("PATH", empty.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(needle));
    }
    let out = config(dir.path(), &["cursor", "--package", "rsrc==1", "docs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--package goes with"));
}

fn rsrc(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_version_names_the_package_and_the_source_commit() {
    let out = rsrc(&["--version"]);
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let (name, rest) = line.trim_end().split_once(' ').unwrap();
    assert_eq!(name, "rsrc");
    let (version, commit) = rest.split_once(' ').unwrap();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let commit = commit.strip_prefix('(').and_then(|c| c.strip_suffix(')'));
    let commit = commit.unwrap_or_else(|| panic!("no commit in {line:?}"));
    // Built from this repository: HEAD's abbreviated hash (or `unknown` without git).
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_owned());
    match (std::env::var("RSRC_COMMIT").ok(), head) {
        (Some(given), _) if !given.is_empty() => assert_eq!(commit, given),
        (_, Some(head)) => assert_eq!(commit, head),
        (_, None) => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn completions_are_generated_for_each_shell_and_know_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = rsrc(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in ["serve", "read", "watch", "config"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    // The bash script is valid bash.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rsrc.bash");
    std::fs::write(&path, rsrc(&["completions", "bash"]).stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let bad = rsrc(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tcsh"));
}

#[test]
fn the_manual_has_a_page_for_each_visible_command() {
    let out = rsrc(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH rsrc 1"), "{page}");
    assert!(page.contains(env!("CARGO_PKG_VERSION")));
    let dir = tempfile::tempdir().unwrap();
    let out = rsrc(&["man", "--out", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    for command in [
        "rsrc",
        "rsrc-serve",
        "rsrc-ls",
        "rsrc-read",
        "rsrc-ui",
        "rsrc-config",
    ] {
        let name = format!("{command}.1");
        assert!(pages.contains(&name), "no {name} in {pages:?}");
        let text = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert!(text.contains(&format!(".TH {command} 1")), "{name}");
    }
    // The hidden converter has no page.
    assert!(pages.iter().all(|p| !p.contains("convert")), "{pages:?}");
    let serve = std::fs::read_to_string(dir.path().join("rsrc-serve.1")).unwrap();
    assert!(serve.contains("admin"), "the serve page lists its options");
}
