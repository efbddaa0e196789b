//! The source commit `rsrc --version` names: `RSRC_COMMIT` when set (a build from an
//! archive, which has no repository), else what git says `HEAD` is, else `unknown`.
//!
//! Invariant: the build is redone when the commit can have changed (the variable, `HEAD`,
//! the branch it names and its folder, packed refs), and only then: every path watched
//! exists (cargo rebuilds on every run for a missing one). It never fails for want of git.

use std::path::Path;
use std::process::Command;

/// Sets `RSRC_COMMIT` for the crate's code.
pub(crate) fn emit(manifest_dir: &Path) {
    println!("cargo:rerun-if-env-changed=RSRC_COMMIT");
    let given = std::env::var("RSRC_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let commit = given.or_else(|| {
        // Only paths that exist: cargo takes a missing one as changed on every build,
        // and would build the binary again each time (a fresh clone packs its refs, and
        // a repository that never packed has no `packed-refs`). A branch whose ref is
        // packed is written loose at its next commit: its folder is watched for that.
        let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
        if let Some(branch) = git(manifest_dir, &["symbolic-ref", "-q", "HEAD"]) {
            if let Some((folder, _)) = branch.rsplit_once('/') {
                watched.push(folder.to_owned());
            }
            watched.push(branch);
        }
        for path in watched {
            if let Some(p) = git(manifest_dir, &["rev-parse", "--git-path", &path]) {
                let p = manifest_dir.join(p);
                if p.exists() {
                    println!("cargo:rerun-if-changed={}", p.display());
                }
            }
        }
        git(manifest_dir, &["rev-parse", "--short=12", "HEAD"])
    });
    let commit = commit
        .filter(|c| {
            c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        })
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=RSRC_COMMIT={commit}");
}

/// What `git ARGS` prints in `dir`, trimmed, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
