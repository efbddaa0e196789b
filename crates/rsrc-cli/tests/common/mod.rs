//! Support for the end-to-end tests of the `rsrc` binary.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use rsrc_testkit::Peer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Starts `rsrc ARGS` with a raw-JSON peer on its stdin and stdout (stderr discarded).
pub fn spawn_stdio(args: &[&str]) -> (Child, Peer) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the rsrc binary starts");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, Peer::new(stdout, stdin))
}

/// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Starts `rsrc serve --http 127.0.0.1:0 ARGS` and reads the bound address from its log.
pub async fn serve_http(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "-v", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the rsrc binary starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.split("address=").nth(1) {
                return rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        }
        panic!("the server exited without serving");
    })
    .await
    .expect("the server logged its address");
    // Keep draining the log so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}
