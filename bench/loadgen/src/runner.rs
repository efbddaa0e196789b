//! The runner: every server, transport and workload in turn, REPEAT rounds, a fresh
//! server process for each measurement, and one JSON line per measurement.
//!
//! Invariant: a measurement is taken only on a server that answered its handshake and
//! the warm-up correctly, and its process (and process group) is gone before the next
//! one starts; a failure is recorded with its reason and never carries figures.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::Child;

use crate::conn::{Conn, Http, Stdio};
use crate::fixture::Fixture;
use crate::procfs;
use crate::reaper;
use crate::servers::{self, Server, Transport};
use crate::stats::percentile;
use crate::workloads::{self, Counts, Workload};

/// The loadgen's CPU fraction above which it, not the server, is taken to be the limit.
pub(crate) const SATURATED: f64 = 0.9;
/// How long a server may take to listen on its port and answer `initialize`.
const START_DEADLINE: Duration = Duration::from_secs(90);

/// What to run.
pub(crate) struct Plan {
    pub(crate) servers: Vec<Server>,
    pub(crate) transports: Vec<Transport>,
    pub(crate) workloads: Vec<Workload>,
    pub(crate) counts: Counts,
    pub(crate) repeat: usize,
    pub(crate) cwd: PathBuf,
    pub(crate) logs: PathBuf,
}

/// One measurement, as written to the results file.
#[derive(Clone, Debug)]
pub(crate) struct Record {
    pub(crate) round: usize,
    pub(crate) server: String,
    pub(crate) transport: Transport,
    pub(crate) workload: Workload,
    /// The figures, or why there are none.
    pub(crate) outcome: Result<Figures, String>,
}

