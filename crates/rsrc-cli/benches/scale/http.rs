//! A raw HTTP/1.1 client, light enough for ten thousand open streams in one process:
//! requests written whole, response heads and bodies read by their length, and streams
//! watched for a needle. Invariant: a needle is counted once, even when it straddles two
//! reads.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

pub(crate) fn post_head(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
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
pub(crate) async fn read_head(tcp: &mut TcpStream) -> (String, Vec<u8>) {
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

pub(crate) fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A request on a kept-alive connection whose response is JSON with a length.
pub(crate) async fn exchange(tcp: &mut TcpStream, request: &[u8]) -> (String, Vec<u8>) {
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
pub(crate) async fn watch(
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
