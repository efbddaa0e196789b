//! The watcher's rules, each checked on a real directory under inotify.

use super::*;
use crate::fs::{FsConfig, FsProvider};
use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use serde_json::json;

/// A provider of `dir` that does not watch it: the tests drive a [`Watcher`] of their
/// own.
fn unwatched(dir: &std::path::Path) -> FsProvider {
    let config = FsConfig {
        watch: false,
        ..FsConfig::default()
    };
    FsProvider::single(dir, config).unwrap()
}

fn watcher() -> Watcher {
    Watcher::new(Duration::from_millis(50), Lease::always(), 1).unwrap()
}

#[test]
fn an_overflow_marks_everything_lost() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let provider = unwatched(dir.path());
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), None);
    assert_eq!(w.dirs.len(), 2, "the root and sub");
    let wd = w.dirs.keys().next().unwrap().clone();
    w.event(&provider.served, &wd, EventMask::Q_OVERFLOW, None);
    assert!(w.lost);
}

/// Fills the listing cache with the listing of every directory of `provider`.
fn list_everything(provider: &FsProvider) {
    let stop = crate::kit::blocking::Stop::default();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let (page, _) = provider
            .served
            .list_files(after.as_deref(), 1000, Some(&stop))
            .unwrap()
            .unwrap();
        match page.next {
            Some(next) => after = Some(next),
            None => return,
        }
    }
}

/// Whether `dir`'s listing is in the cache and current on the watcher's word (looked
/// up with a stamp that matches nothing).
fn trusted(provider: &FsProvider, dir: &str) -> bool {
    use crate::fs::cache::{Lookup, Stamp};
    let nothing = Stamp {
        dev: 0,
        ino: 0,
        mtime: (0, 0),
        ctime: (0, 0),
    };
    let served = &provider.served;
    let path = RelPath::from_position(dir.as_bytes()).unwrap();
    let cache = served.cache.as_ref().unwrap();
    matches!(
        cache.lookup(&served.fresh, 0, &path, || Ok(nothing)),
        Ok(Lookup::Hit(_))
    )
}

/// The kernel's queue holds at most `max_queued_events` events per watcher: a burst
/// larger than that, made while the watcher reads nothing, overflows it for real.
#[test]
fn an_overflow_falls_back_to_stamps_counted_until_directories_are_scanned_again() {
    use crate::fs::fresh::{FreshnessFallback, ListingTrust};
    let dir = tempfile::tempdir().unwrap();
    for sub in ["flood", "quiet"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("a.txt"), "a").unwrap();
    }
    // A time to live no test run outlasts: only the overflow ends a listing's trust.
    let config = FsConfig {
        watch: false,
        listing_cache_ttl: Duration::from_secs(3600),
        ..FsConfig::default()
    };
    let provider = FsProvider::single(dir.path(), config).unwrap();
    let trust = ListingTrust(Arc::clone(&provider.served.fresh));
    let server = rsrc::Server::builder("t", "0")
        .mount(PREFIX, unwatched(dir.path()))
        .build()
        .unwrap();
    let feed = server.changes();
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), None);
    w.vouch(&provider.served);
    assert!(trust.trusted());
    list_everything(&provider);
    assert!(trusted(&provider, "quiet") && trusted(&provider, "flood"));

    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |s| s.trim().parse().unwrap());
    // Two events a file (created, closed after writing).
    for i in 0..queue / 2 + 64 {
        std::fs::File::create(dir.path().join(format!("flood/{i}"))).unwrap();
    }
    let mut buffer = vec![0u8; 64 * 1024];
    w.round(&provider.served, &feed, &mut buffer).unwrap();
    assert_eq!(trust.fallbacks(FreshnessFallback::Overflow), 1);
    // The watches are rebuilt and vouched for again, but what was cached before the
    // overflow is only ever checked by its stamp from now on.
    assert!(trust.trusted(), "a new term");
    assert!(!trusted(&provider, "quiet"), "checked by its stamp");
    let stop = crate::kit::blocking::Stop::default();
    let page = provider
        .served
        .list_children("file:///quiet", None, 10, None, &stop)
        .unwrap();
    assert_eq!(page.resources.len(), 1, "still current by its stamp");
    assert!(!trusted(&provider, "quiet"));
    // A directory scanned anew is trusted again.
    list_everything(&provider);
    assert!(trusted(&provider, "flood"), "rescanned after the overflow");
}

