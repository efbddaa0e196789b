//! Many listeners on one HTTP instance: `subscriptions/listen` streams (2026) and legacy
//! sessions with their GET streams (2025-11-25): the memory each costs, and the delay
//! from a write of the watched file to the last listener's notification, beyond the
//! coalescing window. Invariant: a notification that never came is counted as missing,
//! never hidden in the delays.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use crate::http::{exchange, header, post_head, read_head, watch};
use crate::servers::{HttpServer, THREADS, WINDOW_MS, cpu_s};

/// Writes of the watched file per measurement.
const WRITES: usize = 20;

/// Writes the file `WRITES` times; for each, the delay until `expected` more sightings
/// have arrived, beyond the coalescing window. Returns (p50, p99) in ms.
pub(crate) async fn delays(
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

pub(crate) const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"scale","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// `n` listen streams on one instance; returns (KiB per stream, p50, p99).
pub(crate) async fn listen(n: usize, print: bool) -> (f64, f64, f64) {
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
pub(crate) async fn sessions(n: usize) {
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
