//! One poll-and-digest watcher, shared by the SQLite, PostgreSQL and git providers: a
//! cheap look at the whole source on a schedule (SQLite's `data_version`, PostgreSQL's
//! snapshot horizon, git's references) and, when it moved, a digest of each subscribed
//! URI compared with the one remembered, so that exactly the subscribers whose resource
//! changed hear of it.
//!
//! A provider implements [`Source`] (how to look, what a move means beyond digests, how
//! to digest one URI), keeps a [`Subscribed`] table (filled when a client subscribes) and
//! calls [`start`]; it tells the engine what it hears through [`DigestWatched`]. The
//! turn-taking among the instances of a deployment is [`crate::poll`]'s: one instance
//! polls, the others look once when it finds a change, each telling its own subscribers.
//!
//! Invariants:
//! - A look is cheap and runs every interval; subscribed URIs are digested only when the
//!   look moved, and never while the table's lock is held.
//! - At most the table's cap of subscribed URIs are digested per change and remembered;
//!   the others are told to look again (an update without a digest): a change is never
//!   lost, at worst told to a subscriber whose resource did not change.
//! - A subscribed URI hears `updated` when its digest differs from the one remembered (at
//!   subscription, or at the last change), or when none is remembered.
//! - A subscription's digest is taken only after the watcher's first look
//!   ([`Subscribed::watching`]): a change between the two would otherwise be in both, and
//!   never heard.
//! - The watcher holds its source weakly and ends as soon as the source is dropped; a
//!   look that fails is logged once until one succeeds again; a panic inside one poll (a
//!   corrupt repository) is logged and the next poll goes on.
//! - A provider watched here hears a change only for what is subscribed, and says so in
//!   one place ([`DigestWatched`]).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use rsrc::{ChangeFeed, ProviderCapabilities};
use tokio::sync::Notify;

use crate::kit::armed::Armed;
use crate::poll::{Turn, Turns};

/// The subscribed URIs of one source and the digest each had when last looked at: at
/// most `cap` of them.
#[derive(Debug)]
pub(crate) struct Subscribed {
    digests: Mutex<HashMap<String, u64>>,
    cap: usize,
    /// Told when the table (and so its source) is dropped, so that the watcher ends.
    gone: Arc<Notify>,
    /// Disarmed while a watcher takes its first look.
    armed: Armed,
}

impl Subscribed {
    /// Whether the watcher took its first look (or there is none).
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.is_armed()
    }
}

impl Subscribed {
    /// An empty table of at most `cap` URIs.
    pub(crate) fn new(cap: usize) -> Subscribed {
        Subscribed {
            digests: Mutex::new(HashMap::new()),
            cap,
            gone: Arc::new(Notify::new()),
            armed: Armed::default(),
        }
    }

