//! `mcp-bench`: a reproducible benchmark of MCP servers' resources (docs/benchmark.md).
//!
//! `mcp-bench fixture DIR` writes the fixture; `mcp-bench run` measures the servers of
//! `bench/servers.toml` over stdio and Streamable HTTP, in rounds, and writes one JSON
//! line per measurement and a Markdown report of medians and pairwise ratios;
//! `mcp-bench floor walk|fanout` measures what the machine allows any server (`floor.rs`).
//!
//! Invariant: a wrong answer is never counted as speed: it fails its workload, shows as
//! FAIL in the report, and makes the run exit non-zero. The report goes to stdout (it is
//! this program's product); progress and failures go to stderr.
#![allow(clippy::print_stdout)]

mod conn;
mod fixture;
mod floor;
mod json;
mod procfs;
mod reaper;
mod report;
mod runner;
mod servers;
mod stats;
mod workloads;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use servers::Transport;
use workloads::{Counts, Workload};

#[derive(Parser)]
#[command(version, about = "A reproducible benchmark of MCP servers' resources")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Writes the fixture under DIR/root (unless DIR/stamp says it is there).
    Fixture { dir: PathBuf },
    /// Measures servers and prints the Markdown report.
    Run(Run),
    /// What this machine allows any server, with no MCP, HTTP or JSON: the reference
    /// measurements of the scale goals (docs/performance.md).
    #[command(subcommand)]
    Floor(Floor),
}

#[derive(Subcommand)]
enum Floor {
    /// Every file of DIR with its size (a `read_dir` per directory, a `stat` per entry),
    /// on one thread and on every core: files per second.
    Walk { dir: PathBuf },
    /// One 300-byte event written to each of N loopback TCP connections and read at the
    /// other end: first write to last read, p50 and p99 of 20 rounds.
    Fanout {
        #[arg(default_value_t = 10_000)]
        n: usize,
        /// The reading ends, in the child process the measurement starts.
        #[arg(long, hide = true)]
        connect: Option<std::net::SocketAddr>,
    },
}

#[derive(clap::Args)]
struct Run {
    /// Servers to measure (names from the servers file); all whose program exists if none.
    names: Vec<String>,
    /// The servers file.
    #[arg(long, default_value = "bench/servers.toml")]
    servers: PathBuf,
    /// Where the fixture is (made if missing).
    #[arg(long, default_value = "bench/fixture")]
    fixture: PathBuf,
    /// Where results and server logs go.
    #[arg(long, default_value = "bench/results")]
    results: PathBuf,
    /// Rounds: every server measured this many times, in turn.
    #[arg(long, env = "REPEAT", default_value_t = 1)]
    repeat: usize,
    /// A smoke pass with tiny counts: every path taken, no figure meaningful.
    #[arg(long)]
    quick: bool,
    /// Transports, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "stdio,http")]
    transports: Vec<String>,
    /// Workloads, comma-separated (default all).
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// The server the others are compared with.
    #[arg(long, default_value = "rsrc")]
    reference: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        match cli.command {
            Command::Fixture { dir } => {
                std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
                let fixture = fixture::prepare(&dir).map_err(|e| e.to_string())?;
                eprintln!(
                    "fixture: {} files under {}",
                    fixture.len(),
                    fixture.root.display()
                );
                Ok(true)
            }
            Command::Floor(Floor::Walk { dir }) => floor::walk_floor(&dir).map(|()| true),
            Command::Floor(Floor::Fanout { n, connect: None }) => {
                floor::fanout_floor(n).await.map(|()| true)
            }
            Command::Floor(Floor::Fanout {
                n,
                connect: Some(addr),
            }) => floor::fanout_reader(n, addr).await.map(|()| true),
            // Interrupted, every server still running is killed before the exit.
            Command::Run(run) => tokio::select! {
                done = measure(run) => done,
                code = reaper::interrupted() => std::process::exit(code.into()),
            },
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("mcp-bench: {e}");
            ExitCode::from(2)
        }
    }
}

/// `run`: Ok(false) when a workload failed.
async fn measure(run: Run) -> Result<bool, String> {
    let text = std::fs::read_to_string(&run.servers)
        .map_err(|e| format!("{}: {e}", run.servers.display()))?;
    let mut all = servers::parse(&text).map_err(|e| format!("{}: {e}", run.servers.display()))?;
    if let Some(unknown) = run
        .names
        .iter()
        .find(|n| !all.iter().any(|s| &s.name == *n))
    {
        return Err(format!(
            "no server {unknown:?} in {}",
            run.servers.display()
        ));
    }
    if !run.names.is_empty() {
        all.retain(|s| run.names.contains(&s.name));
    }
    let transports = run
        .transports
        .iter()
        .map(|t| Transport::parse(t).ok_or_else(|| format!("no transport {t:?} (stdio, http)")))
        .collect::<Result<Vec<_>, _>>()?;
    let workloads = if run.workloads.is_empty() {
        workloads::ALL.to_vec()
    } else {
        run.workloads
            .iter()
            .map(|w| Workload::parse(w).ok_or_else(|| format!("no workload {w:?}")))
            .collect::<Result<Vec<_>, _>>()?
    };
    std::fs::create_dir_all(&run.fixture).map_err(|e| e.to_string())?;
    let fixture =
        Arc::new(fixture::prepare(&run.fixture).map_err(|e| format!("the fixture: {e}"))?);
    let mut servers = Vec::new();
    for server in all {
        match server.missing(&fixture.root).await {
            Some(why) if run.names.contains(&server.name) => return Err(why),
            Some(why) => eprintln!("skipped {why}"),
            None => servers.push(server),
        }
    }
    if servers.is_empty() {
        return Err("no server to measure".into());
    }
    let stamp = utc_stamp();
    let logs = runner::logs_dir(&run.results, &stamp);
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    let jsonl_path = run.results.join(format!("{stamp}.jsonl"));
    let mut jsonl = std::fs::File::create(&jsonl_path).map_err(|e| e.to_string())?;
    let plan = runner::Plan {
        servers,
        transports,
        workloads,
        counts: if run.quick {
            Counts::QUICK
        } else {
            Counts::FULL
        },
        repeat: run.repeat.max(1),
        cwd: std::env::current_dir().map_err(|e| e.to_string())?,
        logs,
    };
    let records = runner::run(&plan, fixture, |r| {
        let _ = writeln!(jsonl, "{}", r.json());
    })
    .await;
    let names: Vec<String> = plan.servers.iter().map(|s| s.name.clone()).collect();
    let heading = format!(
        "## Run {stamp}\n\n{} round(s){}; {}; servers {}",
        plan.repeat,
        if run.quick {
            ", quick (a smoke pass: no figure is meaningful)"
        } else {
            ""
        },
        machine(),
        names.join(", ")
    );
    let report = report::markdown(&records, &names, &run.reference, &heading);
    let md_path = run.results.join(format!("{stamp}.md"));
    std::fs::write(&md_path, &report).map_err(|e| e.to_string())?;
    println!("{report}");
    eprintln!(
        "results: {} and {}",
        jsonl_path.display(),
        md_path.display()
    );
    Ok(records.iter().all(|r| r.outcome.is_ok()))
}

/// The machine in a few words: CPU model, cores, kernel.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{model}, {cores} cores, Linux {}", kernel.trim())
}

/// Now, in UTC, as `YYYYMMDDTHHMMSSZ` (from the system clock, without a date crate).
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}
