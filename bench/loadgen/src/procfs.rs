//! What the kernel says of a server: the CPU time and memory of its process and every
//! descendant (an SDK may run its server in a child process), read from `/proc`.
//!
//! Invariant: only the process tree under the pid given is counted, and a process that
//! ends between two reads is skipped, never an error.

use std::collections::HashMap;
use std::fs;

/// Clock ticks per second of `/proc/PID/stat`'s times: 100 on every Linux this runs on
/// (`getconf CLK_TCK`); reading it needs libc, which this crate does without.
const TICKS_PER_SECOND: f64 = 100.0;

/// The pid and every descendant of it alive now.
fn tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) = stat_fields(pid).and_then(|f| f.get(1)?.parse().ok()) {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut all = vec![root];
    let mut next = 0;
    while next < all.len() {
        if let Some(kids) = children.get(&all[next]) {
            all.extend(kids);
        }
        next += 1;
    }
    all
}

/// The fields of `/proc/PID/stat` after the command name, starting with the state: index
/// 0 is the state, 1 the parent's pid, 11 and 12 user and system time, 13 and 14 those of
/// reaped children.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &text[text.rfind(')')? + 1..];
    Some(after_name.split_whitespace().map(str::to_owned).collect())
}

/// CPU seconds (user + system, every thread, reaped children included) of the tree.
pub(crate) fn cpu_seconds(root: u32) -> f64 {
    let ticks: u64 = tree(root)
        .into_iter()
        .filter_map(stat_fields)
        .map(|f| {
            [11, 12, 13, 14]
                .iter()
                .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum();
    ticks as f64 / TICKS_PER_SECOND
}

/// The sum over the tree of a `/proc/PID/status` field in KiB (`VmRSS`, `VmHWM`).
pub(crate) fn status_kib(root: u32, field: &str) -> u64 {
    tree(root)
        .into_iter()
        .filter_map(|pid| fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .sum()
}

/// This process's own CPU seconds, all threads, without its children (the servers).
pub(crate) fn own_cpu_seconds() -> f64 {
    let ticks: u64 = stat_fields(std::process::id())
        .map(|f| {
            [11, 12]
                .iter()
                .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    ticks as f64 / TICKS_PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_and_a_tree_of_itself() {
        let me = std::process::id();
        assert!(tree(me).contains(&me));
        assert!(status_kib(me, "VmHWM") > 0);
        assert!(status_kib(me, "VmRSS") <= status_kib(me, "VmHWM"));
        assert!(own_cpu_seconds() >= 0.0);
    }
}
