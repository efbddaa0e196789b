//! How fresh and how cheap the filesystem provider's listings are with each
//! `ListingFreshness`: on the watcher's word (`watch`, the default) and by each cached
//! directory's stamp (`stamp`). In process, through the engine (each request decoded,
//! dispatched, served and its reply encoded as on a connection), on a tree of 10,000
//! files (100 directories of 100, on tmpfs when `/dev/shm` exists):
//!
//! - write → listing: a file is written, then the listing is asked for again and again
//!   until it shows the file; the delay from before the write to that listing, p50 and
//!   p99, for a directory's own listing and for the recursive listing's first page;
//! - relisting: the time of a whole recursive listing (10 pages of 1,000) of the unchanged
//!   tree, its cached listings and kept pages in place.
//!
//! Nothing here asserts a time: these are measurements, printed as markdown rows. Every
//! wait is bounded (a file not listed within 5 s stops the run).
//!
//! Run: `cargo bench -p rsrc-providers --bench freshness [-- WRITES]` (default 500).
#![allow(clippy::print_stdout)] // The report is the output.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rsrc::server::{Handled, Session};
use rsrc::{Server, ServerConfig};
use rsrc_providers::fs::{FsConfig, FsProvider, ListingFreshness, ListingTrust, PREFIX};
use tokio::runtime::Runtime;

/// Directories of the tree, and files in each.
const DIRS: usize = 100;
const FILES: usize = 100;
/// The longest a written file may take to be listed before the run stops.
const PATIENCE: Duration = Duration::from_secs(5);
/// Whole listings timed per mode.
const RELISTS: usize = 100;

/// A tree of `DIRS` × `FILES` small files under `base`.
fn tree(base: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(base).expect("a temporary directory");
    for d in 0..DIRS {
        let sub = dir.path().join(format!("d{d:03}"));
        std::fs::create_dir(&sub).expect("create a directory");
        for f in 0..FILES {
            std::fs::write(sub.join(format!("f{f:05}.txt")), "some text\n").expect("write");
        }
    }
    dir
}

struct Served {
    server: Server,
    session: Arc<Session>,
    trust: ListingTrust,
    root: PathBuf,
    out: Vec<u8>,
    id: u64,
}

impl Served {
    fn start(root: &Path, mode: ListingFreshness) -> Served {
        let provider = FsProvider::single(
            root,
            FsConfig {
                listing_freshness: mode,
                ..FsConfig::default()
            },
        )
        .expect("serve the tree");
        let trust = provider.listing_trust();
        let server = Server::builder("bench", "0")
            .mount(PREFIX, provider)
            .config(ServerConfig {
                page_size: 1000,
                ..ServerConfig::default()
            })
            .build()
            .expect("build");
        let session = Arc::new(Session::new(rsrc::Notifier::discard()));
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}"#;
        assert!(matches!(server.handle(&session, init), Handled::Reply(_)));
        // The watcher places its watches on a thread of its own.
        let started = Instant::now();
        while !server.hears_every_change() || (mode == ListingFreshness::Watch && !trust.trusted())
        {
            assert!(started.elapsed() < PATIENCE, "the watcher never armed");
            std::thread::sleep(Duration::from_millis(5));
        }
        Served {
            server,
            session,
            trust,
            root: root.to_owned(),
            out: Vec::with_capacity(1 << 20),
            id: 0,
        }
    }

    /// One `resources/list` (of `uri`'s children, or the recursive one), after `cursor`;
    /// its reply is in `self.out`.
    fn list(&mut self, rt: &Runtime, uri: Option<&str>, cursor: Option<&str>) {
        self.id += 1;
        let mut params = serde_json::Map::new();
        if let Some(uri) = uri {
            params.insert("uri".into(), uri.into());
        }
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": self.id, "method": "resources/list", "params": params,
        })
        .to_string();
        self.out.clear();
        match self.server.handle(&self.session, request.as_bytes()) {
            Handled::Pending(f) => rt.block_on(f).expect("not cancelled").encode(&mut self.out),
            Handled::Reply(r) => r.encode(&mut self.out),
            Handled::None => unreachable!("a request is answered"),
        }
    }

    fn shows(&self, name: &str) -> bool {
        memchr::memmem::find(&self.out, name.as_bytes()).is_some()
    }

    /// The whole recursive listing; the number of pages.
    fn list_all(&mut self, rt: &Runtime) -> usize {
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            self.list(rt, None, cursor.as_deref());
            pages += 1;
            let reply: serde_json::Value = serde_json::from_slice(&self.out).expect("JSON");
            match reply["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return pages,
            }
        }
    }

    /// Writes a new file in directory `d`, then lists (`uri`, or the recursive listing's
    /// first page) until the file shows; how long that took, and how many listings. The
    /// file is removed after, and the listing waited on until it no longer shows it (not
    /// timed).
    fn write_then_list(
        &mut self,
        rt: &Runtime,
        d: usize,
        i: usize,
        recursive: bool,
    ) -> (Duration, usize) {
        let dir = format!("d{d:03}");
        // Before every `f…` name: on the recursive listing's first page for d000…d009.
        let name = format!("a{i:06}.txt");
        let uri = format!("file:///{dir}");
        let target = (!recursive).then_some(uri.as_str());
        let path = self.root.join(&dir).join(&name);
        let started = Instant::now();
        std::fs::write(&path, "new\n").expect("write");
        let mut listings = 0;
        loop {
            self.list(rt, target, None);
            listings += 1;
            if self.shows(&name) {
                break;
            }
            assert!(started.elapsed() < PATIENCE, "{name} was never listed");
        }
        let took = started.elapsed();
        std::fs::remove_file(&path).expect("remove");
        let removed = Instant::now();
        loop {
            self.list(rt, target, None);
            if !self.shows(&name) {
                break;
            }
            assert!(removed.elapsed() < PATIENCE, "{name} stayed listed");
        }
        (took, listings)
    }
}

