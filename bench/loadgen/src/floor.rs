//! `mcp-bench floor`: what this machine allows any server, measured with no MCP, no HTTP
//! and no JSON. These are the reference measurements a scale goal is set against
//! (docs/performance.md, "Targets not reached").
//!
//! - `walk DIR`: every file of a tree with its size, as a server listing sizes must get
//!   them: a `read_dir` per directory and a `stat` per entry. It runs on one thread, then
//!   on one thread per core over the top-level directories. The figure is files per
//!   second.
//! - `fanout N`: N loopback TCP connections. One task per core writes one 300-byte event
//!   to each of its share, and in another process one task per connection reads its
//!   event. The figure is the time from the first write to the last read, over 20 rounds
//!   (p50 and p99).
//!
//! Invariant: nothing is counted that was not done. The walk counts the entries it read
//! the metadata of. A fan-out round ends only when every byte of every event was read.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use crate::stats::percentile;

/// One event of the fan-out: about what a `notifications/resources/updated` costs on
/// an SSE stream.
const EVENT: usize = 300;
/// Fan-out rounds measured.
const ROUNDS: usize = 20;

/// Files walked and their sizes summed (so the `stat` is used), under `dirs`; symbolic
/// links are entries like files, never followed.
fn walk(dirs: &[PathBuf]) -> std::io::Result<(usize, u64)> {
    let (mut files, mut bytes) = (0, 0);
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            // Not followed: a link is one entry, and a link cycle cannot loop the walk.
            let md = std::fs::symlink_metadata(entry.path())?;
            if md.is_dir() {
                stack.push(entry.path());
            } else {
                files += 1;
                bytes += md.len();
            }
        }
    }
    Ok((files, bytes))
}

/// `floor walk DIR`: files per second on one thread, then on every core.
pub(crate) fn walk_floor(root: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", root.display());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // Once untimed, so that both measurements find the kernel's caches equally warm.
    let (total, _) = walk(&[root.to_owned()]).map_err(fail)?;
    let started = Instant::now();
    let (files, _) = walk(&[root.to_owned()]).map_err(fail)?;
    let one = files as f64 / started.elapsed().as_secs_f64();
    // Every core: the top-level directories dealt out in turn; the root's own files on
    // the first thread.
    let mut top: Vec<Vec<PathBuf>> = vec![Vec::new(); cores];
    let mut own = 0;
    for (i, entry) in std::fs::read_dir(root).map_err(fail)?.enumerate() {
        let entry = entry.map_err(fail)?;
        if std::fs::symlink_metadata(entry.path())
            .map_err(fail)?
            .is_dir()
        {
            top[i % cores].push(entry.path());
        } else {
            own += 1;
        }
    }
    let started = Instant::now();
    let counted: std::io::Result<Vec<(usize, u64)>> = std::thread::scope(|s| {
        let running: Vec<_> = top.iter().map(|dirs| s.spawn(|| walk(dirs))).collect();
        running
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("a walk panicked")))
            })
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let parallel = counted.map_err(fail)?.iter().map(|(f, _)| f).sum::<usize>() + own;
    if parallel != total || files != total {
        return Err(format!(
            "{}: the tree changed while it was walked ({total}, {files}, {parallel} files)",
            root.display()
        ));
    }
    println!("walk {}: {total} files", root.display());
    println!("  one thread: {one:.0} files/s");
    println!("  {cores} threads: {:.0} files/s", total as f64 / seconds);
    Ok(())
}

