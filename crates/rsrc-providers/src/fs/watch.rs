//! Watching the roots for changes (Linux inotify) and publishing them, coalesced, to the
//! server's change feed.
//!
//! Invariants:
//! - Only directories opened through a root's capability handle are watched, and through
//!   their open descriptor (`/proc/self/fd/N`), never by path: no watch is ever placed
//!   outside a root, whatever renames or symlinks race with the walk. Symlinked
//!   directories are not descended.
//! - The mask holds changes only, never opens or reads: the server's own reads raise no
//!   events. (The `notify` crate always adds `IN_OPEN`; measured here, that made every
//!   read cost the server about 50 % more CPU, which is why this module speaks inotify
//!   itself.)
//! - Bursts coalesce: an entry's update is published once it has been quiet for the
//!   window (default 50 ms), and at the latest 20 windows after its first change.
//! - Hidden and ignored entries produce nothing. A change to an entry also updates its
//!   parent collection: a subscribed directory hears of its direct children.
//! - Lost events (queue overflow, a read error) end in `list_changed` and an update of
//!   every subscribed `file:///` URI, and the watches are rebuilt; a full watch table
//!   (`fs.inotify.max_user_watches`) is logged once and leaves deeper directories unwatched.
//! - A subscription is acknowledged only once the watches are placed
//!   ([`ServedRoots::armed`]): a change made after the acknowledgement is heard.
//! - Entries added, removed or renamed while the first watches are being placed are not
//!   lost: a directory whose status changed after the watcher started is published as
//!   changed (with `list_changed`) once its watch is in place, so a session that began
//!   before the watches were ready hears of it.
//! - The thread ends within half a second of the provider being dropped.
//! - In a deployment of several instances (`rsrc::bus`), only the instance holding the
//!   `file:///` lease publishes, to every instance; the others drop their events. An
//!   instance that takes the lease over resynchronises every instance's listeners, since
//!   changes may have passed while nobody held it.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::fd::AsRawFd as _;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use rsrc::ChangeFeed;
use rsrc::bus::Lease;

use super::{PREFIX, Root, ServedRoots};
use crate::kit::rel_path::RelPath;

/// The longest a pending update waits, in windows.
const MAX_DELAY_WINDOWS: u32 = 20;
/// How often the thread looks whether the provider is still there.
const IDLE_POLL: Duration = Duration::from_millis(500);

fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK
}

/// When a pending change may be published.
#[derive(Clone, Copy)]
struct Due {
    first: Instant,
    last: Instant,
}

impl Due {
    fn new(now: Instant) -> Self {
        Due {
            first: now,
            last: now,
        }
    }

    fn at(&self, window: Duration) -> Instant {
        (self.last + window).min(self.first + window * MAX_DELAY_WINDOWS)
    }
}

struct Watcher {
    inotify: Inotify,
    /// What each watch watches.
    dirs: HashMap<WatchDescriptor, (usize, RelPath)>,
    pending: HashMap<(usize, RelPath), Due>,
    list: Option<Due>,
    /// Events were lost: republish everything and rebuild the watches.
    lost: bool,
    /// Roots whose watched paths moved: rebuild their watches.
    moved: Vec<usize>,
    window: Duration,
    limit_logged: bool,
    /// This instance's turn to publish, and whether it had it at the last look.
    lease: Lease,
    held: bool,
}

/// Starts watching the served roots on a thread of its own, publishing to `feed`.
/// Subscriptions wait until its first watches are placed ([`ServedRoots::armed`]).
pub(super) fn start(served: &Arc<ServedRoots>, feed: ChangeFeed, window: Duration) {
    served.armed.disarm();
    let since = SystemTime::now();
    let weak = Arc::downgrade(served);
    let started = std::thread::Builder::new()
        .name("rsrc-fs-watch".into())
        .spawn(move || {
            let lease = feed.lease(PREFIX);
            run(&weak, &feed, window, &lease, since);
        });
    if let Err(e) = started {
        tracing::warn!(error = %e, "no file watcher: changes will not be notified");
        served.armed.arm();
    }
}

