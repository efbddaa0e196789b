//! How `rsrc serve` scales: the figures of `docs/performance.md`, measured against the
//! release binary in child processes, as a client would see them.
//!
//! ```sh
//! cargo bench -p rsrc-cli --bench scale              # everything (~10 min on 2 cores)
//! cargo bench -p rsrc-cli --bench scale -- listing 1000000
//! cargo bench -p rsrc-cli --bench scale -- listen 10000
//! cargo bench -p rsrc-cli --bench scale -- listen 10000 --threads=2
//! cargo bench -p rsrc-cli --bench scale -- sessions 10000
//! cargo bench -p rsrc-cli --bench scale -- growth
//! ```
//!
//! - `listing N…`: a tree of N files (directories of 1,000, on tmpfs under `/dev/shm`),
//!   served over stdio and paged through `resources/list` to the end: entries per second,
//!   time to the first page, the server's peak RSS; then 2,000 reads of random files one
//!   at a time (µs each).
//! - `listen N`: N `subscriptions/listen` streams over Streamable HTTP on one instance,
//!   each subscribed to one file: memory per idle stream, then 20 writes of that file and
//!   the delay from each write to the last stream's notification, beyond the coalescing
//!   window.
//! - `sessions N`: N legacy (2025-11-25) HTTP sessions: initializes per second and memory
//!   per session; then each subscribes to one file and opens its GET stream, and the
//!   delay from a write to the last session's notification is measured as above.
//! - `growth`: the table of how listing, reading and notifying grow with the tree
//!   (1k … 1M files) and with the listeners (1 … 10k).
//!
//! The HTTP server runs with `serve`'s default of one worker thread; `--threads=N` gives
//! it N (`rsrc serve --threads N`).
//!
//! Nothing here asserts a time: these are measurements, printed as markdown rows.
#![allow(clippy::print_stdout)] // The report is the output.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

/// The coalescing window the servers run with (`--watch-window`): subtracted from the
/// delays, which are measured beyond it.
const WINDOW_MS: f64 = 20.0;
/// Writes of the watched file per measurement.
const WRITES: usize = 20;
/// The HTTP server's worker threads (`--threads=N`; `serve`'s default is one).
static THREADS: AtomicU16 = AtomicU16::new(1);

