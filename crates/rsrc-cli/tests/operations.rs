//! Running `rsrc serve` in production, end to end: the admin listener (`/metrics`,
//! `/healthz`, `/readyz`), metrics whose series do not grow with the URIs read, the drain
//! after SIGTERM, JSON logs that carry the request, and clear errors at start.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::HttpPeer;
use serde_json::{Value, json};
use tokio::process::Child;

mod common;

/// `rsrc serve --http … --admin 127.0.0.1:0 ARGS`: the server, its MCP address and its
/// admin address.
async fn serve_admin(args: &[&str]) -> (Child, SocketAddr, SocketAddr) {
    let mut all = vec!["--admin", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let (child, addrs) =
        common::serve_logging(&all, &[], &["serving Streamable HTTP", "serving /metrics"]).await;
    (child, addrs[0], addrs[1])
}

async fn get(admin: SocketAddr, path: &str) -> (u16, String) {
    let res = reqwest::get(format!("http://{admin}{path}")).await.unwrap();
    let status = res.status().as_u16();
    (status, res.text().await.unwrap())
}

/// Waits until `/readyz` says ready (the watchers are armed), boundedly; its body.
async fn ready(admin: SocketAddr) -> Value {
    common::eventually("never ready", Duration::from_secs(30), || async {
        let (status, text) = get(admin, "/readyz").await;
        assert!(status == 200 || status == 503, "{status}: {text}");
        status == 200
    })
    .await;
    serde_json::from_str(&get(admin, "/readyz").await.1).unwrap()
}

async fn read(addr: SocketAddr, uri: &str) -> Value {
    let mut peer = HttpPeer::new(addr);
    peer.speak(ProtocolVersion::V2026_07_28);
    let msg = peer.modern_request("resources/read", json!({ "uri": uri }));
    peer.post(&msg).await.json().clone()
}

/// The series of an exposition: its sample lines, without their values.
fn series(exposition: &str) -> Vec<String> {
    let mut series: Vec<String> = exposition
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.rsplit_once(' ').map_or(l, |(s, _)| s).to_owned())
        .collect();
    series.sort();
    series
}

/// The value of one sample line, by its series.
fn sample(exposition: &str, wanted: &str) -> Option<f64> {
    exposition
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(s, _)| *s == wanted)
        .and_then(|(_, v)| v.parse().ok())
}

fn files(dir: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i}.txt")), format!("file {i}")).unwrap();
    }
}

