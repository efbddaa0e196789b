//! Listing and reading over stdio: a tree of N files paged through `resources/list` to
//! the end (entries per second, time to the first page, CPU per entry, peak RSS), then
//! reads of random files one at a time. Invariant: every file is listed exactly once, or
//! the run stops.

use std::time::Instant;

use serde_json::json;

use crate::servers::{StdioServer, cpu_s, status_kib, tree};

pub(crate) struct ListingFigures {
    files: usize,
    entries_per_s: f64,
    first_page_ms: f64,
    peak_rss_mib: f64,
    cpu_us_per_entry: f64,
    read_us: f64,
}

pub(crate) fn listing(n: usize) -> ListingFigures {
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

pub(crate) fn listing_table(sizes: &[usize]) {
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
