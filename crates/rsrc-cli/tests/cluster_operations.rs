//! Operating a cluster (`scripts/cluster`: three instances behind HAProxy, which checks
//! each one's `/readyz`): a draining instance gets no new requests while its requests in
//! flight complete, and a real Prometheus (Debian's `prometheus`) scraping two instances
//! under load sees request rates, a latency quantile and a cache hit ratio consistent
//! with the load sent. Needs redis-server, haproxy and prometheus: skipped with a message
//! without them, unless CI is set.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[path = "common/cluster.rs"]
mod cluster;
mod common;
use cluster::Cluster;

fn have(program: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("command -v {program} || test -x /usr/sbin/{program}"),
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("CI").is_some() {
        panic!("{program} is required on CI");
    }
    if !found {
        eprintln!("{program} not installed: test skipped");
    }
    found
}

/// The value of one sample of an exposition.
fn sample(exposition: &str, wanted: &str) -> f64 {
    exposition
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(s, _)| *s == wanted)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0.0)
}

/// Reads `file:///a.txt` through `addr` and checks its text.
async fn read_a(c: &Cluster, addr: SocketAddr) {
    let res = c
        .call(addr, "resources/read", json!({"uri": "file:///a.txt"}))
        .await;
    assert_eq!(res["result"]["contents"][0]["text"], "first", "{res}");
}

const READS: &str = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="resources/read",mcp_protocol_version="2026-07-28",network_transport="tcp"}"#;