/// `promtool check metrics` on `exposition`, where promtool is installed (required on
/// CI, where `scripts/test` installs it).
fn promtool_accepts(exposition: &str) {
    use std::io::Write as _;
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("promtool not found ({e}): the exposition is not checked by it");
            return;
        }
        Err(e) => panic!("promtool, which CI requires: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn the_admin_listener_serves_health_readiness_and_metrics_of_what_was_served() {
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), 3);
    let (mut child, addr, admin) = serve_admin(&[dir.path().to_str().unwrap()]).await;
    assert_eq!(get(admin, "/healthz").await, (200, "ok\n".to_owned()));
    // Bound to loopback, it answers loopback names only (no DNS rebinding).
    let rebound = reqwest::Client::new()
        .get(format!("http://{admin}/metrics"))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status().as_u16(), 403);
    let body = ready(admin).await;
    assert_eq!(body["ready"], true);
    assert_eq!(body["draining"], false);
    assert_eq!(body["mounts"]["file:///"]["ready"], true);
    assert_eq!(body["bus"]["configured"], false);

    for i in 0..3 {
        let res = read(addr, &format!("file:///f{i}.txt")).await;
        assert_eq!(res["result"]["contents"][0]["text"], format!("file {i}"));
    }
    let res = read(addr, "file:///missing.txt").await;
    assert!(res["error"].is_object(), "{res}");

    let (status, text) = get(admin, "/metrics").await;
    assert_eq!(status, 200);
    let ok = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="resources/read",mcp_protocol_version="2026-07-28",network_transport="tcp"}"#;
    assert_eq!(sample(&text, ok), Some(3.0), "{text}");
    let failed = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="resources/read",mcp_protocol_version="2026-07-28",network_transport="tcp",error_type="-32602"}"#;
    assert_eq!(sample(&text, failed), Some(1.0), "{text}");
    let provider = r#"rsrc_provider_duration_seconds_count{mount="file:///",operation="read"}"#;
    assert_eq!(sample(&text, provider), Some(4.0), "{text}");
    assert_eq!(
        sample(&text, r#"rsrc_read_bytes_total{mount="file:///"}"#),
        Some(18.0)
    );
    assert_eq!(sample(&text, "rsrc_ready"), Some(1.0));
    assert_eq!(
        sample(&text, r#"rsrc_mount_ready{mount="file:///"}"#),
        Some(1.0)
    );
    assert!(sample(&text, r#"rsrc_sent_bytes_total{network_transport="tcp"}"#).unwrap() > 0.0);
    // Every metric named comes from the engine's catalogue.
    for name in series(&text) {
        let name = name.split('{').next().unwrap();
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        assert!(
            rsrc::observe::CATALOGUE
                .iter()
                .any(|m| m.name == base || m.name == name),
            "{name} is not in the catalogue"
        );
    }
    promtool_accepts(&text);
    child.kill().await.unwrap();
}

#[tokio::test]
async fn reading_a_thousand_uris_adds_no_series() {
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), 1000);
    let (mut child, addr, admin) = serve_admin(&[dir.path().to_str().unwrap()]).await;
    ready(admin).await;
    let mut peer = HttpPeer::new(addr);
    peer.speak(ProtocolVersion::V2026_07_28);
    let mut read_range = async |range: std::ops::Range<usize>| {
        for i in range {
            let msg = peer.modern_request(
                "resources/read",
                json!({"uri": format!("file:///f{i}.txt")}),
            );
            let res = peer.post(&msg).await.json().clone();
            assert!(res["result"].is_object(), "{res}");
        }
    };
    read_range(0..10).await;
    let before = series(&get(admin, "/metrics").await.1);
    read_range(10..1000).await;
    let text = get(admin, "/metrics").await.1;
    let after = series(&text);
    assert_eq!(before, after, "series appeared as more URIs were read");
    assert!(!text.contains("f999"), "a URI became a label");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn sigterm_makes_it_unready_at_once_while_it_still_serves_then_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), 1);
    let (mut child, addr, admin) = serve_admin(&[
        dir.path().to_str().unwrap(),
        "--drain-delay",
        "3s",
        "--shutdown-grace",
        "1s",
    ])
    .await;
    ready(admin).await;
    common::signal_term(&child);
    let signalled = Instant::now();
    common::eventually(
        "still ready after SIGTERM",
        Duration::from_secs(3),
        || async { get(admin, "/readyz").await.0 == 503 },
    )
    .await;
    let body: Value = serde_json::from_str(&get(admin, "/readyz").await.1).unwrap();
    assert_eq!(body["draining"], true);
    // Draining: requests are still served, and the metrics say so.
    let res = read(addr, "file:///f0.txt").await;
    assert_eq!(res["result"]["contents"][0]["text"], "file 0");
    let text = get(admin, "/metrics").await.1;
    assert_eq!(sample(&text, "rsrc_draining"), Some(1.0));
    assert_eq!(sample(&text, "rsrc_ready"), Some(0.0));
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the server exits after the drain and the grace")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        signalled.elapsed() >= Duration::from_secs(3),
        "it stopped before its drain delay"
    );
}

#[tokio::test]
async fn a_stdio_server_has_an_admin_listener_too() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "-v", "--admin", "127.0.0.1:0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut peer =
        rsrc_testkit::Peer::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let admin = admin_address(child.stderr.take().unwrap()).await;
    let init = peer.initialize(ProtocolVersion::V2025_11_25).await;
    assert_eq!(init["protocolVersion"], "2025-11-25", "{init}");
    let body = ready(admin).await;
    assert_eq!(body["listening"], true);
    let text = get(admin, "/metrics").await.1;
    let init = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="initialize",mcp_protocol_version="2025-11-25",network_transport="pipe"}"#;
    assert_eq!(sample(&text, init), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, r#"rsrc_sessions_open{network_transport="pipe"}"#),
        Some(1.0)
    );
    child.kill().await.unwrap();
}