    /// Waits (boundedly) until the watcher has taken the look later looks are compared
    /// with: a subscription takes its digest after this, so that a change made after the
    /// digest moves a later look.
    pub(crate) async fn watching(&self) {
        self.armed.wait().await;
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.digests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers the digest of `uri`, just subscribed to, if the table has room (or
    /// already holds it), so that its first change is told apart from no change.
    pub(crate) fn remember(&self, uri: &str, digest: u64) {
        let mut digests = self.lock();
        if digests.len() < self.cap || digests.contains_key(uri) {
            digests.insert(uri.to_owned(), digest);
        }
    }

    /// Forgets the URIs no longer subscribed to; the digests of those still are.
    fn keep_only(&self, subscribed: &[String]) -> HashMap<String, u64> {
        let still: HashSet<&str> = subscribed.iter().map(String::as_str).collect();
        let mut digests = self.lock();
        digests.retain(|uri, _| still.contains(uri.as_str()));
        digests.clone()
    }

    /// Stores digests just computed, within the cap.
    fn store(&self, fresh: HashMap<String, u64>) {
        let mut digests = self.lock();
        for (uri, digest) in fresh {
            if digests.len() < self.cap || digests.contains_key(&uri) {
                digests.insert(uri, digest);
            }
        }
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.gone.notify_one();
    }
}

/// A provider whose changes this watcher finds, and what it therefore tells the engine —
/// the rule written once for every such provider: while it watches, it may be subscribed
/// to and heard changing its list; it hears a change only for what is subscribed (its
/// watcher digests subscribed resources only, so a change to one not yet subscribed is
/// never published), so it does not hear every change; and it is armed once each of its
/// sources' watchers took its first look. Its `rsrc::Provider` face answers
/// `capabilities`, `hears_every_change` and `armed` with the methods here.
pub(crate) trait DigestWatched {
    /// Whether it is set to watch its sources.
    fn watches(&self) -> bool;

    /// The subscription table of each source it watches.
    fn tables(&self) -> impl Iterator<Item = &Subscribed>;

    /// Subscriptions and list changes, while it watches.
    fn watched_capabilities(&self) -> ProviderCapabilities {
        let watching = self.watches();
        ProviderCapabilities::default()
            .with_subscribe(watching)
            .with_list_changed(watching)
    }

    /// Whether a change to any of its resources, subscribed or not, would be published:
    /// only when it does not watch (then none is, and nothing can be subscribed).
    fn hears_unsubscribed_changes(&self) -> bool {
        !self.watches()
    }

    /// Whether every watcher took its first look.
    fn watchers_armed(&self) -> bool {
        self.tables().all(Subscribed::is_armed)
    }
}

/// A source the watcher polls.
pub(crate) trait Source: Send + Sync + 'static {
    /// One look at the whole source; a different look means that something changed.
    type Look: PartialEq + Send + Sync + 'static;
    /// What the watcher keeps to look with (a connection of its own), if anything.
    type Probe: Send + 'static;

    /// The source's URI prefix: its URIs are the prefix itself and what continues it
    /// after a `/`; also the name of its lease and signals among instances.
    fn topic(&self) -> &str;

    /// The table of subscribed URIs and their digests.
    fn subscribed(&self) -> &Subscribed;

    /// Looks at the whole source; the error says why it cannot be looked at.
    fn look(
        &self,
        probe: &mut Self::Probe,
    ) -> impl Future<Output = Result<Self::Look, String>> + Send;

    /// The source moved from `before` to `now`: refresh what depends on it (a catalog)
    /// and publish what no digest tells (the list changing).
    fn moved(
        &self,
        probe: &mut Self::Probe,
        before: &Self::Look,
        now: &Self::Look,
        feed: &ChangeFeed,
    ) -> impl Future<Output = ()> + Send;

    /// The digest of what `uri` names as of `now`; `None` for a URI that
    /// [`moved`](Source::moved) already told of.
    fn digest(
        &self,
        probe: &mut Self::Probe,
        now: &Self::Look,
        uri: &str,
    ) -> impl Future<Output = Result<Option<u64>, String>> + Send;
}

/// Where a watcher runs.
#[derive(Debug)]
pub(crate) enum Runs {
    /// On a thread of its own with this name: for sources whose looks and digests block.
    #[cfg(any(feature = "sqlite", feature = "git"))]
    Thread(String),
    /// On the current tokio runtime; on a thread of its own with this name when there
    /// is none (a provider built before any runtime, as `rsrc serve` does). Its
    /// connections then live on that thread's runtime.
    #[cfg(feature = "postgres")]
    Task(String),
}

/// Starts watching `source`: it is looked at every `interval` (in turns with the other
/// instances) with `probe`. `first` is the look to compare the first poll with; without
/// one, the watcher looks first thing, lease or not, so that a signal later compares with
/// something, and subscriptions wait for that look ([`Subscribed::watching`]).
pub(crate) fn start<S: Source>(
    source: &Arc<S>,
    feed: &ChangeFeed,
    interval: Duration,
    probe: S::Probe,
    first: Option<S::Look>,
    runs: Runs,
) {
    let turns = Turns::new(feed, source.topic());
    let gone = Arc::clone(&source.subscribed().gone);
    if first.is_none() {
        source.subscribed().armed.disarm();
    }
    let arming = ArmWhenDropped(Arc::downgrade(source));
    let watching = run(
        Arc::downgrade(source),
        turns,
        gone,
        interval,
        probe,
        first,
        arming,
    );
    // Without `postgres` only the thread arm is left.
    #[allow(clippy::infallible_destructuring_match)]
    let name = match runs {
        #[cfg(feature = "postgres")]
        Runs::Task(name) => match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(watching);
                return;
            }
            Err(_) => name,
        },
        #[cfg(any(feature = "sqlite", feature = "git"))]
        Runs::Thread(name) => name,
    };
    let started = std::thread::Builder::new().name(name).spawn(move || {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(watching),
            Err(e) => unwatched(&e),
        }
    });
    if let Err(e) = started {
        unwatched(&e);
    }
}

