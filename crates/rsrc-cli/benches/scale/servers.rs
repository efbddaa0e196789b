//! The servers measured: `rsrc serve` (the release binary) in child processes, over
//! stdio or Streamable HTTP on loopback, on trees made on tmpfs, and what `/proc` says of
//! their memory and CPU. Invariant: a server is stopped when its handle is dropped, so
//! no measurement leaves a process behind.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The coalescing window the servers run with (`--watch-window`): subtracted from the
/// delays, which are measured beyond it.
pub(crate) const WINDOW_MS: f64 = 20.0;
/// The HTTP server's worker threads (`--threads=N`; `serve`'s default is one).
pub(crate) static THREADS: AtomicU16 = AtomicU16::new(1);

/// A tree of `n` files, `d0000/f0000000.txt` …, 1,000 per directory, on tmpfs; made once
/// and kept (with a stamp) for later runs.
pub(crate) fn tree(n: usize) -> PathBuf {
    let root = PathBuf::from(format!("/dev/shm/rsrc-scale-{n}"));
    let stamp = root.join(".complete");
    if stamp.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let started = Instant::now();
    for i in 0..n {
        let dir = root.join(format!("d{:04}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).expect("create a directory");
        }
        std::fs::write(dir.join(format!("f{i:07}.txt")), format!("file {i}\n"))
            .expect("write a file");
    }
    std::fs::write(&stamp, b"").expect("stamp");
    eprintln!(
        "made a tree of {n} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    root
}

/// Arguments added to every `rsrc serve` (`--serve-arg=ARG`, repeatable).
pub(crate) static SERVE_ARGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The binary measured: `RSRC_BIN` if set (another build, to compare), else this
/// workspace's.
pub(crate) fn rsrc() -> Command {
    let bin = std::env::var_os("RSRC_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_rsrc").into());
    let mut c = Command::new(bin);
    c.env("RUST_LOG", "warn").stderr(Stdio::inherit());
    c
}

/// A `kB` field of `/proc/PID/status`, in KiB.
pub(crate) fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time of a process (every thread, user and system, including threads that have
/// ended), in seconds: the live threads' run time from `/proc/PID/task/*/schedstat`, in
/// nanoseconds, plus what ended threads used, which only the process's `/proc/PID/stat`
/// keeps (in 10 ms ticks: the whole process minus its live threads).
pub(crate) fn cpu_s(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0.0;
    };
    let (mut live_ns, mut live_ticks) = (0u64, 0u64);
    for task in tasks.flatten() {
        let path = task.path();
        live_ns += std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        live_ticks += stat_ticks(&path.join("stat"));
    }
    let ended_ticks =
        stat_ticks(Path::new(&format!("/proc/{pid}/stat"))).saturating_sub(live_ticks);
    live_ns as f64 / 1e9 + ended_ticks as f64 / 100.0
}

/// User plus system time in a `stat` file, in clock ticks (100 per second).
pub(crate) fn stat_ticks(path: &Path) -> u64 {
    let Ok(stat) = std::fs::read_to_string(path) else {
        return 0;
    };
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

/// A stdio server and its pipes.
pub(crate) struct StdioServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    pub(crate) fn start(dir: &Path) -> Self {
        Self::start_with(dir, &["--no-watch"])
    }

    /// `rsrc serve DIR` with `args` and the `--serve-arg`s.
    pub(crate) fn start_with(dir: &Path, args: &[&str]) -> Self {
        let mut child = rsrc()
            .arg("serve")
            .args(args)
            .args(SERVE_ARGS.get().into_iter().flatten())
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start rsrc serve");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        let mut s = StdioServer {
            child,
            input,
            output,
            next_id: 0,
        };
        s.call(
            "initialize",
            &json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "scale", "version": "0"}}),
        );
        writeln!(
            s.input,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .expect("write");
        s
    }

    pub(crate) fn call(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        // One write per request: the pipe is unbuffered, and formatting straight into it
        // wrote a request in dozens of pieces, each waking the server.
        let mut line = msg.to_string();
        line.push('\n');
        self.input
            .write_all(line.as_bytes())
            .expect("write a request");
        let mut line = String::new();
        self.output.read_line(&mut line).expect("read a response");
        let v: Value = serde_json::from_str(&line).expect("a JSON response");
        assert!(v.get("error").is_none(), "{method}: {v}");
        v
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP server and where it listens.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl HttpServer {
    pub(crate) fn start(streams: usize) -> Self {
        let dir = tempfile::tempdir_in("/dev/shm").expect("a tmpfs directory");
        std::fs::write(dir.path().join("a.txt"), "version 0").expect("write");
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("addr").port()
        };
        let child = rsrc()
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(["--watch-window", &format!("{WINDOW_MS}ms")])
            .args(["--max-connections", &(streams + 64).to_string()])
            .args(["--max-streams", &(streams + 64).to_string()])
            .args(["--max-sessions", &(streams + 64).to_string()])
            .args(["--threads", &THREADS.load(Ordering::Relaxed).to_string()])
            .arg(dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("start rsrc serve --http");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "the server listens");
            std::thread::sleep(Duration::from_millis(20));
        }
        HttpServer { child, addr, dir }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn rss_kib(&self) -> u64 {
        status_kib(self.pid(), "VmRSS:")
    }

    pub(crate) fn write(&self, version: usize) {
        std::fs::write(self.dir.path().join("a.txt"), format!("version {version}")).expect("write");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
