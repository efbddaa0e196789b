//! Whether the hot-text list still names the code it was made from: its names are looked
//! up among the functions of the last `rsrc` built with the same profile, and a list that
//! has drifted is reported as a build warning that says how many names are lost and the
//! one command that makes the list again.
//!
//! Invariant: the check only reads (the binary, with `nm`); it never fails the build, and
//! says nothing when it cannot look (no earlier binary, no `nm`). A build script runs
//! before the binary it lays out is linked, so the binary looked at is the one before this
//! build; the script runs again whenever the list or the commit changes (`build.rs`).

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use crate::hot_text::{listed, loosen};

/// The share of listed names (in per cent) that may be missing before the build warns: a
/// list made from this very code misses none; past this it gathers too little of it.
const TOLERATED_PERCENT: usize = 10;

/// Names in `list` that match no function of `binary` (exactly, or loosened as the linker
/// script loosens them), and how many names the list has; `None` when `nm` cannot read it.
pub(crate) fn unmatched(list: &str, binary: &Path) -> Option<(usize, usize)> {
    let out = Command::new("nm")
        .args(["--defined-only", "--format=posix"])
        .arg(binary)
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    let symbols = String::from_utf8_lossy(&out.stdout);
    let mut exact = HashSet::new();
    let mut loose = HashSet::new();
    for line in symbols.lines() {
        let mut fields = line.split_whitespace();
        let (Some(name), Some(kind)) = (fields.next(), fields.next()) else {
            continue;
        };
        if matches!(kind, "t" | "T" | "w" | "W") {
            exact.insert(name);
            loose.insert(loosen(name));
        }
    }
    let names = listed(list);
    let missing = names
        .iter()
        .filter(|name| !exact.contains(*name) && !loose.contains(&loosen(name)))
        .count();
    Some((missing, names.len()))
}

/// Prints a `cargo:warning` when more than [`TOLERATED_PERCENT`] of the names in `list`
/// (read from `list_path`) are not in `binary`, the last `rsrc` built with `profile`.
pub(crate) fn warn_if_stale(list: &str, list_path: &str, binary: &Path, profile: &str) {
    if !binary.is_file() {
        return;
    }
    let Some((missing, total)) = unmatched(list, binary) else {
        return;
    };
    if total == 0 || missing * 100 <= total * TOLERATED_PERCENT {
        return;
    }
    println!(
        "cargo:warning=hot-text: {missing} of the {total} functions listed in \
         crates/rsrc-cli/{list_path} are not in the last {profile} build of rsrc ({}): their \
         code is not gathered, and more of the binary stays in memory. Regenerate the list \
         with: scripts/hot-text {profile}",
        binary.display()
    );
}