fn unwatched(e: &std::io::Error) {
    tracing::warn!(error = %e, "no change watcher: changes will not be notified");
}

/// Lets subscriptions go on ([`Subscribed::watching`]) when dropped: the watcher drops it
/// after its first look, and it goes with the watcher if that ends, or never runs, before.
struct ArmWhenDropped<S: Source>(Weak<S>);

impl<S: Source> Drop for ArmWhenDropped<S> {
    fn drop(&mut self) {
        if let Some(s) = self.0.upgrade() {
            s.subscribed().armed.arm();
        }
    }
}

async fn run<S: Source>(
    source: Weak<S>,
    turns: Turns,
    gone: Arc<Notify>,
    interval: Duration,
    mut probe: S::Probe,
    first: Option<S::Look>,
    arming: ArmWhenDropped<S>,
) {
    let mut last = match first {
        Some(look) => Some(look),
        None => {
            let Some(s) = source.upgrade() else { return };
            match Guarded(Box::pin(s.look(&mut probe))).await {
                Ok(Ok(look)) => Some(look),
                _ => None,
            }
        }
    };
    drop(arming);
    let mut failing = false;
    loop {
        let turn = tokio::select! {
            turn = turns.wait_async(interval) => turn,
            () = gone.notified() => return,
        };
        let Some(s) = source.upgrade() else { return };
        let Some(turn) = turn else { continue };
        let polled = Guarded(Box::pin(poll(&*s, &mut probe, &turns, turn, last.as_ref()))).await;
        match polled {
            Ok(Ok(now)) => {
                failing = false;
                last = Some(now);
            }
            Ok(Err(e)) => {
                if !failing {
                    tracing::warn!(source = %s.topic(), error = %e, "cannot look for changes");
                }
                failing = true;
            }
            Err(_) => tracing::warn!(source = %s.topic(), "looking for changes panicked"),
        }
    }
}

/// One look; if it moved since `last`, what changed is published and, on this
/// instance's own turn, the other instances are told to look too. Without a `last` (the
/// first look failed), the subscribed URIs' digests are compared with what their
/// subscriptions remembered, so that a change since then is not taken as the baseline.
async fn poll<S: Source>(
    s: &S,
    probe: &mut S::Probe,
    turns: &Turns,
    turn: Turn,
    last: Option<&S::Look>,
) -> Result<S::Look, String> {
    let now = s.look(probe).await?;
    match last {
        Some(before) if *before != now => {
            publish(s, probe, Some(before), &now, turns.feed()).await;
            turns.found_change(turn);
        }
        Some(_) => {}
        None => publish(s, probe, None, &now, turns.feed()).await,
    }
    Ok(now)
}

/// Whether `uri` is one of the source `topic`'s: the topic itself, or what continues it
/// after a `/` (`db://shop` is not `db://shopping`'s).
fn belongs(topic: &str, uri: &str) -> bool {
    uri.strip_prefix(topic)
        .is_some_and(|rest| rest.is_empty() || topic.ends_with('/') || rest.starts_with('/'))
}