/// `floor fanout N`: the delay from the first write to the last read of one event on each
/// of `n` loopback connections, p50 and p99 of [`ROUNDS`] rounds. The reading ends are in
/// a child process (`floor fanout N --connect ADDR`), as a server's clients are: each
/// process then holds `n` sockets, not `2 n`.
pub(crate) async fn fanout_floor(n: usize) -> Result<(), String> {
    let io = |e: std::io::Error| format!("fan-out over {n} connections: {e}");
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;
    let exe = std::env::current_exe().map_err(io)?;
    let mut child = tokio::process::Command::new(exe)
        .args([
            "floor",
            "fanout",
            &n.to_string(),
            "--connect",
            &addr.to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(io)?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().ok_or("no pipe")?).lines();
    // The writing ends dealt out to one task per core, as a server with a thread per
    // core would write.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut groups: Vec<Vec<TcpStream>> = (0..cores).map(|_| Vec::new()).collect();
    let accepting = async {
        for i in 0..n {
            let (server, _) = listener.accept().await.map_err(io)?;
            server.set_nodelay(true).map_err(io)?;
            groups[i % cores].push(server);
        }
        Ok::<_, String>(())
    };
    tokio::time::timeout(Duration::from_secs(120), accepting)
        .await
        .map_err(|_| format!("fan-out: the reader did not connect {n} times within 120 s"))??;
    // The reader says "ready" once every connection is made, and then after each round.
    let mut next_line = async || match lines.next_line().await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(format!("fan-out over {n} connections: the reader ended")),
        Err(e) => Err(io(e)),
    };
    next_line().await?;
    let event = [b'x'; EVENT];
    let mut delays = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let writing: Vec<_> = std::mem::take(&mut groups)
            .into_iter()
            .map(|mut group| {
                tokio::spawn(async move {
                    for w in &mut group {
                        w.write_all(&event).await?;
                    }
                    Ok::<_, std::io::Error>(group)
                })
            })
            .collect();
        for task in writing {
            groups.push(
                task.await
                    .map_err(|e| format!("a writer: {e}"))?
                    .map_err(io)?,
            );
        }
        tokio::time::timeout(Duration::from_secs(60), next_line())
            .await
            .map_err(|_| format!("fan-out over {n} connections: a round took over 60 s"))??;
        delays.push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
    }
    let mut ms = |p| percentile(&mut delays, p).map_or(f64::NAN, |us| us as f64 / 1000.0);
    println!("fan-out of one {EVENT}-byte event to {n} loopback connections, {ROUNDS} rounds:");
    println!(
        "  first write to last read: p50 {:.1} ms, p99 {:.1} ms",
        ms(50.0),
        ms(99.0)
    );
    Ok(())
}

/// The reading ends of `floor fanout N`: `n` connections to `addr`, each reading one
/// event a round; a line on stdout when they are all connected, and when every one of
/// them has read its event of a round.
pub(crate) async fn fanout_reader(n: usize, addr: std::net::SocketAddr) -> Result<(), String> {
    let io = |e: std::io::Error| format!("fan-out reader: {e}");
    let left = Arc::new(AtomicUsize::new(n));
    let all_read = Arc::new(Notify::new());
    for _ in 0..n {
        let mut client = TcpStream::connect(addr).await.map_err(io)?;
        client.set_nodelay(true).map_err(io)?;
        let (left, all_read) = (Arc::clone(&left), Arc::clone(&all_read));
        tokio::spawn(async move {
            let mut event = [0u8; EVENT];
            while client.read_exact(&mut event).await.is_ok() {
                if left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    all_read.notify_one();
                }
            }
        });
    }
    // A line of six bytes to a pipe: written in place, it cannot block for long.
    let mut out = std::io::stdout().lock();
    for _ in 0..=ROUNDS {
        std::io::Write::write_all(&mut out, b"ready\n").map_err(io)?;
        std::io::Write::flush(&mut out).map_err(io)?;
        all_read.notified().await;
        left.store(n, Ordering::Release);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_counts_every_file_below_its_directories_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir(root.join("c")).unwrap();
        std::fs::write(root.join("top.txt"), "12345").unwrap();
        std::fs::write(root.join("a/one"), "1").unwrap();
        std::fs::write(root.join("a/b/two"), "22").unwrap();
        std::fs::write(root.join("c/three"), "333").unwrap();
        assert_eq!(walk(&[root.to_owned()]).unwrap(), (4, 11));
        // The directories dealt out: only what is below them.
        assert_eq!(walk(&[root.join("a"), root.join("c")]).unwrap(), (3, 6));
        assert!(walk(&[root.join("missing")]).is_err());
        // A link back up the tree is one entry, not a cycle.
        std::os::unix::fs::symlink(root, root.join("a/up")).unwrap();
        assert_eq!(walk(&[root.to_owned()]).unwrap().0, 5);
        assert!(walk_floor(root).is_ok());
    }
}
