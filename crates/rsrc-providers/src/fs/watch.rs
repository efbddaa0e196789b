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
//! - The listing cache trusts this watcher (`fresh.rs`): each change it reads drops the
//!   cached listings it touches (the directory's, and for a directory entry everything
//!   cached below it) at once, before the change is published, so a client told of a
//!   change never lists what was there before. The watcher vouches for a root only
//!   while its watches cover every exposed directory of it and no event was lost since
//!   they were placed: an overflow, a read error, a directory it cannot watch (a full
//!   watch table, an unreadable directory, a filesystem without events) or a rebuild of
//!   the root's watches withdraws that word first, and listings fall back to stamps.
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

use super::fresh::FreshnessFallback;
use super::state::{PREFIX, Root, ServedRoots};
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
    /// Roots whose watched paths moved: rebuild their watches (each once).
    moved: Vec<usize>,
    /// Directories whose ignore rules changed: watch what they now expose, then drop
    /// what was cached below them meanwhile.
    rewatch: Vec<(usize, RelPath)>,
    /// Per root, why its watches do not cover every exposed directory, if they do not:
    /// the watcher does not vouch for its listings until they are rebuilt whole.
    holes: Vec<Option<FreshnessFallback>>,
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
        served.fresh.withdraw(None, FreshnessFallback::Unwatchable);
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
        let roots = served.upgrade().map_or(0, |t| t.roots.len());
        let mut w = match Watcher::new(window, lease.clone(), roots) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "no file watcher: changes will not be notified");
                if let Some(t) = served.upgrade() {
                    t.fresh.withdraw(None, FreshnessFallback::Unwatchable);
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
            // Vouched for before armed: a subscription acknowledged once armed finds the
            // listings trusted wherever they can be.
            w.vouch(&t);
            t.armed.arm();
            tracing::debug!(watches = w.dirs.len(), "watching the roots");
        }
        match w.serve(served, feed, &mut buffer) {
            // The provider is gone.
            Ok(()) => return,
            Err(e) => {
                // Whatever happened meanwhile is unknown: say so, then start afresh.
                tracing::warn!(error = %e, "file watcher failed; restarting it");
                if let Some(t) = served.upgrade() {
                    t.fresh.withdraw(None, FreshnessFallback::Error);
                }
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

/// Whether an error says the directory is gone (removed, or replaced by a file) since it
/// was found: its parent's watch reports that, so it leaves no hole.
fn gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Drops the cached listings a change touches, before it is published: `dir`'s, and with
/// `below` every one under it too.
fn drop_listings(served: &ServedRoots, root: usize, dir: &RelPath, below: bool) {
    if let Some(cache) = &served.cache {
        cache.forget(root, dir, below);
    }
}

/// Whether the directory lies on a filesystem whose changes may raise no event here:
/// network and cluster filesystems and FUSE (which virtiofs uses), changed by other
/// machines or processes no local watcher hears, and procfs and sysfs, which raise none.
/// The numbers are the kernel's filesystem magic numbers (`linux/magic.h`, and each
/// filesystem's own for CIFS, SMB2, Ceph, GFS2, OCFS2 and Lustre).
fn without_events(dir: &cap_std::fs::Dir) -> bool {
    const NO_EVENTS: [u32; 15] = [
        0x6969,      // NFS
        0x517B,      // SMB (smbfs)
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE
        0x0102_1997, // 9p
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x6B41_4653, // kAFS
        0x7375_7245, // Coda
        0x0116_1970, // GFS2
        0x7461_636F, // OCFS2
        0x0BD0_0BD0, // Lustre
        0x9FA0,      // procfs
        0x6265_6572, // sysfs
    ];
    rustix::fs::fstatfs(dir).is_ok_and(|st| {
        let kind = i128::from(st.f_type) & 0xFFFF_FFFF;
        NO_EVENTS.iter().any(|&magic| i128::from(magic) == kind)
    })
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
    fn new(window: Duration, lease: Lease, roots: usize) -> io::Result<Self> {
        Ok(Watcher {
            held: lease.held(),
            lease,
            inotify: Inotify::init()?,
            dirs: HashMap::new(),
            pending: HashMap::new(),
            list: None,
            lost: false,
            moved: Vec::new(),
            rewatch: Vec::new(),
            holes: vec![None; roots],
            window,
            limit_logged: false,
        })
    }

    /// The watches of `root` leave part of it unwatched, for `reason`: the watcher stops
    /// vouching for its listings (counted once per build of its watches).
    fn hole(&mut self, served: &ServedRoots, root: usize, reason: FreshnessFallback) {
        if let Some(hole) = self.holes.get_mut(root)
            && hole.is_none()
        {
            *hole = Some(reason);
            served.fresh.withdraw(Some(root), reason);
        }
    }

    /// Paths watched in `root` changed: its watches are rebuilt at the end of this round,
    /// and meanwhile the watcher does not vouch for its listings.
    fn rebuild(&mut self, served: &ServedRoots, root: usize) {
        if !self.moved.contains(&root) {
            self.moved.push(root);
            served
                .fresh
                .withdraw(Some(root), FreshnessFallback::Rebuild);
        }
    }

    /// Rebuilds the watches of `root` from scratch.
    fn rebuild_now(&mut self, served: &ServedRoots, root: usize) {
        if let Some(hole) = self.holes.get_mut(root) {
            *hole = None;
        }
        self.unwatch_root(root);
        self.watch_tree(served, root, RelPath::root(), None);
    }

    /// Vouches for the listings of every root whose watches are whole, with nothing lost
    /// or moved since they were placed.
    fn vouch(&self, served: &ServedRoots) {
        if self.lost {
            return;
        }
        for root in 0..served.roots.len() {
            if self.holes.get(root).is_some_and(Option::is_none) && !self.moved.contains(&root) {
                served.fresh.vouch(root);
            }
        }
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
            let dir = match opened {
                Ok(dir) => dir,
                // Gone meanwhile: its parent's watch reports it.
                Err(e) if gone(&e) => continue,
                Err(e) => {
                    tracing::debug!(error = %e, "directory not watched");
                    self.hole(served, root, FreshnessFallback::Unwatchable);
                    continue;
                }
            };
            if self.holes.get(root).is_some_and(Option::is_none) && without_events(&dir) {
                self.hole(served, root, FreshnessFallback::NoEvents);
            }
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
                    self.hole(served, root, FreshnessFallback::WatchLimit);
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
                    self.hole(served, root, FreshnessFallback::Unwatchable);
                    continue;
                }
                Err(e) if gone(&e) => continue,
                Err(e) => {
                    tracing::debug!(error = %e, "directory not watched");
                    self.hole(served, root, FreshnessFallback::Unwatchable);
                    continue;
                }
            }
            let entries = match dir.entries() {
                Ok(entries) => entries,
                Err(e) if gone(&e) => continue,
                Err(_) => {
                    // Its subdirectories cannot be found, so they go unwatched.
                    self.hole(served, root, FreshnessFallback::Unwatchable);
                    continue;
                }
            };
            let rules = served.roots[root].visibility.rules_for(base, &rel);
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                if kind.is_dir()
                    && served.roots[root]
                        .visibility
                        .entry_visible(&rules, &name, true)
                {
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
            self.round(&t, feed, buffer)?;
        }
    }

    /// Reads the events waiting (each drops the cached listings it touches as it is
    /// read), rebuilds what they call for, vouches for the roots whose watches are whole,
    /// then publishes what is due.
    fn round(&mut self, t: &ServedRoots, feed: &ChangeFeed, buffer: &mut [u8]) -> io::Result<()> {
        loop {
            match self.inotify.read_events(buffer) {
                Ok(events) => {
                    let events: Vec<_> = events.map(|e| e.to_owned()).collect();
                    if events.is_empty() {
                        break;
                    }
                    for e in &events {
                        self.event(t, &e.wd, e.mask, e.name.as_deref());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        if self.lost {
            self.pending.clear();
            self.list = None;
            // Listings stopped being trusted when the overflow was read, before this.
            republish_all(feed, &self.lease);
            self.moved.clear();
            self.rewatch.clear();
            for root in 0..t.roots.len() {
                self.rebuild_now(t, root);
            }
            self.lost = false;
        }
        for (root, dir) in std::mem::take(&mut self.rewatch) {
            if !self.moved.contains(&root) {
                self.watch_tree(t, root, dir.clone(), None);
                drop_listings(t, root, &dir, true);
            }
        }
        for root in std::mem::take(&mut self.moved) {
            self.rebuild_now(t, root);
        }
        self.vouch(t);
        self.publish_due(t, feed, Instant::now());
        Ok(())
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

    /// One event: what it means for the listing cache (dropped at once), for the watches,
    /// and for what is published once due.
    fn event(
        &mut self,
        served: &ServedRoots,
        wd: &WatchDescriptor,
        mask: EventMask,
        name: Option<&OsStr>,
    ) {
        let now = Instant::now();
        if mask.contains(EventMask::Q_OVERFLOW) {
            // Events were lost: no listing is trusted on this watcher's word until the
            // watches are rebuilt and the directories scanned again.
            served.fresh.withdraw(None, FreshnessFallback::Overflow);
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
            // The watched directory itself was removed, moved or unmounted.
            if mask.intersects(EventMask::MOVE_SELF | EventMask::UNMOUNT) {
                // Watched paths below it changed name, or what the mount covered shows:
                // rebuild this root's watches.
                self.rebuild(served, root);
            }
            drop_listings(served, root, &dir, true);
            self.entries_changed(root, dir, now);
            return;
        };
        let is_dir = mask.contains(EventMask::ISDIR);
        if !is_dir && (name == ".gitignore" || name == ".ignore") {
            // What is exposed below this directory may have changed: its rules are read
            // again, what is cached below it is dropped, and at the end of the round the
            // directories it now exposes are watched (and what was cached below it
            // meanwhile dropped again).
            served.roots[root].visibility.forget_rules(&dir);
            drop_listings(served, root, &dir, true);
            if !self.rewatch.iter().any(|(r, d)| *r == root && *d == dir) {
                self.rewatch.push((root, dir.clone()));
            }
            self.entries_changed(root, dir, now);
            return;
        }
        let Root {
            dir: base,
            visibility,
            ..
        } = &*served.roots[root];
        let rules = visibility.rules_for(base, &dir);
        if !visibility.entry_visible(&rules, name, is_dir) {
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
                self.rebuild(served, root);
            } else if appeared {
                self.watch_tree(served, root, path.clone(), None);
            }
            // Whatever is cached below it is gone, or was scanned before its watches
            // were placed.
            drop_listings(served, root, &path, true);
        }
        drop_listings(served, root, &dir, false);
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
mod tests;