/// The source moved (from `before`, if known): publishes what the move says, then updates
/// each subscribed URI whose digest changed (see the module docs).
async fn publish<S: Source>(
    s: &S,
    probe: &mut S::Probe,
    before: Option<&S::Look>,
    now: &S::Look,
    feed: &ChangeFeed,
) {
    if let Some(before) = before {
        s.moved(probe, before, now, feed).await;
    }
    let topic = s.topic();
    let subscribed: Vec<String> = feed
        .subscribed(topic)
        .into_iter()
        .filter(|uri| belongs(topic, uri))
        .collect();
    let table = s.subscribed();
    let known = table.keep_only(&subscribed);
    let mut fresh = HashMap::with_capacity(subscribed.len().min(table.cap));
    for (i, uri) in subscribed.iter().enumerate() {
        if i >= table.cap {
            feed.updated(uri);
            continue;
        }
        match s.digest(probe, now, uri).await {
            Ok(None) => {}
            Ok(Some(digest)) => {
                if known.get(uri) != Some(&digest) {
                    feed.updated(uri);
                }
                fresh.insert(uri.clone(), digest);
            }
            Err(e) => {
                tracing::debug!(%uri, error = %e, "digest failed; notifying");
                feed.updated(uri);
            }
        }
    }
    table.store(fresh);
}

/// A future whose panic is caught and returned, so that a panic inside one poll ends
/// that poll only.
struct Guarded<F>(Pin<Box<F>>);