/// The admin listener's address, from the log on `stderr` (drained afterwards).
async fn admin_address(stderr: tokio::process::ChildStderr) -> SocketAddr {
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let addr = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the server logs");
            if line.contains("serving /metrics")
                && let Some(rest) = line.split("address=").nth(1)
            {
                return rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        }
    })
    .await
    .expect("the admin listener's address is logged");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    addr
}

#[tokio::test]
async fn a_stdio_server_with_an_admin_listener_drains_and_exits_on_sigterm() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args([
            "serve",
            "-v",
            "--admin",
            "127.0.0.1:0",
            "--drain-delay",
            "1s",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Its input stays open (a host that keeps the connection): only the signal ends it.
    let _input = child.stdin.take();
    let admin = admin_address(child.stderr.take().unwrap()).await;
    ready(admin).await;
    common::signal_term(&child);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the stdio server exits after its drain")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_bad_admin_address_or_one_in_use_fails_at_start_naming_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    for (admin, needle) in [
        (taken.as_str(), "cannot bind the admin listener to"),
        (
            "0.0.0.0:0",
            "refusing to bind the admin listener to 0.0.0.0:0",
        ),
        ("nowhere:x", "--admin"),
    ] {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
            .args(["serve", "--admin", admin])
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{admin}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{admin}: {err}");
    }
}

#[tokio::test]
async fn json_logs_carry_the_method_id_and_trace_of_the_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".hidden"), "secret").unwrap();
    std::fs::write(dir.path().join("served.txt"), "content-never-logged").unwrap();
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "-vv",
        ])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(server.stderr.take().unwrap()).lines();
    let mut addr: Option<SocketAddr> = None;
    while addr.is_none() {
        let line = lines.next_line().await.unwrap().expect("the server logs");
        let v: Value = serde_json::from_str(&line).expect("every log line is JSON");
        if v["fields"]["message"] == "serving Streamable HTTP" {
            addr = v["fields"]["address"].as_str().unwrap().parse().ok();
        }
    }
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut peer = HttpPeer::new(addr.unwrap());
    peer.speak(ProtocolVersion::V2026_07_28);
    peer.always("traceparent", &format!("00-{trace}-00f067aa0ba902b7-01"));
    let msg = peer.modern_request("resources/read", json!({"uri": "file:///.hidden"}));
    let res = peer.post(&msg).await.json().clone();
    assert!(
        res["error"].is_object(),
        "a hidden file is not served: {res}"
    );
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the server logs");
            let v: Value = serde_json::from_str(&line).expect("every log line is JSON");
            if v["span"]["mcp.method.name"] == "resources/read" {
                return v;
            }
        }
    })
    .await
    .expect("a log line inside the request");
    assert_eq!(found["span"]["trace_id"], trace, "{found}");
    assert_eq!(found["span"]["mcp.protocol.version"], "2026-07-28");
    assert!(!found["span"]["jsonrpc.request.id"].is_null(), "{found}");
    // A read's content never reaches the log: read one, then stop the server and look
    // at every line it wrote.
    let msg = peer.modern_request("resources/read", json!({"uri": "file:///served.txt"}));
    let res = peer.post(&msg).await.json().clone();
    assert_eq!(res["result"]["contents"][0]["text"], "content-never-logged");
    common::signal_term(&server);
    while let Some(line) = lines.next_line().await.unwrap() {
        assert!(!line.contains("content-never-logged"), "{line}");
        assert!(!line.contains("secret"), "{line}");
        let _: Value = serde_json::from_str(&line).expect("every log line is JSON");
    }
    server.wait().await.unwrap();
}

#[test]
fn docs_operations_documents_exactly_the_metrics_the_engine_records() {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/operations.md"),
    )
    .unwrap();
    let mut documented: Vec<&str> = docs
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            (w.starts_with("mcp_") || w.starts_with("rsrc_"))
                && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        })
        .collect();
    documented.sort_unstable();
    documented.dedup();
    let mut recorded: Vec<&str> = rsrc::observe::CATALOGUE.iter().map(|m| m.name).collect();
    recorded.sort_unstable();
    assert_eq!(documented, recorded);
}
