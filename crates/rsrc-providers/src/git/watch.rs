//! Noticing refs that move, appear or disappear, by polling the references (loose and
//! packed) on a thread of its own, and publishing what changed to the change feed.
//!
//! Invariants:
//! - A poll reads the references only (one iteration of `HEAD`, `refs/heads/`,
//!   `refs/tags/`); objects are read only when something changed, and only for subscribed
//!   URIs (at most [`MAX_CHECKED`] per change; beyond that, subscribers are told to look
//!   again rather than the change being lost).
//! - A subscribed URI hears `updated` exactly when what it resolves to — the ref's commit,
//!   or the object id and mode at its path — differs between the last two polls. The
//!   set of refs changing publishes `list_changed`; any change updates `git:///`.
//! - The first snapshot is taken when the provider is attached, so no change after that is
//!   missed; a failing poll keeps the last good snapshot and is logged once.
//! - The thread ends within [`SLICE`] of the provider being dropped; a panic inside one
//!   poll (gix on a corrupt repository) is logged and the next poll goes on.
//! - In a deployment of several instances, pollers take turns ([`crate::poll`]): one
//!   polls, the others look once when it finds a change.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Weak};
use std::time::Duration;

use gix::ObjectId;
use gix::bstr::BString;
use rsrc::ChangeFeed;

use super::Shared;
use super::names::{self, Target};
use super::repo::{self, GixError, Refs};
use crate::poll::{Turn, Turns};

/// The most subscribed URIs whose objects are compared per change.
const MAX_CHECKED: usize = 16 * 1024;
/// How often the thread looks whether the provider is still there.
const SLICE: Duration = Duration::from_millis(100);

/// What a URI resolves to: an object id and mode (0 for a ref's commit).
type Identity = Option<(ObjectId, u16)>;

/// Takes the first snapshot, then polls on a thread of its own.
pub(super) fn start(shared: &Arc<Shared>, feed: &ChangeFeed, interval: Duration) {
    let known = Refs::read(&shared.repo.to_thread_local(), shared.config.max_refs).ok();
    let weak = Arc::downgrade(shared);
    let repo = shared.repo.clone();
    let turns = Turns::new(feed, &shared.prefix);
    let started = std::thread::Builder::new()
        .name("rsrc-git-poll".into())
        .spawn(move || run(&weak, &repo.to_thread_local(), &turns, interval, known));
    if let Err(e) = started {
        tracing::warn!(error = %e, "no git ref poller: changes will not be notified");
    }
}

fn run(
    weak: &Weak<Shared>,
    repo: &gix::Repository,
    turns: &Turns,
    interval: Duration,
    mut known: Option<Refs>,
) {
    let mut failing = false;
    while let Ok(turn) = turns.wait(interval, SLICE, || weak.strong_count() > 0) {
        let (Some(turn), Some(shared)) = (turn, weak.upgrade()) else {
            continue;
        };
        let polled = catch_unwind(AssertUnwindSafe(|| {
            poll(&shared, repo, turns, turn, known.as_ref())
        }));
        match polled {
            Ok(Ok(now)) => {
                failing = false;
                known = Some(now);
            }
            Ok(Err(e)) => {
                if !failing {
                    tracing::warn!(error = %e, prefix = %shared.prefix, "cannot read the git references");
                }
                failing = true;
            }
            Err(_) => {
                tracing::warn!(prefix = %shared.prefix, "reading the git references panicked");
            }
        }
    }
}

/// Reads the references and publishes what changed since `known`.
fn poll(
    shared: &Shared,
    repo: &gix::Repository,
    turns: &Turns,
    turn: Turn,
    known: Option<&Refs>,
) -> Result<Refs, GixError> {
    let now = Refs::read(repo, shared.config.max_refs)?;
    if let Some(before) = known
        && *before != now
    {
        publish(shared, repo, turns.feed(), before, &now);
        turns.found_change(turn);
    }
    Ok(now)
}

fn publish(shared: &Shared, repo: &gix::Repository, feed: &ChangeFeed, before: &Refs, now: &Refs) {
    if !before.map.keys().eq(now.map.keys()) {
        feed.list_changed();
    }
    feed.updated(&shared.prefix);
    let mut memo = HashMap::new();
    let subscribed = feed.subscribed(&shared.prefix);
    for (i, uri) in subscribed.iter().enumerate() {
        if *uri == shared.prefix {
            continue;
        }
        if i >= MAX_CHECKED {
            feed.updated(uri);
            continue;
        }
        let Some(rest) = uri.strip_prefix(shared.prefix.as_str()) else {
            continue;
        };
        let Ok(target) = names::parse(rest, shared.hash) else {
            continue;
        };
        let old = identity(repo, before, &target, &mut memo);
        let new = identity(repo, now, &target, &mut memo);
        if old != new {
            feed.updated(uri);
        }
    }
}

/// What `target` resolves to among `refs`.
fn identity(
    repo: &gix::Repository,
    refs: &Refs,
    target: &Target,
    memo: &mut HashMap<(ObjectId, Vec<BString>), Identity>,
) -> Identity {
    let id = refs.resolve(target.ref_name()?)?;
    let path = target.path();
    if path.is_empty() {
        return Some((id, 0));
    }
    let key = (id, path.to_vec());
    if let Some(known) = memo.get(&key) {
        return *known;
    }
    let found = repo::commit(repo, id)
        .ok()
        .flatten()
        .and_then(|c| repo::walk(repo, c.tree, path).ok().flatten())
        .map(|node| node.identity());
    memo.insert(key, found);
    found
}