impl<F: Future> Future for Guarded<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_belongs_to_its_source_only() {
        assert!(belongs("db://shop", "db://shop"));
        assert!(belongs("db://shop", "db://shop/t/1"));
        assert!(!belongs("db://shop", "db://shopping/t"));
        assert!(belongs("git:///", "git:///main/a.txt"));
        assert!(belongs("git://r/", "git://r/main"));
        assert!(!belongs("git://r/", "git://s/main"));
    }

    #[test]
    fn the_table_keeps_at_most_its_cap_and_forgets_unsubscribed_uris() {
        let table = Subscribed::new(2);
        table.remember("a", 1);
        table.remember("b", 2);
        table.remember("c", 3);
        assert_eq!(table.lock().len(), 2, "c is over the cap");
        table.remember("a", 10);
        assert_eq!(
            table.lock().get("a"),
            Some(&10),
            "a known URI is updated at the cap"
        );
        let known = table.keep_only(&["b".to_owned(), "c".to_owned()]);
        assert_eq!(known, HashMap::from([("b".to_owned(), 2)]));
        table.store(HashMap::from([("c".to_owned(), 3), ("b".to_owned(), 4)]));
        assert_eq!(
            *table.lock(),
            HashMap::from([("b".to_owned(), 4), ("c".to_owned(), 3)])
        );
    }

    #[tokio::test]
    async fn a_panic_inside_a_guarded_future_is_returned() {
        let ok = Guarded(Box::pin(async { 7 })).await;
        assert_eq!(ok.ok(), Some(7));
        let panicked = Guarded(Box::pin(async {
            tokio::task::yield_now().await;
            panic!("corrupt object");
        }))
        .await;
        assert!(panicked.is_err());
    }

    /// Watchers over a test source (the thread they run on needs `sqlite` or `git`).
    #[cfg(any(feature = "sqlite", feature = "git"))]
    mod watcher {
        use std::sync::atomic::{AtomicU64, Ordering};

        use rsrc::protocol::ProtocolVersion;
        use rsrc::transport::{StreamConfig, serve_in_memory};
        use serde_json::json;

        use super::*;

        /// A source of one URI whose digest is `digest`; its first look waits until
        /// `open` is told (if `held`), then fails (if `fail_first`).
        struct TestSource {
            subscribed: Subscribed,
            held: bool,
            open: Notify,
            fail_first: bool,
            digest: AtomicU64,
        }

        impl Source for TestSource {
            type Look = u8;
            /// Whether the first look was taken.
            type Probe = bool;

            fn topic(&self) -> &str {
                "db://slow"
            }

            fn subscribed(&self) -> &Subscribed {
                &self.subscribed
            }

            async fn look(&self, looked: &mut bool) -> Result<u8, String> {
                if !std::mem::replace(looked, true) {
                    if self.held {
                        self.open.notified().await;
                    }
                    if self.fail_first {
                        return Err("not yet".into());
                    }
                }
                Ok(0)
            }

            async fn moved(&self, _: &mut bool, _: &u8, _: &u8, _: &ChangeFeed) {}

            async fn digest(&self, _: &mut bool, _: &u8, _: &str) -> Result<Option<u64>, String> {
                Ok(Some(self.digest.load(Ordering::SeqCst)))
            }
        }

        fn source(held: bool, fail_first: bool) -> Arc<TestSource> {
            Arc::new(TestSource {
                subscribed: Subscribed::new(8),
                held,
                open: Notify::new(),
                fail_first,
                digest: AtomicU64::new(1),
            })
        }

        /// Starts watching `source` for `server`'s listeners, every 10 ms.
        fn watch(source: &Arc<TestSource>, server: &rsrc::Server, first: Option<u8>) {
            let interval = Duration::from_millis(10);
            let runs = Runs::Thread("rsrc-test-watch".into());
            start(source, &server.changes(), interval, false, first, runs);
        }

        fn server() -> rsrc::Server {
            rsrc::Server::builder("t", "0").build().unwrap()
        }

        #[tokio::test]
        async fn a_subscription_waits_for_the_watchers_first_look() {
            let source = source(true, false);
            watch(&source, &server(), None);
            let waiting = tokio::spawn({
                let source = Arc::clone(&source);
                async move { source.subscribed.watching().await }
            });
            // The waiting task runs until it parks (one thread: yielding lets it).
            for _ in 0..16 {
                tokio::task::yield_now().await;
            }
            assert!(
                !waiting.is_finished(),
                "no look yet: the subscription waits"
            );
            source.open.notify_one();
            tokio::time::timeout(Duration::from_secs(4), waiting)
                .await
                .expect("the first look ends the wait")
                .unwrap();
        }

        /// Without a first look to compare with, the first look that succeeds would be
        /// taken as the baseline, and a change since a subscription never heard.
        #[tokio::test]
        async fn a_change_before_the_first_successful_look_is_heard() {
            let set = rsrc::ResourceSet::new()
                .with_text(rsrc::protocol::Resource::new("db://slow/x", "x"), "x")
                .with_subscriptions();
            let server = rsrc::Server::builder("t", "0")
                .mount("db://slow", set)
                .build()
                .unwrap();
            let (r, w) = tokio::io::split(serve_in_memory(&server, StreamConfig::default()));
            let mut peer = rsrc_testkit::Peer::new(r, w);
            peer.initialize(ProtocolVersion::V2025_11_25).await;
            let ok = peer
                .request("resources/subscribe", json!({"uri": "db://slow/x"}))
                .await;
            assert_eq!(ok["result"], json!({}));
            let source = source(false, true);
            // The subscription's digest, then a change, both before any look succeeds.
            source.subscribed.remember("db://slow/x", 1);
            source.digest.store(2, Ordering::SeqCst);
            watch(&source, &server, None);
            let note = tokio::time::timeout(Duration::from_secs(5), peer.recv())
                .await
                .expect("the change is heard");
            assert_eq!(note["method"], "notifications/resources/updated");
            assert_eq!(note["params"]["uri"], "db://slow/x");
        }

        #[tokio::test]
        async fn a_watcher_dropped_before_its_first_look_keeps_no_subscription_waiting() {
            let source = source(true, false);
            source.subscribed.armed.disarm();
            let watching = run(
                Arc::downgrade(&source),
                Turns::new(&server().changes(), "db://slow"),
                Arc::new(Notify::new()),
                Duration::from_millis(10),
                false,
                None,
                ArmWhenDropped(Arc::downgrade(&source)),
            );
            // A runtime that ends before the watcher's task first runs drops it like this.
            drop(watching);
            tokio::time::timeout(Duration::from_secs(1), source.subscribed.watching())
                .await
                .expect("no wait");
        }

        #[tokio::test]
        async fn a_watcher_given_its_first_look_keeps_no_subscription_waiting() {
            let source = source(true, false);
            watch(&source, &server(), Some(0));
            tokio::time::timeout(Duration::from_secs(1), source.subscribed.watching())
                .await
                .expect("no wait");
        }
    }

    #[tokio::test]
    async fn dropping_the_table_wakes_its_watcher() {
        let table = Subscribed::new(1);
        let gone = Arc::clone(&table.gone);
        drop(table);
        tokio::time::timeout(Duration::from_secs(5), gone.notified())
            .await
            .expect("woken");
    }
}
