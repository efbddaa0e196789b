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
    serve_http_env(args, &[]).await
}

/// [`serve_http`] with environment variables set for the server.
pub async fn serve_http_env(args: &[&str], env: &[(&str, &str)]) -> (Child, SocketAddr) {
    let (child, addrs) = serve_logging(args, env, &["serving Streamable HTTP"]).await;
    (child, addrs[0])
}

/// Starts `rsrc serve --http 127.0.0.1:0 ARGS` and reads from its log the address of
/// each listener whose start-up line contains one of `messages`, in that order.
pub async fn serve_logging(
    args: &[&str],
    env: &[(&str, &str)],
    messages: &[&str],
) -> (Child, Vec<SocketAddr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(["serve", "-v", "--http", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the rsrc binary starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut found: Vec<Option<SocketAddr>> = vec![None; messages.len()];
    tokio::time::timeout(Duration::from_secs(20), async {
        while found.iter().any(Option::is_none) {
            let Some(line) = lines.next_line().await.unwrap() else {
                panic!("the server exited without serving");
            };
            let Some(i) = messages.iter().position(|m| line.contains(m)) else {
                continue;
            };
            if let Some(rest) = line.split("address=").nth(1) {
                found[i] = Some(rest.split_whitespace().next().unwrap().parse().unwrap());
            }
        }
    })
    .await
    .expect("the server logged its addresses");
    // Keep draining the log so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, found.into_iter().map(Option::unwrap).collect())
}

/// Waits until `check` holds, asking again after a short pause (the state it looks at is
/// another process's: a log line, an HTTP answer, an exit, with no signal to await);
/// fails naming `what` after `bound`.
pub async fn eventually<F, Fut>(what: &str, bound: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + bound;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends SIGTERM to `child`.
pub fn signal_term(child: &Child) {
    let pid = child.id().expect("running").to_string();
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Sends SIGTERM to `child` and waits (boundedly) for it to exit.
pub async fn terminate(child: &mut Child) {
    signal_term(child);
    tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the server stops after SIGTERM")
        .unwrap();
}
