//! The cost of crossing instances, on a cluster started by `scripts/cluster` (three
//! instances, HAProxy, Redis), with the release binary: `cargo bench -p rsrc-cli --bench
//! cluster`.
//!
//! - Change-to-notification latency: 1,000 `subscriptions/listen` streams spread evenly
//!   over the three instances, all subscribed to one file, which is rewritten 20 times;
//!   the delay from each write to each stream's `updated` (p50, p99, max). For
//!   comparison, the same with every stream on the instance that watches the files (no
//!   instance crossed). Both include the watcher's coalescing window (20 ms here).
//! - Reads per second (`wrk`, 2026-07-28 `resources/read` of a small file) through the
//!   balancer and against one instance directly.
//!
//! The figures are for the machine they ran on, which matters: on 2 cores three
//! instances, HAProxy, Redis and the load generator share the same two.
#![allow(clippy::print_stdout)] // The report is the output.

#[path = "../tests/common/cluster.rs"]
mod cluster;

use std::net::SocketAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cluster::Cluster;

const LISTENERS: usize = 1000;
const WRITES: usize = 20;

/// Opens `LISTENERS` streams over `addrs` in turn; each records when it hears an update.
async fn latencies(c: &Cluster, addrs: &[SocketAddr]) -> Vec<f64> {
    let heard: Arc<Mutex<Vec<(usize, Instant)>>> = Arc::default();
    let round = Arc::new(Mutex::new(0usize));
    let mut tasks = Vec::new();
    for i in 0..LISTENERS {
        let mut stream = c.listen(addrs[i % addrs.len()], &["file:///a.txt"]).await;
        let (heard, round) = (Arc::clone(&heard), Arc::clone(&round));
        tasks.push(tokio::spawn(async move {
            while let Some(event) = stream.next_event(Duration::from_secs(30)).await {
                if event.data.contains("notifications/resources/updated") {
                    let r = *round.lock().unwrap();
                    heard.lock().unwrap().push((r, Instant::now()));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut delays = Vec::new();
    for r in 1..=WRITES {
        *round.lock().unwrap() = r;
        let start = Instant::now();
        std::fs::write(c.docs.join("a.txt"), format!("version {r}")).unwrap();
        // Quiet time between writes: every stream hears each write once.
        tokio::time::sleep(Duration::from_millis(700)).await;
        let got = heard.lock().unwrap();
        delays.extend(
            got.iter()
                .filter(|(round, _)| *round == r)
                .map(|(_, at)| at.duration_since(start).as_secs_f64() * 1000.0),
        );
    }
    for t in tasks {
        t.abort();
    }
    delays.sort_by(f64::total_cmp);
    delays
}

fn report(label: &str, delays: &[f64]) {
    let at = |q: f64| delays[((delays.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{label}: {} notifications of {} expected; p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        delays.len(),
        LISTENERS * WRITES,
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// Requests per second `wrk` reaches for a small read at `addr`.
fn reads_per_second(addr: SocketAddr) -> String {
    let script = std::env::temp_dir().join(format!("rsrc-read-{}.lua", std::process::id()));
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": {"uri": "file:///a.txt", "_meta": rsrc_testkit::modern_meta()}
    })
    .to_string();
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.body = {body:?}\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Accept\"] = \"application/json, text/event-stream\"\n\
             wrk.headers[\"MCP-Protocol-Version\"] = \"2026-07-28\"\n\
             wrk.headers[\"Mcp-Method\"] = \"resources/read\"\n\
             wrk.headers[\"Mcp-Name\"] = \"file:///a.txt\"\n"
        ),
    )
    .unwrap();
    let out = Command::new("wrk")
        .args(["-t1", "-c32", "-d8s", "-s"])
        .arg(&script)
        .arg(format!("http://{addr}/mcp"))
        .output()
        .expect("wrk (Debian's wrk) runs");
    let _ = std::fs::remove_file(&script);
    let text = String::from_utf8_lossy(&out.stdout);
    let rate = text
        .lines()
        .find(|l| l.starts_with("Requests/sec"))
        .unwrap_or("Requests/sec: ?")
        .to_owned();
    let errors = text
        .lines()
        .find(|l| l.contains("Non-2xx") || l.contains("Socket errors"))
        .map(|l| format!(" ({})", l.trim()))
        .unwrap_or_default();
    format!("{rate}{errors}")
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = Cluster::start_with(0, "--max-streams 2000 --watch-window 20ms");
        let watcher = c.lease_holder("file:///").await;
        let home = c.instances[c.pids.iter().position(|&p| p == watcher).unwrap()];
        report(
            "1,000 listeners over 3 instances",
            &latencies(&c, &c.instances).await,
        );
        report(
            "1,000 listeners on the watching instance",
            &latencies(&c, &[home]).await,
        );
        println!(
            "reads through the balancer: {}",
            reads_per_second(c.balancer)
        );
        println!(
            "reads against one instance: {}",
            reads_per_second(c.instances[0])
        );
    });
}