async fn status(admin: SocketAddr, path: &str) -> u16 {
    reqwest::get(format!("http://{admin}{path}"))
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// Waits until `path` (a file) holds `needle`, boundedly.
async fn logged(path: &Path, needle: &str) {
    let what = format!("{} never said {needle:?}", path.display());
    common::eventually(&what, Duration::from_secs(20), || async {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .contains(needle)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_instance_gets_no_new_requests_while_its_requests_in_flight_complete() {
    if !have("redis-server") || !have("haproxy") {
        return;
    }
    let c = Cluster::start_with(
        0,
        "--db-poll 100ms --watch-window 20ms --drain-delay 8s --shutdown-grace 20s -v",
    );
    // A large read, on instance 1 directly, of which the client reads only the start.
    let big = format!("{}END-OF-FILE", "a".repeat(16 * 1024 * 1024));
    std::fs::write(c.docs.join("big.txt"), &big).unwrap();
    let mut peer = c.peer(c.instances[0]);
    let msg = peer.modern_request("resources/read", json!({"uri": "file:///big.txt"}));
    let body = msg.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in peer.headers_for(&msg) {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut slow = tokio::net::TcpStream::connect(c.instances[0])
        .await
        .unwrap();
    slow.write_all(request.as_bytes()).await.unwrap();
    let mut received = vec![0u8; 64 * 1024];
    let n = slow.read(&mut received).await.unwrap();
    received.truncate(n);
    assert!(
        received.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&received)
    );

    // SIGTERM: not ready at once; HAProxy takes the instance out.
    let draining = c.pids[0];
    c.term(draining);
    common::eventually(
        "still ready after SIGTERM",
        Duration::from_secs(5),
        || async { status(c.admins[0], "/readyz").await == 503 },
    )
    .await;
    logged(&c.state.join("haproxy.log"), "rsrc1 is DOWN").await;

    // New requests through the balancer all succeed, and none reaches the draining one.
    let before = sample(&c.scrape(c.admins[0]).await, READS);
    for _ in 0..30 {
        read_a(&c, c.balancer).await;
    }
    let after = sample(&c.scrape(c.admins[0]).await, READS);
    assert_eq!(before, after, "the draining instance was sent new requests");

    // Past the drain it stops accepting; the read in flight still completes.
    logged(&c.state.join("rsrc1.log"), "no new connections").await;
    assert!(
        tokio::net::TcpStream::connect(c.instances[0])
            .await
            .is_err(),
        "it still accepts after the drain"
    );
    let mut rest = Vec::new();
    slow.read_to_end(&mut rest).await.unwrap();
    received.extend_from_slice(&rest);
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.contains("END-OF-FILE"),
        "the read in flight was cut short"
    );
    assert!(received.len() > big.len(), "{} bytes", received.len());
    // Then it exits.
    common::eventually(
        "the drained instance does not exit",
        Duration::from_secs(30),
        || async { !Path::new(&format!("/proc/{draining}")).exists() },
    )
    .await;
}

/// A Prometheus server on loopback scraping `targets` every second.
struct Prometheus {
    child: tokio::process::Child,
    api: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    async fn start(targets: &[SocketAddr]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: rsrc\n    scrape_interval: 1s\n    \
             static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let api: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = tokio::process::Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={api}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .expect("prometheus starts");
        common::eventually(
            "prometheus is not ready",
            Duration::from_secs(60),
            || async { status(api, "/-/ready").await == 200 },
        )
        .await;
        Prometheus {
            child,
            api,
            _dir: dir,
        }
    }

    /// An instant query's vector: each series' labels and value.
    async fn query(&self, promql: &str) -> Vec<(Value, f64)> {
        let text = reqwest::Client::new()
            .get(format!("http://{}/api/v1/query", self.api))
            .query(&[("query", promql)])
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let res: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(res["status"], "success", "{promql}: {res}");
        res["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let v = s["value"][1].as_str().unwrap().parse().unwrap_or(f64::NAN);
                (s["metric"].clone(), v)
            })
            .collect()
    }

    /// Queries until every series of the result passes `ok` (and there is one), boundedly.
    async fn until(&self, promql: &str, ok: impl Fn(&[(Value, f64)]) -> bool) {
        let what = format!("{promql} never held");
        common::eventually(&what, Duration::from_secs(60), || async {
            let got = self.query(promql).await;
            !got.is_empty() && ok(&got)
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scraping_two_instances_under_load_sees_rates_latency_and_cache_hits() {
    if !have("redis-server") || !have("haproxy") || !have("prometheus") {
        return;
    }
    let c = Cluster::start(20);
    let mut prometheus = Prometheus::start(&c.admins[..2]).await;
    prometheus
        .until("up", |s| s.len() == 2 && s.iter().all(|(_, v)| *v == 1.0))
        .await;

    // Load through the balancer: reads, and listings (whose directories are cached); 19
    // reads and a listing, so that round-robin sends the listings to each instance in turn.
    let mut reads = 0u32;
    let load = async {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            for _ in 0..19 {
                read_a(&c, c.balancer).await;
                reads += 1;
            }
            let res = c.call(c.balancer, "resources/list", json!({})).await;
            assert!(res["result"]["resources"].is_array(), "{res}");
            let rates = prometheus
                .query(r#"sum by (instance) (rate(mcp_server_operation_duration_seconds_count{mcp_method_name="resources/read"}[5s]))"#)
                .await;
            let hits = prometheus
                .query(r#"sum(rate(rsrc_cache_lookups_total{outcome="hit"}[10s])) / sum(rate(rsrc_cache_lookups_total[10s]))"#)
                .await;
            if rates.len() == 2
                && rates.iter().all(|(_, v)| *v > 0.0)
                && hits.first().is_some_and(|(_, v)| *v > 0.0)
            {
                return (rates, hits);
            }
            if Instant::now() >= deadline {
                let totals = prometheus
                    .query("sum by (instance, cache, outcome) (rsrc_cache_lookups_total)")
                    .await;
                panic!("the load never showed: {rates:?} {hits:?} {totals:?}");
            }
        }
    };
    let (rates, hits) = load.await;
    for (labels, rate) in &rates {
        assert!(rate.is_finite() && *rate > 0.0, "{labels}: {rate}");
    }
    let ratio = hits[0].1;
    assert!(ratio > 0.0 && ratio <= 1.0, "cache hit ratio {ratio}");
    let p99 = prometheus
        .query(r#"histogram_quantile(0.99, sum by (le) (rate(mcp_server_operation_duration_seconds_bucket{mcp_method_name="resources/read"}[30s])))"#)
        .await;
    assert!(
        p99.first()
            .is_some_and(|(_, v)| v.is_finite() && *v > 0.0 && *v <= 300.0),
        "p99 {p99:?}"
    );

    // Consistent with the load: every read sent was counted by exactly one instance, and
    // what Prometheus last scraped of the two it watches is what they say now.
    let mut counted = 0.0;
    let mut direct = Vec::new();
    for admin in &c.admins {
        let n = sample(&c.scrape(*admin).await, READS);
        direct.push(n);
        counted += n;
    }
    assert_eq!(
        counted,
        f64::from(reads),
        "reads sent against reads counted"
    );
    let watched = direct[0] + direct[1];
    prometheus
        .until(
            r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="resources/read"})"#,
            |s| s[0].1 == watched,
        )
        .await;
    prometheus.child.kill().await.unwrap();
}