/// A measurement's figures.
#[derive(Clone, Debug, Default)]
pub(crate) struct Figures {
    pub(crate) ops: usize,
    pub(crate) requests: usize,
    pub(crate) seconds: f64,
    pub(crate) ops_per_s: f64,
    pub(crate) p50_us: u64,
    pub(crate) p99_us: u64,
    pub(crate) max_us: u64,
    pub(crate) cpu_us_per_op: f64,
    pub(crate) peak_rss_kib: u64,
    pub(crate) idle_rss_kib: u64,
    pub(crate) startup_ms: f64,
    pub(crate) loadgen_cpu_frac: f64,
    pub(crate) bytes: usize,
    pub(crate) notes: Vec<(&'static str, Value)>,
}

impl Record {
    /// The record as one JSON line.
    pub(crate) fn json(&self) -> Value {
        let mut line = json!({
            "round": self.round,
            "server": self.server,
            "transport": self.transport.name(),
            "workload": self.workload.name(),
            "ok": self.outcome.is_ok(),
        });
        match &self.outcome {
            Err(reason) => line["error"] = json!(reason),
            Ok(f) => {
                let fields = json!({
                    "ops": f.ops, "requests": f.requests, "seconds": f.seconds,
                    "ops_per_s": f.ops_per_s, "p50_us": f.p50_us, "p99_us": f.p99_us,
                    "max_us": f.max_us, "cpu_us_per_op": f.cpu_us_per_op,
                    "peak_rss_kib": f.peak_rss_kib, "idle_rss_kib": f.idle_rss_kib,
                    "startup_ms": f.startup_ms, "loadgen_cpu_frac": f.loadgen_cpu_frac,
                    "bytes_received": f.bytes,
                });
                for (k, v) in fields.as_object().expect("an object") {
                    line[k] = v.clone();
                }
                for (k, v) in &f.notes {
                    line[*k] = v.clone();
                }
            }
        }
        line
    }
}

/// A free loopback port, as the kernel gives one.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A running server with its connection.
struct Running {
    child: Child,
    pid: u32,
    conn: Arc<Conn>,
    startup_ms: f64,
}

/// Starts `server` on `transport`, waits until it listens (HTTP) and answers the
/// handshake.
async fn start(
    server: &Server,
    transport: Transport,
    fixture: &Fixture,
    plan: &Plan,
) -> Result<Running, String> {
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    let command = servers::expand(
        server.command(transport).expect("checked"),
        &fixture.root,
        port,
    );
    let log_path = plan
        .logs
        .join(format!("{}-{}.log", server.name, transport.name()));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    let started = Instant::now();
    let mut child = servers::spawn(&command, transport, &plan.cwd, log)
        .map_err(|e| format!("{command}: {e}"))?;
    let pid = child.id().ok_or("the server ended at once")?;
    reaper::started(pid);
    // A server that fails to start is ended with everything it started.
    let ready = async {
        let mut conn = match transport {
            Transport::Stdio => {
                let stdin = child.stdin.take().expect("piped");
                let stdout = child.stdout.take().expect("piped");
                Conn::Stdio(Stdio::new(stdin, stdout))
            }
            Transport::Http => {
                let address = format!("127.0.0.1:{port}");
                loop {
                    if tokio::net::TcpStream::connect(&address).await.is_ok() {
                        break;
                    }
                    if let Ok(Some(status)) = child.try_wait() {
                        return Err(format!(
                            "the server exited ({status}) before listening; see {}",
                            log_path.display()
                        ));
                    }
                    if started.elapsed() > START_DEADLINE {
                        return Err(format!(
                            "the server did not listen on {address} within {START_DEADLINE:?}"
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Conn::Http(Http::new(&format!("http://{address}{}", server.path), 128)?)
            }
        };
        tokio::time::timeout(START_DEADLINE, conn.initialize())
            .await
            .map_err(|_| "no answer to initialize in time".to_owned())?
            .map_err(|e| format!("{e}; see {}", log_path.display()))?;
        Ok::<_, String>(conn)
    }
    .await;
    let conn = ready.inspect_err(|_| reaper::kill_group(pid))?;
    let startup_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(Running {
        child,
        pid,
        conn: Arc::new(conn),
        startup_ms,
    })
}

/// Ends the server: stdin closed (stdio), then the whole process group killed.
async fn stop(running: Running) {
    let Running {
        mut child,
        pid,
        conn,
        ..
    } = running;
    drop(conn);
    reaper::kill_group(pid);
    let _ = child.kill().await;
}

/// One measurement of `workload` on a fresh `server`.
async fn measure(
    server: &Server,
    transport: Transport,
    workload: Workload,
    fixture: &Arc<Fixture>,
    plan: &Plan,
) -> Result<Figures, String> {
    let running = start(server, transport, fixture, plan).await?;
    let result = async {
        let idle_rss_kib = procfs::status_kib(running.pid, "VmRSS");
        workloads::warm_up(&running.conn, fixture, plan.counts.warmup).await?;
        let cpu_before = procfs::cpu_seconds(running.pid);
        let own_before = procfs::own_cpu_seconds();
        let started = Instant::now();
        let mut measured =
            workloads::run(workload, running.conn.clone(), fixture.clone(), plan.counts).await?;
        let wall = started.elapsed().as_secs_f64();
        let cpu = procfs::cpu_seconds(running.pid) - cpu_before;
        let own = procfs::own_cpu_seconds() - own_before;
        let peak_rss_kib = procfs::status_kib(running.pid, "VmHWM");
        let ops = measured.ops.max(1);
        let mut figures = Figures {
            ops: measured.ops,
            requests: measured.requests,
            seconds: measured.seconds,
            ops_per_s: measured.ops as f64 / measured.seconds.max(1e-9),
            p50_us: percentile(&mut measured.latencies_us, 50.0).unwrap_or(0),
            p99_us: percentile(&mut measured.latencies_us, 99.0).unwrap_or(0),
            max_us: percentile(&mut measured.latencies_us, 100.0).unwrap_or(0),
            cpu_us_per_op: cpu * 1e6 / ops as f64,
            peak_rss_kib,
            idle_rss_kib,
            startup_ms: running.startup_ms,
            loadgen_cpu_frac: own / wall.max(1e-9),
            bytes: measured.bytes,
            notes: std::mem::take(&mut measured.notes),
        };
        if figures.loadgen_cpu_frac > SATURATED {
            figures.notes.push(("loadgen_saturated", json!(true)));
        }
        Ok::<_, String>(figures)
    }
    .await;
    stop(running).await;
    result
}

/// Runs the plan; each record is handed to `record` as it is made.
pub(crate) async fn run(
    plan: &Plan,
    fixture: Arc<Fixture>,
    mut record: impl FnMut(&Record),
) -> Vec<Record> {
    let mut records = Vec::new();
    for round in 0..plan.repeat {
        // Each round starts with another server, so none is always first or last.
        let mut order: Vec<&Server> = plan.servers.iter().collect();
        let shift = round % order.len().max(1);
        order.rotate_left(shift);
        for server in order {
            for &transport in &plan.transports {
                if server.command(transport).is_none() {
                    continue;
                }
                for &workload in &plan.workloads {
                    eprintln!(
                        "round {}/{}: {} {} {}",
                        round + 1,
                        plan.repeat,
                        server.name,
                        transport.name(),
                        workload.name()
                    );
                    let outcome = measure(server, transport, workload, &fixture, plan).await;
                    if let Err(reason) = &outcome {
                        eprintln!(
                            "*** FAIL {} {} {}: {reason}",
                            server.name,
                            transport.name(),
                            workload.name()
                        );
                    }
                    let made = Record {
                        round,
                        server: server.name.clone(),
                        transport,
                        workload,
                        outcome,
                    };
                    record(&made);
                    records.push(made);
                }
            }
        }
    }
    records
}

/// The directory a results file's logs go to.
pub(crate) fn logs_dir(results: &Path, stamp: &str) -> PathBuf {
    results.join("logs").join(stamp)
}
