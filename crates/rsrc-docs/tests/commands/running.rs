//! Building and running a documented command: its build first, one at a time, then the
//! command from a directory, with its stdio piped and its stderr kept and watched.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rsrc_testkit::Peer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::found::root;

/// How long one step (an answer, an exit) may take once the command is built.
pub(crate) const STEP: Duration = Duration::from_secs(60);

/// How long `cargo run` may take to start what it was told to run: it checks the build
/// first, and builds again whatever changed since [`build`] (in a work tree shared with
/// someone editing it).
pub(crate) const START: Duration = Duration::from_secs(600);

/// `--release` left out (see the module's docs).
pub(crate) fn without_release(command: &str) -> String {
    command.replace(" --release", "")
}

/// The cargo running this test, or the one on the PATH.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// Builds what `command` (a `cargo run`, maybe at the end of a pipeline) runs: `cargo
/// build` with its flags, one build at a time.
pub(crate) fn build(command: &str) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let run = command.rsplit("| ").next().unwrap();
    let words = shlex::split(&without_release(run)).unwrap();
    let flags = words.iter().take_while(|w| *w != "--").skip(2);
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let out = std::process::Command::new(cargo())
        .arg("build")
        .args(flags)
        .current_dir(root())
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "building for `{command}` failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A command's stderr, as read so far.
#[derive(Default)]
struct Stderr {
    lines: Vec<String>,
    /// Whether it reached its end.
    ended: bool,
}

/// A documented command, running.
pub(crate) struct Running {
    pub(crate) child: Child,
    command: String,
    /// Its stderr so far, a line at a time, and a signal for each new line.
    stderr: Arc<(Mutex<Stderr>, tokio::sync::Notify)>,
}

impl Running {
    /// Starts `command` (already built) from `cwd`, its stdio piped; `rsrc` is the one
    /// `cargo build --bin rsrc` built, first on the PATH.
    pub(crate) fn start(command: &str, cwd: &Path) -> Running {
        let words = shlex::split(&without_release(command)).unwrap();
        let program = match words[0].as_str() {
            "cargo" => PathBuf::from(cargo()),
            "rsrc" => target_dir().join("debug/rsrc"),
            other => PathBuf::from(other),
        };
        let mut cmd = Command::new(program);
        cmd.args(&words[1..]);
        let path = std::env::join_paths(std::iter::once(target_dir().join("debug")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let mut child = cmd
            .current_dir(cwd)
            .env("PATH", path)
            .env("CARGO_NET_OFFLINE", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("`{command}` does not start: {e}"));
        let stderr = Arc::new((Mutex::new(Stderr::default()), tokio::sync::Notify::new()));
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let kept = Arc::clone(&stderr);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept_lines = kept.0.lock().unwrap_or_else(PoisonError::into_inner);
                kept_lines.lines.push(line);
                drop(kept_lines);
                kept.1.notify_waiters();
            }
            kept.0.lock().unwrap_or_else(PoisonError::into_inner).ended = true;
            kept.1.notify_waiters();
        });
        Running {
            child,
            command: command.to_owned(),
            stderr,
        }
    }

    /// The first stderr line that `wanted` accepts, waiting for it until `within`.
    pub(crate) async fn stderr_line(
        &self,
        within: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> String {
        let found = tokio::time::timeout(within, async {
            loop {
                let notified = self.stderr.1.notified();
                let (lines, ended) = {
                    let stderr = self.stderr.0.lock().unwrap_or_else(PoisonError::into_inner);
                    (stderr.lines.clone(), stderr.ended)
                };
                if let Some(line) = lines.into_iter().find(|l| wanted(l)) {
                    return Some(line);
                }
                if ended {
                    return None;
                }
                notified.await;
            }
        })
        .await;
        found.ok().flatten().unwrap_or_else(|| {
            panic!(
                "`{}` did not say what was awaited; stderr:\n{}",
                self.command,
                self.stderr()
            )
        })
    }

    /// Waits until `cargo run` has started the program (it may check or rebuild first).
    pub(crate) async fn program_started(&self) {
        self.stderr_line(START, |l| l.trim_start().starts_with("Running `"))
            .await;
    }

    /// A peer over the program's stdin and stdout, once `cargo run` has started it.
    pub(crate) async fn peer(&mut self) -> Peer {
        self.program_started().await;
        Peer::new(
            self.child.stdout.take().unwrap(),
            self.child.stdin.take().unwrap(),
        )
    }

    pub(crate) fn stderr(&self) -> String {
        let stderr = self.stderr.0.lock().unwrap_or_else(PoisonError::into_inner);
        stderr.lines.join("\n")
    }

    /// Waits for the command to end on its own and checks that it succeeded.
    pub(crate) async fn exits_cleanly(mut self) {
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "`{}` did not exit once its input closed; stderr:\n{}",
                    self.command,
                    self.stderr()
                )
            })
            .unwrap();
        assert!(
            status.success(),
            "`{}` exited with {status}; stderr:\n{}",
            self.command,
            self.stderr()
        );
    }
}