#[test]
fn a_root_the_watches_do_not_cover_is_not_vouched_for() {
    use crate::fs::fresh::{FreshnessFallback, ListingTrust};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let provider = unwatched(dir.path());
    let trust = ListingTrust(Arc::clone(&provider.served.fresh));
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), None);
    w.hole(&provider.served, 0, FreshnessFallback::WatchLimit);
    w.hole(&provider.served, 0, FreshnessFallback::Unwatchable);
    w.vouch(&provider.served);
    assert!(!trust.trusted());
    assert_eq!(trust.fallbacks(FreshnessFallback::WatchLimit), 1);
    assert_eq!(
        trust.fallbacks(FreshnessFallback::Unwatchable),
        0,
        "one hole per build"
    );
    // Rebuilt whole, it is vouched for again.
    w.rebuild_now(&provider.served, 0);
    w.vouch(&provider.served);
    assert!(trust.trusted());
    // A filesystem without events never is (procfs stands for a network one).
    let proc = cap_std::fs::Dir::open_ambient_dir("/proc", cap_std::ambient_authority()).unwrap();
    assert!(without_events(&proc));
    let here =
        cap_std::fs::Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
    assert!(!without_events(&here));
}

/// Waits until a directory changed now gets a status time after `since` (file times
/// come from a coarser clock than `SystemTime::now`).
fn clock_past(since: SystemTime) {
    let scratch = tempfile::tempdir().unwrap();
    let dir =
        cap_std::fs::Dir::open_ambient_dir(scratch.path(), cap_std::ambient_authority()).unwrap();
    for n in 0..10_000 {
        dir.write(n.to_string(), "x").unwrap();
        if changed_after(&dir, since) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("file times never passed {since:?}");
}

#[test]
fn an_entry_added_before_its_directorys_first_watch_is_published() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::create_dir(dir.path().join("quiet")).unwrap();
    let provider = unwatched(dir.path());
    let since = SystemTime::now();
    clock_past(since);

    // Nothing changed since: the first watches publish nothing.
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), Some(since));
    assert_eq!(w.dirs.len(), 3);
    assert!(w.list.is_none() && w.pending.is_empty());

    // A file added to `sub` after the watcher started, before `sub` was watched.
    std::fs::write(dir.path().join("sub/new.txt"), "new").unwrap();
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), Some(since));
    assert!(w.list.is_some(), "list_changed is due");
    let pending: Vec<&RelPath> = w.pending.keys().map(|(_, rel)| rel).collect();
    assert_eq!(
        pending,
        [&RelPath::root().join(std::ffi::OsStr::new("sub"))]
    );

    // Rebuilt watches (after lost events, a moved root) republish in their own way.
    let mut w = watcher();
    w.watch_tree(&provider.served, 0, RelPath::root(), None);
    assert!(w.list.is_none() && w.pending.is_empty());
}

#[tokio::test]
async fn lost_events_republish_the_list_and_every_subscribed_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let provider = FsProvider::single(dir.path(), FsConfig::default()).unwrap();
    let server = rsrc::Server::builder("t", "0")
        .mount(PREFIX, provider)
        .build()
        .unwrap();
    let (r, wr) = tokio::io::split(serve_in_memory(&server, StreamConfig::default()));
    let mut peer = rsrc_testkit::Peer::new(r, wr);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    let ok = peer
        .request("resources/subscribe", json!({"uri": "file:///a.txt"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    republish_all(&server.changes(), &Lease::always());
    let mut methods = Vec::new();
    for _ in 0..2 {
        let m = peer.recv().await;
        methods.push(m["method"].as_str().unwrap().to_owned());
    }
    methods.sort();
    assert_eq!(
        methods,
        [
            "notifications/resources/list_changed",
            "notifications/resources/updated"
        ]
    );
}