/// Watches and publishes until the provider is gone. The first watches report what
/// changed after `since` (the watcher's start); after a failure everything is republished
/// instead.
fn run(
    served: &Weak<ServedRoots>,
    feed: &ChangeFeed,
    window: Duration,
    lease: &Lease,
    since: SystemTime,
) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut since = Some(since);
    loop {
        let mut w = match Watcher::new(window, lease.clone()) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "no file watcher: changes will not be notified");
                if let Some(t) = served.upgrade() {
                    t.armed.arm();
                }
                return;
            }
        };
        {
            let Some(t) = served.upgrade() else { return };
            let since = since.take();
            for root in 0..t.roots.len() {
                w.watch_tree(&t, root, RelPath::root(), since);
            }
            t.armed.arm();
            tracing::debug!(watches = w.dirs.len(), "watching the roots");
        }
        match w.serve(served, feed, &mut buffer) {
            // The provider is gone.
            Ok(()) => return,
            Err(e) => {
                // Whatever happened meanwhile is unknown: say so, then start afresh.
                tracing::warn!(error = %e, "file watcher failed; restarting it");
                republish_all(feed, lease);
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

/// Everything may have changed: the list, and every subscribed file, on every instance
/// (said by the instance that publishes file changes, [`Lease`]).
fn republish_all(feed: &ChangeFeed, lease: &Lease) {
    if lease.held() {
        feed.resync(PREFIX);
    }
}

/// Whether the directory's status (which moves with every entry added, removed or
/// renamed) changed after `since`.
fn changed_after(dir: &cap_std::fs::Dir, since: SystemTime) -> bool {
    use cap_std::fs::MetadataExt as _;
    let Ok(since) = since.duration_since(SystemTime::UNIX_EPOCH) else {
        return true;
    };
    let since = (
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        i64::from(since.subsec_nanos()),
    );
    dir.dir_metadata()
        .map_or(true, |md| (md.ctime(), md.ctime_nsec()) > since)
}

impl Watcher {
    fn new(window: Duration, lease: Lease) -> io::Result<Self> {
        Ok(Watcher {
            held: lease.held(),
            lease,
            inotify: Inotify::init()?,
            dirs: HashMap::new(),
            pending: HashMap::new(),
            list: None,
            lost: false,
            moved: Vec::new(),
            window,
            limit_logged: false,
        })
    }

    /// Watches `start` and every exposed directory below it. With `changed_since`, a
    /// directory whose status changed after that time (an entry added, removed or
    /// renamed before its watch was in place) is published as changed.
    fn watch_tree(
        &mut self,
        served: &ServedRoots,
        root: usize,
        start: RelPath,
        changed_since: Option<SystemTime>,
    ) {
        let base = &served.roots[root].dir;
        let mut stack = vec![start];
        while let Some(rel) = stack.pop() {
            let opened = if rel.is_root() {
                base.try_clone()
            } else {
                base.open_dir(rel.to_path())
            };
            let Ok(dir) = opened else { continue };
            let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
            match self.inotify.watches().add(&path, mask()) {
                Ok(wd) => {
                    self.dirs.insert(wd, (root, rel.clone()));
                    // Read after the watch is placed: a later change raises an event.
                    if changed_since.is_some_and(|since| changed_after(&dir, since)) {
                        self.entries_changed(root, rel.clone(), Instant::now());
                    }
                }
                Err(e) if e.raw_os_error() == Some(28) => {
                    // ENOSPC: the watch table is full.
                    if !self.limit_logged {
                        tracing::warn!(
                            watches = self.dirs.len(),
                            "inotify watch limit reached (fs.inotify.max_user_watches): \
                             changes in further directories are not notified"
                        );
                        self.limit_logged = true;
                    }
                    return;
                }
                Err(e) if rel.is_root() => {
                    // Without /proc, say: nothing of this root will be notified.
                    tracing::warn!(error = %e, "a root cannot be watched: its changes are not notified");
                    continue;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "directory not watched");
                    continue;
                }
            }
            let Ok(entries) = dir.entries() else { continue };
            let rules = served.roots[root].filter.rules_for(base, &rel);
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                if kind.is_dir() && served.roots[root].filter.entry_visible(&rules, &name, true) {
                    stack.push(rel.join(&name));
                }
            }
        }
    }

    fn unwatch_root(&mut self, root: usize) {
        let gone: Vec<WatchDescriptor> = self
            .dirs
            .iter()
            .filter(|(_, (r, _))| *r == root)
            .map(|(wd, _)| wd.clone())
            .collect();
        for wd in gone {
            let _ = self.inotify.watches().remove(wd.clone());
            self.dirs.remove(&wd);
        }
    }

    /// Reads and publishes events until the provider is dropped (`Ok`) or the watcher
    /// fails (`Err`).
    fn serve(
        &mut self,
        served: &Weak<ServedRoots>,
        feed: &ChangeFeed,
        buffer: &mut [u8],
    ) -> io::Result<()> {
        loop {
            let now = Instant::now();
            let next = self
                .pending
                .values()
                .chain(self.list.iter())
                .map(|d| d.at(self.window))
                .min();
            let wait = next.map_or(IDLE_POLL, |at| {
                at.saturating_duration_since(now).min(IDLE_POLL)
            });
            let mut fds = [rustix::event::PollFd::new(
                &self.inotify,
                rustix::event::PollFlags::IN,
            )];
            let timeout = rustix::event::Timespec::try_from(wait).ok();
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let Some(t) = served.upgrade() else {
                return Ok(());
            };
            loop {
                match self.inotify.read_events(buffer) {
                    Ok(events) => {
                        let events: Vec<_> = events.map(|e| e.to_owned()).collect();
                        if events.is_empty() {
                            break;
                        }
                        for e in &events {
                            self.event(&t, &e.wd, e.mask, e.name.as_deref());
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            if self.lost {
                self.lost = false;
                self.pending.clear();
                self.list = None;
                republish_all(feed, &self.lease);
                for root in 0..t.roots.len() {
                    self.unwatch_root(root);
                    self.watch_tree(&t, root, RelPath::root(), None);
                }
            }
            for root in std::mem::take(&mut self.moved) {
                self.unwatch_root(root);
                self.watch_tree(&t, root, RelPath::root(), None);
            }
            self.publish_due(&t, feed, Instant::now());
        }
    }

    fn touch(&mut self, root: usize, rel: RelPath, now: Instant) {
        self.pending
            .entry((root, rel))
            .and_modify(|d| d.last = now)
            .or_insert_with(|| Due::new(now));
    }

    fn list_changed(&mut self, now: Instant) {
        match &mut self.list {
            Some(d) => d.last = now,
            None => self.list = Some(Due::new(now)),
        }
    }

    /// What `dir` holds changed, without knowing which entry: the list, and the
    /// directory's collection.
    fn entries_changed(&mut self, root: usize, dir: RelPath, now: Instant) {
        self.list_changed(now);
        self.touch(root, dir, now);
    }

    fn event(
        &mut self,
        served: &ServedRoots,
        wd: &WatchDescriptor,
        mask: EventMask,
        name: Option<&OsStr>,
    ) {
        let now = Instant::now();
        if mask.contains(EventMask::Q_OVERFLOW) {
            self.lost = true;
            return;
        }
        if mask.contains(EventMask::IGNORED) {
            self.dirs.remove(wd);
            return;
        }
        let Some((root, dir)) = self.dirs.get(wd).cloned() else {
            return;
        };
        let Some(name) = name else {
            // The watched directory itself was removed or moved.
            if mask.intersects(EventMask::MOVE_SELF) {
                self.moved.push(root);
            }
            self.entries_changed(root, dir, now);
            return;
        };
        let is_dir = mask.contains(EventMask::ISDIR);
        if !is_dir && (name == ".gitignore" || name == ".ignore") {
            // What is exposed below this directory may have changed.
            served.roots[root].filter.forget_rules(&dir);
            self.entries_changed(root, dir, now);
            return;
        }
        let Root {
            dir: base, filter, ..
        } = &*served.roots[root];
        let rules = filter.rules_for(base, &dir);
        if !filter.entry_visible(&rules, name, is_dir) {
            return;
        }
        let path = dir.join(name);
        let appeared = mask.intersects(EventMask::CREATE | EventMask::MOVED_TO);
        let vanished = mask.intersects(EventMask::DELETE | EventMask::MOVED_FROM);
        if appeared || vanished {
            self.list_changed(now);
        }
        if is_dir {
            if mask.intersects(EventMask::MOVED_FROM | EventMask::MOVED_TO) {
                // Watched paths below it changed name: rebuild this root's watches.
                self.moved.push(root);
            } else if appeared {
                self.watch_tree(served, root, path.clone(), None);
            }
        }
        self.touch(root, path, now);
        self.touch(root, dir, now);
    }

    fn publish_due(&mut self, served: &ServedRoots, feed: &ChangeFeed, now: Instant) {
        if !self.lease.held() {
            // Another instance publishes.
            self.held = false;
            self.pending.clear();
            self.list = None;
            return;
        }
        if !std::mem::replace(&mut self.held, true) {
            tracing::info!("this instance now publishes file changes");
            republish_all(feed, &self.lease);
        }
        let window = self.window;
        if self.list.is_some_and(|d| d.at(window) <= now) {
            self.list = None;
            feed.list_changed();
        }
        let due: Vec<(usize, RelPath)> = self
            .pending
            .iter()
            .filter(|(_, d)| d.at(window) <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            self.pending.remove(&key);
            feed.updated(&served.uri(key.0, &key.1));
        }
    }
}

#[cfg(test)]
mod tests {
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
        Watcher::new(Duration::from_millis(50), Lease::always()).unwrap()
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

    /// Waits until a directory changed now gets a status time after `since` (file times
    /// come from a coarser clock than `SystemTime::now`).
    fn clock_past(since: SystemTime) {
        let scratch = tempfile::tempdir().unwrap();
        let dir = cap_std::fs::Dir::open_ambient_dir(scratch.path(), cap_std::ambient_authority())
            .unwrap();
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
}
