//! Listing and reading over stdio: a tree of N files paged through `resources/list` to
//! the end (entries per second, time to the first page, CPU per entry, peak RSS), then
//! reads of random files one at a time; and relisting it, with the watcher on. Invariant: every file is listed exactly once, or
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

/// Lists the tree of `n` files from the start to the end, page by page, and checks that
/// every file was listed once; the entries listed. Stops the run past `deadline`.
fn list_through(server: &mut StdioServer, n: usize, deadline: Instant) -> usize {
    let mut cursor: Option<String> = None;
    let mut entries = 0usize;
    loop {
        assert!(
            Instant::now() < deadline,
            "the listing ran past its deadline"
        );
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let v = server.call("resources/list", &params);
        entries += v["result"]["resources"].as_array().map_or(0, Vec::len);
        cursor = v["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            assert_eq!(entries, n, "every file listed once");
            return entries;
        }
    }
}

/// Listing the same tree again, with the watcher on (as `rsrc serve` runs by default):
/// for each size, the first whole listing, then `passes` more through the cached
/// listings and kept pages (one for a million files, whose listings the cache cannot
/// hold; twenty below, as the comparison harness's list-all does). Each run stops by
/// itself within 20 minutes.
pub(crate) fn relisting_table(sizes: &[usize]) {
    println!("\n### Relisting (stdio, pages of 1,000, tmpfs, watcher on)\n");
    println!(
        "| files | first listing: entries/s | relisting: entries/s | relisting: server CPU per entry | passes | peak RSS |"
    );
    println!("|---|---|---|---|---|---|");
    for &n in sizes {
        let dir = tree(n);
        let deadline = Instant::now() + std::time::Duration::from_secs(20 * 60);
        let mut server = StdioServer::start_with(&dir, &[]);
        // Acknowledged once the watcher's first watches are placed.
        server.call(
            "resources/subscribe",
            &json!({"uri": "file:///d0000/f0000000.txt"}),
        );
        let started = Instant::now();
        list_through(&mut server, n, deadline);
        let first = started.elapsed().as_secs_f64();
        let passes = if n >= 1_000_000 { 1 } else { 20 };
        let cpu_before = cpu_s(server.pid());
        let started = Instant::now();
        for _ in 0..passes {
            list_through(&mut server, n, deadline);
        }
        let again = started.elapsed().as_secs_f64();
        let cpu = cpu_s(server.pid()) - cpu_before;
        let listed = (n * passes) as f64;
        println!(
            "| {n} | {:.0} | {:.0} | {:.2} µs | {passes} | {:.1} MiB |",
            n as f64 / first,
            listed / again,
            cpu * 1e6 / listed,
            status_kib(server.pid(), "VmHWM:") as f64 / 1024.0
        );
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
