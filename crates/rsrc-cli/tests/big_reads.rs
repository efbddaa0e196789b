//! Many large reads at once hold about the budget of content in flight, not one copy (or
//! two) per request: 200 concurrent reads of a 32 MiB file, over stdio and over HTTP,
//! with clients that do not read their responses and then go away.
//!
//! The stated bound: the server's peak resident memory stays under the budget (256 MiB
//! by default) plus 256 MiB, for what is being encoded and written, the output buffers
//! and the program itself. Without the budget, 200 such reads held gigabytes.
//!
//! The peak is taken once the server can take no more (see [`saturated`]): its admin
//! listener says the budget is full and reads wait for room, and the kernel says the
//! admitted reads have read their files.

mod common;

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use common::{eventually, serve_logging, status_kib};
use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::HttpPeer;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

const READS: usize = 200;
const SIZE: usize = 32 * 1024 * 1024;
const BOUND_MIB: u64 = 256 + 256;

/// A directory holding `big.txt`: 32 MiB of plain text (the largest file served by
/// default).
fn big_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ \n";
    let mut text = line.repeat(SIZE / line.len());
    text.resize(SIZE, b'.');
    std::fs::write(dir.path().join("big.txt"), text).unwrap();
    dir
}

fn peak_mib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:") / 1024
}

/// The bytes process `pid` has read so far (`rchar` of `/proc/PID/io`): files, and its
/// input.
fn bytes_read(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no rchar in /proc/{pid}/io"))
}

/// A gauge of the server's `/metrics`.
fn gauge(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no {name} in the metrics:\n{metrics}")) as u64
}

/// Waits until the server takes no more: another read would not fit in the budget of
/// content in flight, some reads wait for room, and the server has read as many bytes as
/// the reads holding the budget reserved (their files are in memory). The peak is
/// measured after this.
async fn saturated(admin: SocketAddr, pid: u32) {
    let size = SIZE as u64;
    eventually(
        "the server fills its budget of content in flight",
        Duration::from_secs(120),
        || async move {
            let metrics = reqwest::get(format!("http://{admin}/metrics"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let limit = gauge(&metrics, "rsrc_read_budget_bytes");
            let in_use = gauge(&metrics, "rsrc_read_budget_in_use_bytes");
            let waiting = gauge(&metrics, "rsrc_read_budget_waiting");
            waiting > 0 && limit - in_use < size && bytes_read(pid) >= in_use
        },
    )
    .await;
}

/// The admin listener's address, from the server's log (drained afterwards).
async fn admin_address(stderr: tokio::process::ChildStderr) -> SocketAddr {
    let mut lines = BufReader::new(stderr).lines();
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
async fn many_big_reads_over_stdio_hold_about_the_budget_and_end_with_the_client() {
    let dir = big_tree();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "-v", "--admin", "127.0.0.1:0"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let admin = admin_address(child.stderr.take().unwrap()).await;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let mut input = Vec::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "big-reads", "version": "0"}}});
    for m in [
        init,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        input.extend(serde_json::to_vec(&m).unwrap());
        input.push(b'\n');
    }
    for id in 1..=READS {
        let read = json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
            "params": {"uri": "file:///big.txt"}});
        input.extend(serde_json::to_vec(&read).unwrap());
        input.push(b'\n');
    }
    stdin.write_all(&input).await.unwrap();
    stdin.flush().await.unwrap();

    let mut line = Vec::new();
    stdout.read_until(b'\n', &mut line).await.unwrap();
    assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":0,"result""#));
    // Every read is in flight or queued, and the client reads nothing until the server
    // takes no more.
    saturated(admin, pid).await;
    // Then it reads one whole response, which is served as usual.
    line.clear();
    stdout.read_until(b'\n', &mut line).await.unwrap();
    let first: serde_json::Value = serde_json::from_slice(&line).unwrap();
    let text = first["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), SIZE);
    // The server moves on to the next response, and the room the first one held goes to
    // a waiting read.
    let next = stdout.fill_buf().await.unwrap();
    assert!(
        next.starts_with(br#"{"jsonrpc":"2.0","id":"#),
        "the next response"
    );
    saturated(admin, pid).await;
    let peak = peak_mib(pid);
    eprintln!("stdio: peak {peak} MiB with {READS} reads of 32 MiB");
    assert!(peak < BOUND_MIB, "peak {peak} MiB");

    // The client goes away: what is in flight is cancelled and the server ends.
    drop(stdin);
    drop(stdout);
    tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the server ends once its client is gone")
        .unwrap();
}

#[tokio::test]
async fn many_big_reads_over_http_then_hang_ups_hold_about_the_budget_and_release_it() {
    let dir = big_tree();
    let (server, addrs) = serve_logging(
        &["--admin", "127.0.0.1:0", dir.path().to_str().unwrap()],
        &[],
        &["serving Streamable HTTP", "serving /metrics"],
    )
    .await;
    let (addr, admin) = (addrs[0], addrs[1]);
    let pid = server.id().unwrap();
    let mut peer = HttpPeer::new(addr);
    peer.speak(ProtocolVersion::V2026_07_28);
    let read = peer.modern_request("resources/read", json!({"uri": "file:///big.txt"}));
    let body = serde_json::to_vec(&read).unwrap();
    let mut request = b"POST /mcp HTTP/1.1\r\n".to_vec();
    for (name, value) in peer.headers_for(&read) {
        request.extend(format!("{name}: {value}\r\n").into_bytes());
    }
    request.extend(format!("content-length: {}\r\n\r\n", body.len()).into_bytes());
    request.extend(&body);

    // 200 clients ask at once and read nothing.
    let mut clients = Vec::new();
    for _ in 0..READS {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(&request).await.unwrap();
        clients.push(tcp);
    }
    saturated(admin, pid).await;
    let peak = peak_mib(pid);
    eprintln!("http: peak {peak} MiB with {READS} reads of 32 MiB");
    assert!(peak < BOUND_MIB, "peak {peak} MiB");

    // They hang up. What they held is given back: a new read of the same size is served
    // (it would wait forever behind responses nobody reads if their share were kept).
    drop(clients);
    let fresh = tokio::time::timeout(Duration::from_secs(120), peer.post(&read))
        .await
        .expect("a read after the hang-ups is served");
    assert_eq!(fresh.status, 200);
    let text = fresh.messages[0]["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(text.len(), SIZE);
    let peak = peak_mib(pid);
    assert!(peak < BOUND_MIB, "peak {peak} MiB after the hang-ups");
}
