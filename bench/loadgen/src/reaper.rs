//! The process groups of the servers running now, and their end when `mcp-bench` itself
//! is told to stop (Ctrl-C, a CI timeout's SIGTERM, a closed terminal).
//!
//! Each server runs in a process group of its own, so a signal meant for `mcp-bench`
//! never reaches it, and a process that dies of a signal runs no destructor: without this
//! module an HTTP server would outlive an interrupted run.
//!
//! Invariant: every group started is in the set until it has been killed, and on SIGINT,
//! SIGTERM or SIGHUP every group in the set is sent SIGKILL before `mcp-bench` exits.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Mutex;

use tokio::signal::unix::{SignalKind, signal};

/// The process groups (each its leader's pid) of the servers running now.
static GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Notes that the server `pid`, leader of its own group, is running.
pub(crate) fn started(pid: u32) {
    GROUPS.lock().expect("not poisoned").insert(pid);
}

/// Kills the group led by `pid` (the server and everything it started) and forgets it.
pub(crate) fn kill_group(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    GROUPS.lock().expect("not poisoned").remove(&pid);
}

/// Kills every group still running.
fn kill_all() {
    let groups: Vec<u32> = GROUPS
        .lock()
        .expect("not poisoned")
        .iter()
        .copied()
        .collect();
    for pid in groups {
        kill_group(pid);
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP; then kills every server's group and returns the
/// exit status a shell gives a process ended by that signal (128 + its number). Never
/// returns if the handlers cannot be installed.
pub(crate) async fn interrupted() -> u8 {
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        eprintln!("mcp-bench: no signal handlers; an interrupted run may leave servers");
        return std::future::pending().await;
    };
    let (name, code) = tokio::select! {
        _ = int.recv() => ("SIGINT", 130),
        _ = term.recv() => ("SIGTERM", 143),
        _ = hup.recv() => ("SIGHUP", 129),
    };
    kill_all();
    eprintln!("mcp-bench: {name}: every server stopped");
    code
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;

    use super::*;

    #[test]
    fn a_killed_group_is_forgotten_and_its_processes_end() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & exec sleep 30"])
            .process_group(0)
            .spawn()
            .expect("sh runs");
        let pid = child.id();
        started(pid);
        assert!(GROUPS.lock().unwrap().contains(&pid));
        kill_group(pid);
        assert!(!GROUPS.lock().unwrap().contains(&pid));
        let status = child.wait().expect("the child is reaped");
        assert!(!status.success(), "{status}");
    }
}
