//! How `rsrc serve` scales: the figures of `docs/performance.md`, measured against the
//! release binary in child processes, as a client would see them.
//!
//! ```sh
//! cargo bench -p rsrc-cli --bench scale              # everything (~10 min on 2 cores)
//! cargo bench -p rsrc-cli --bench scale -- listing 1000000
//! cargo bench -p rsrc-cli --bench scale -- relisting 10000 1000000
//! RSRC_BIN=/path/to/other/rsrc cargo bench -p rsrc-cli --bench scale -- relisting 10000
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
//! - `relisting N…`: the same tree served with the watcher on, listed whole once, then
//!   again through the cached listings and kept pages (20 times, once for a million
//!   files): entries per second of each, the server's CPU per entry relisted.
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
//! it N (`rsrc serve --threads N`). `--serve-arg=ARG` adds ARG to every `rsrc serve`
//! (e.g. `--serve-arg=--listing-freshness=stamp`), and `RSRC_BIN` measures another build
//! of `rsrc` (one built before a change, to compare).
//!
//! Nothing here asserts a time: these are measurements, printed as markdown rows.
//!
//! `servers.rs` starts what is measured and reads `/proc`; `listing.rs` and `streams.rs`
//! measure; `http.rs` is the raw client the streams use.
#![allow(clippy::print_stdout)] // The report is the output.

mod http;
mod listing;
mod servers;
mod streams;

use std::sync::atomic::Ordering;

use listing::{listing_table, relisting_table};
use servers::{SERVE_ARGS, THREADS};
use streams::{listen, sessions};

fn main() {
    if let Some(n) = std::env::args().find_map(|a| a.strip_prefix("--threads=")?.parse().ok()) {
        THREADS.store(n, Ordering::Relaxed);
    }
    let _ = SERVE_ARGS.set(
        std::env::args()
            .filter_map(|a| a.strip_prefix("--serve-arg=").map(str::to_owned))
            .collect(),
    );
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
        Some("relisting") => {
            let sizes = numbers(1);
            relisting_table(if sizes.is_empty() {
                &[10_000, 1_000_000]
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
        Some(other) => {
            eprintln!("unknown scenario {other:?}: listing, relisting, listen, sessions, growth");
        }
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
