//! A stdio server started by the client ([`Client::spawn`]): the process, and the last
//! lines it wrote on stderr, kept so that a server that fails to start can say why.
//!
//! Invariants: the server's stderr is always drained (a server never blocks on a full
//! pipe), and what is kept of it is bounded: the last [`TAIL_LINES`] lines, each cut at
//! [`LINE_BYTES`]. The text is the server's: callers clean it before it reaches a
//! terminal.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::client::Client;
use crate::error::ClientError;
use crate::options::ClientOptions;

/// Lines of a server's stderr kept.
pub const TAIL_LINES: usize = 20;
/// Longest line kept, in bytes; the rest of a longer line is dropped.
pub const LINE_BYTES: usize = 1000;
/// How long a server that failed to start is given to exit and finish writing its stderr.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The last lines a server process wrote on stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Set once the server closed its stderr.
    closed: Option<watch::Receiver<bool>>,
}

impl StderrTail {
    /// Keeps the last lines of `stderr`, read on a task of its own until it ends.
    fn drain(stderr: impl AsyncRead + Unpin + Send + 'static) -> StderrTail {
        let lines = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let (done, closed) = watch::channel(false);
        let kept = Arc::clone(&lines);
        tokio::spawn(async move {
            read_lines(stderr, &kept).await;
            let _ = done.send(true);
        });
        StderrTail {
            lines,
            closed: Some(closed),
        }
    }

    /// The lines kept so far, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Waits (at most `limit`) until the server has closed its stderr.
    async fn closed(&self, limit: Duration) {
        if let Some(mut closed) = self.closed.clone() {
            let _ = tokio::time::timeout(limit, closed.wait_for(|c| *c)).await;
        }
    }
}

async fn read_lines(mut stderr: impl AsyncRead + Unpin, kept: &Mutex<VecDeque<String>>) {
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let push = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line)
            .trim_end_matches('\r')
            .to_owned();
        line.clear();
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == TAIL_LINES {
            kept.pop_front();
        }
        kept.push_back(text);
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in buf[..n].split_inclusive(|&b| b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            let room = LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&text[..text.len().min(room)]);
            if ends {
                push(&mut line);
            }
        }
    }
    if !line.is_empty() {
        push(&mut line);
    }
}

/// A stdio server the client started: its process (killed when dropped) and its stderr.
#[derive(Debug)]
pub struct Spawned {
    /// The connected client.
    pub client: Client,
    /// The server process; dropping it kills the server.
    pub child: Child,
    /// The last lines the server wrote on stderr.
    pub stderr: StderrTail,
}

/// Why a stdio server could not be talked to, with what it said on its way out.
#[derive(Debug)]
pub struct SpawnError {
    /// What went wrong on the client's side.
    pub error: ClientError,
    /// How the server ended, if it did.
    pub status: Option<ExitStatus>,
    /// The last lines it wrote on stderr.
    pub stderr: Vec<String>,
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        if let Some(status) = self.status {
            write!(f, "; the server exited ({status})")?;
        }
        if !self.stderr.is_empty() {
            f.write_str("; the last lines it wrote on stderr:")?;
            for line in &self.stderr {
                write!(f, "\n  | {line}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SpawnError {}

impl Client {
    /// Starts a server process with `command` and connects over its stdin/stdout. The
    /// process's stderr is inherited; it is killed when the returned child is dropped.
    pub async fn spawn(
        command: &mut Command,
        options: ClientOptions,
    ) -> Result<(Client, Child), ClientError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Protocol("the child has no stdio pipes".into()));
        };
        let client = Client::connect(stdout, stdin, options).await?;
        Ok((client, child))
    }

    /// [`Client::spawn`], keeping the last lines of the server's stderr instead of
    /// passing them through: a server that exits or stops answering while the client
    /// connects is waited for (a moment) and its error carries how it ended and what it
    /// last wrote.
    pub async fn spawn_keeping_stderr(
        command: &mut Command,
        options: ClientOptions,
    ) -> Result<Spawned, SpawnError> {
        let failed = |error: ClientError| SpawnError {
            error,
            status: None,
            stderr: Vec::new(),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| failed(e.into()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(failed(ClientError::Protocol(
                "the child has no stdio pipes".into(),
            )));
        };
        let tail = StderrTail::drain(stderr);
        match Client::connect(stdout, stdin, options).await {
            Ok(client) => Ok(Spawned {
                client,
                child,
                stderr: tail,
            }),
            Err(error) => {
                let status = tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                if status.is_some() {
                    tail.closed(EXIT_GRACE).await;
                }
                Err(SpawnError {
                    error,
                    status,
                    stderr: tail.lines(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_last_lines_are_kept_each_cut_at_the_limit() {
        let mut text = String::new();
        for i in 0..30 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str(&"x".repeat(5000));
        text.push('\n');
        text.push_str("no newline at the end");
        let kept = Mutex::new(VecDeque::new());
        read_lines(text.as_bytes(), &kept).await;
        let kept: Vec<String> = kept.into_inner().unwrap().into();
        assert_eq!(kept.len(), TAIL_LINES);
        assert_eq!(kept[0], "line 12");
        assert_eq!(kept[TAIL_LINES - 2].len(), LINE_BYTES);
        assert_eq!(kept[TAIL_LINES - 1], "no newline at the end");
    }
}