/// p50 and p99 of `samples`, in microseconds.
fn percentiles(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort_unstable();
    let at = |q: usize| samples[(samples.len() * q / 100).min(samples.len() - 1)];
    (at(50).as_secs_f64() * 1e6, at(99).as_secs_f64() * 1e6)
}

fn main() {
    let writes: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // The server's change hub starts tasks on the runtime it is built in.
    let _entered = rt.enter();
    let modes = [ListingFreshness::Watch, ListingFreshness::Stamp];
    let trees: Vec<tempfile::TempDir> = modes.iter().map(|_| tree(&base)).collect();
    let mut served: Vec<Served> = modes
        .iter()
        .zip(&trees)
        .map(|(&mode, t)| Served::start(t.path(), mode))
        .collect();
    for s in &mut served {
        // Fill the listing cache and the kept pages.
        for _ in 0..2 {
            assert_eq!(s.list_all(&rt), 10, "10,000 files in pages of 1,000");
        }
    }

    println!("\n### Write → listing ({writes} writes each, tmpfs: {base:?})\n");
    println!("| mode | listing | p50 | p99 | shown by the first listing after the write |");
    println!("|---|---|---|---|---|");
    for recursive in [false, true] {
        for s in &mut served {
            let (mut delays, listings): (Vec<Duration>, Vec<usize>) = (0..writes)
                .map(|i| {
                    // The recursive listing's first page holds d000…d009.
                    let d = if recursive { i % 10 } else { i % DIRS };
                    s.write_then_list(&rt, d, i, recursive)
                })
                .unzip();
            let at_once = listings.iter().filter(|&&n| n == 1).count();
            let (p50, p99) = percentiles(&mut delays);
            let listing = if recursive {
                "recursive, first page (1,000 files)"
            } else {
                "a directory's (100 files)"
            };
            println!(
                "| {} | {listing} | {p50:.0} µs | {p99:.0} µs | {:.1} % |",
                s.trust.mode().as_str(),
                at_once as f64 * 100.0 / writes as f64
            );
        }
    }

    println!("\n### Relisting the unchanged tree ({RELISTS} whole listings each, interleaved)\n");
    let mut totals = vec![Duration::ZERO; served.len()];
    for _ in 0..RELISTS {
        for (s, total) in served.iter_mut().zip(&mut totals) {
            let started = Instant::now();
            s.list_all(&rt);
            *total += started.elapsed();
        }
    }
    println!("| mode | per whole listing | × stamp |");
    println!("|---|---|---|");
    let stamp = totals[1].as_secs_f64();
    for (s, total) in served.iter().zip(&totals) {
        println!(
            "| {} | {:.0} µs | {:.3} |",
            s.trust.mode().as_str(),
            total.as_secs_f64() * 1e6 / RELISTS as f64,
            total.as_secs_f64() / stamp
        );
    }
    for s in &served {
        println!(
            "\n{}: vouched for at the end: {}",
            s.trust.mode().as_str(),
            s.trust.trusted()
        );
    }
}