fn main() {
    if let Some(n) = std::env::args().find_map(|a| a.strip_prefix("--threads=")?.parse().ok()) {
        THREADS.store(n, Ordering::Relaxed);
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let numbers = |from: usize| -> Vec<usize> {
        args.iter()
            .skip(from)
            .filter_map(|a| a.replace('_', "").parse().ok())
            .collect()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match args.first().map(String::as_str) {
        Some("listing") => {
            let sizes = numbers(1);
            listing_table(if sizes.is_empty() {
                &[1_000_000]
            } else {
                &sizes
            });
        }
        Some("listen") => {
            let n = numbers(1).first().copied().unwrap_or(10_000);
            runtime.block_on(listen(n, true));
        }
        Some("sessions") => {
            let n = numbers(1).first().copied().unwrap_or(10_000);
            runtime.block_on(sessions(n));
        }
        Some("growth") => growth(&runtime),
        None | Some("all") => {
            listing_table(&[1_000_000]);
            runtime.block_on(listen(10_000, true));
            runtime.block_on(sessions(10_000));
            growth(&runtime);
        }
        Some(other) => eprintln!("unknown scenario {other:?}: listing, listen, sessions, growth"),
    }
}

// ---------------------------------------------------------------------------------------
// Trees and processes

/// A tree of `n` files, `d0000/f0000000.txt` …, 1,000 per directory, on tmpfs; made once
/// and kept (with a stamp) for later runs.
fn tree(n: usize) -> PathBuf {
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

fn rsrc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rsrc"));
    c.env("RUST_LOG", "warn").stderr(Stdio::inherit());
    c
}

/// A `kB` field of `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
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
fn cpu_s(pid: u32) -> f64 {
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
fn stat_ticks(path: &Path) -> u64 {
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
struct StdioServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    fn start(dir: &Path) -> Self {
        let mut child = rsrc()
            .args(["serve", "--no-watch"])
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

    fn call(&mut self, method: &str, params: &Value) -> Value {
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

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// Listing and reading

struct ListingFigures {
    files: usize,
    entries_per_s: f64,
    first_page_ms: f64,
    peak_rss_mib: f64,
    cpu_us_per_entry: f64,
    read_us: f64,
}

fn listing(n: usize) -> ListingFigures {
    let dir = tree(n);
    let mut server = StdioServer::start(&dir);
    let cpu_before = cpu_s(server.pid());
    let started = Instant::now();
    let mut first_page_ms = 0.0;
    let mut cursor: Option<String> = None;
    let mut entries = 0usize;
    let mut uris = Vec::new();
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page_started = Instant::now();
        let v = server.call("resources/list", &params);
        if entries == 0 {
            first_page_ms = page_started.elapsed().as_secs_f64() * 1000.0;
        }
        let resources = v["result"]["resources"].as_array().expect("resources");
        entries += resources.len();
        // Keep a sample of URIs for the reads.
        if uris.len() < 10_000 {
            uris.extend(
                resources
                    .iter()
                    .step_by(97)
                    .filter_map(|r| r["uri"].as_str().map(str::to_owned)),
            );
        }
        cursor = v["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_s(server.pid()) - cpu_before;
    assert_eq!(entries, n, "every file listed once");
    let peak = status_kib(server.pid(), "VmHWM:") as f64 / 1024.0;
    // Reads of random files (a fixed stride through the sample), one at a time.
    let reads = 2000;
    let started = Instant::now();
    for i in 0..reads {
        let uri = &uris[(i * 7919) % uris.len()];
        server.call("resources/read", &json!({"uri": uri}));
    }
    let read_us = started.elapsed().as_secs_f64() * 1e6 / reads as f64;
    ListingFigures {
        files: n,
        entries_per_s: n as f64 / seconds,
        first_page_ms,
        peak_rss_mib: peak,
        cpu_us_per_entry: cpu * 1e6 / n as f64,
        read_us,
    }
}

fn listing_table(sizes: &[usize]) {
    println!("\n### Listing (stdio, pages of 1,000, tmpfs)\n");
    println!(
        "| files | entries/s | first page | server CPU per entry | peak RSS | read (one at a time) |"
    );
    println!("|---|---|---|---|---|---|");
    for &n in sizes {
        let f = listing(n);
        println!(
            "| {} | {:.0} | {:.1} ms | {:.2} µs | {:.1} MiB | {:.0} µs |",
            f.files,
            f.entries_per_s,
            f.first_page_ms,
            f.cpu_us_per_entry,
            f.peak_rss_mib,
            f.read_us
        );
    }
}

// ---------------------------------------------------------------------------------------
// HTTP: a raw HTTP/1.1 client, light enough for ten thousand streams in one process

/// An HTTP server and where it listens.
struct HttpServer {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl HttpServer {
    fn start(streams: usize) -> Self {
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

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn rss_kib(&self) -> u64 {
        status_kib(self.pid(), "VmRSS:")
    }

    fn write(&self, version: usize) {
        std::fs::write(self.dir.path().join("a.txt"), format!("version {version}")).expect("write");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn post_head(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req.into_bytes()
}

/// Reads a response head; returns it and whatever of the body came with it.
async fn read_head(tcp: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = tcp.read(&mut chunk).await.expect("read a response");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            return (head, buf[end + 4..].to_vec());
        }
    }
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A request on a kept-alive connection whose response is JSON with a length.
async fn exchange(tcp: &mut TcpStream, request: &[u8]) -> (String, Vec<u8>) {
    tcp.write_all(request).await.expect("send");
    let (head, mut body) = read_head(tcp).await;
    let len: usize = header(&head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut chunk = [0u8; 4096];
    while body.len() < len {
        let n = tcp.read(&mut chunk).await.expect("read a body");
        assert!(n > 0, "the body ended early");
        body.extend_from_slice(&chunk[..n]);
    }
    (head, body)
}

/// Counts `needle` in what a stream sends; `seen` counts every stream's sightings, and
/// `last` records when the latest one arrived.
async fn watch(
    mut tcp: TcpStream,
    needle: &'static [u8],
    seen: Arc<AtomicUsize>,
    last: Arc<Mutex<Instant>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        carry.extend_from_slice(&chunk[..n]);
        let mut found = 0;
        let mut from = 0;
        while let Some(p) = carry[from..]
            .windows(needle.len())
            .position(|w| w == needle)
        {
            found += 1;
            from += p + needle.len();
        }
        if found > 0 {
            *last.lock().await = Instant::now();
            seen.fetch_add(found, Ordering::Relaxed);
        }
        // Keep a tail in case the needle straddles two reads, but nothing already counted.
        let keep_from = from.max(carry.len().saturating_sub(needle.len() - 1));
        carry.drain(..keep_from);
    }
}

/// Writes the file `WRITES` times; for each, the delay until `expected` more sightings
/// have arrived, beyond the coalescing window. Returns (p50, p99) in ms.
async fn delays(
    server: &HttpServer,
    seen: &AtomicUsize,
    last: &Mutex<Instant>,
    expected: usize,
) -> (f64, f64, usize) {
    let mut delays = Vec::new();
    let mut missing = 0;
    for w in 1..=WRITES {
        let before = seen.load(Ordering::Relaxed);
        let started = Instant::now();
        server.write(w);
        let deadline = started + Duration::from_secs(20);
        while seen.load(Ordering::Relaxed) < before + expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let got = seen.load(Ordering::Relaxed) - before;
        missing += expected.saturating_sub(got);
        let at = *last.lock().await;
        delays.push(at.saturating_duration_since(started).as_secs_f64() * 1000.0 - WINDOW_MS);
        // Quiet time, so that each write is notified on its own.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    delays.sort_by(f64::total_cmp);
    let at = |q: f64| delays[((delays.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99), missing)
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"scale","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// `n` listen streams on one instance; returns (KiB per stream, p50, p99).
async fn listen(n: usize, print: bool) -> (f64, f64, f64) {
    let server = HttpServer::start(n);
    let addr = server.addr;
    let seen = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new(Instant::now()));
    // Warm the server with a few streams, then measure from there.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":["file:///a.txt"]}},"_meta":{META}}}}}"#
    );
    let request = Arc::new(post_head(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &body,
    ));
    let open = |count: usize| {
        let request = Arc::clone(&request);
        let (seen, last) = (Arc::clone(&seen), Arc::clone(&last));
        async move {
            let mut opened = Vec::with_capacity(count);
            for _ in 0..count {
                let mut tcp = TcpStream::connect(addr).await.expect("connect");
                tcp.set_nodelay(true).ok();
                tcp.write_all(&request).await.expect("send");
                let (head, _) = read_head(&mut tcp).await;
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                opened.push(tokio::spawn(watch(
                    tcp,
                    b"resources/updated",
                    Arc::clone(&seen),
                    Arc::clone(&last),
                )));
            }
            opened
        }
    };
    let mut tasks = open(16).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss_kib();
    let started = Instant::now();
    tasks.extend(open(n.saturating_sub(16)).await);
    let opening = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.rss_kib();
    let per_stream = (after.saturating_sub(before)) as f64 / n.saturating_sub(16).max(1) as f64;
    let (p50, p99, missing) = delays(&server, &seen, &last, n).await;
    if print {
        println!(
            "\n### {n} subscriptions/listen streams over HTTP, one instance, {} worker thread(s)\n",
            THREADS.load(Ordering::Relaxed)
        );
        println!(
            "| streams | opened per s | memory per idle stream | write → last notification, beyond the {WINDOW_MS} ms window: p50 | p99 | notifications missing |"
        );
        println!("|---|---|---|---|---|---|");
        println!(
            "| {n} | {:.0} | {:.1} KiB | {p50:.1} ms | {p99:.1} ms | {missing} |",
            n as f64 / opening,
            per_stream
        );
    }
    for t in tasks {
        t.abort();
    }
    (per_stream, p50, p99)
}

/// `n` legacy sessions: initialize rate and memory per session, then each subscribed to
/// one file with its GET stream open, and the notification delay.
async fn sessions(n: usize) {
    let server = HttpServer::start(n);
    let addr = server.addr;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scale","version":"0"}}}"#;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss_kib();
    let cpu_before = cpu_s(server.pid());
    let started = Instant::now();
    // 32 connections kept alive, each initializing its share of the sessions.
    let workers = 32;
    let mut handles = Vec::new();
    for w in 0..workers {
        let share = n / workers + usize::from(w < n % workers);
        handles.push(tokio::spawn(async move {
            let mut tcp = TcpStream::connect(addr).await.expect("connect");
            tcp.set_nodelay(true).ok();
            let request = post_head(addr, &[], init);
            let mut ids = Vec::with_capacity(share);
            for _ in 0..share {
                let (head, _) = exchange(&mut tcp, &request).await;
                let id = header(&head, "mcp-session-id")
                    .expect("a session id")
                    .to_owned();
                ids.push(id);
            }
            ids
        }));
    }
    let mut ids = Vec::with_capacity(n);
    for h in handles {
        ids.extend(h.await.expect("initialize"));
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_s(server.pid()) - cpu_before;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let per_session = server.rss_kib().saturating_sub(before) as f64 / n as f64;
    // Each session: initialized, subscribe, then its GET stream.
    let seen = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new(Instant::now()));
    let ids = Arc::new(ids);
    let mut handles = Vec::new();
    for w in 0..workers {
        let ids = Arc::clone(&ids);
        handles.push(tokio::spawn(async move {
            let mut tcp = TcpStream::connect(addr).await.expect("connect");
            tcp.set_nodelay(true).ok();
            for id in ids.iter().skip(w).step_by(workers) {
                let h = [("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
                let done = post_head(addr, &h, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
                let (head, _) = exchange(&mut tcp, &done).await;
                assert!(head.starts_with("HTTP/1.1 202"), "{head}");
                let sub = post_head(
                    addr,
                    &h,
                    r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///a.txt"}}"#,
                );
                let (head, _) = exchange(&mut tcp, &sub).await;
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            }
        }));
    }
    for h in handles {
        h.await.expect("subscribe");
    }
    let mut tasks = Vec::with_capacity(n);
    for id in ids.iter() {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.set_nodelay(true).ok();
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
        );
        tcp.write_all(get.as_bytes()).await.expect("send");
        let (head, _) = read_head(&mut tcp).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        tasks.push(tokio::spawn(watch(
            tcp,
            b"resources/updated",
            Arc::clone(&seen),
            Arc::clone(&last),
        )));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_streams = server.rss_kib() as f64 / 1024.0;
    let (p50, p99, missing) = delays(&server, &seen, &last, n).await;
    println!(
        "\n### {n} legacy (2025-11-25) HTTP sessions, one instance, {} worker thread(s)\n",
        THREADS.load(Ordering::Relaxed)
    );
    println!(
        "| sessions | initializes per s | server CPU per initialize | memory per session | RSS with every GET stream open | write → last notification beyond the window: p50 | p99 | missing |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {n} | {:.0} | {:.0} µs | {per_session:.1} KiB | {rss_streams:.0} MiB | {p50:.1} ms | {p99:.1} ms | {missing} |",
        n as f64 / seconds,
        cpu * 1e6 / n as f64,
    );
    for t in tasks {
        t.abort();
    }
}

fn growth(runtime: &tokio::runtime::Runtime) {
    listing_table(&[1_000, 10_000, 100_000, 1_000_000]);
    println!("\n### Notification delay by listeners (HTTP listen streams, one instance)\n");
    println!(
        "| listeners | memory per idle stream | write → last notification beyond the window: p50 | p99 |"
    );
    println!("|---|---|---|---|");
    for n in [1, 100, 1_000, 10_000] {
        let (kib, p50, p99) = runtime.block_on(listen(n, false));
        println!("| {n} | {kib:.1} KiB | {p50:.1} ms | {p99:.1} ms |");
    }
}
