//! Noticing refs that move, appear or disappear, through the shared poll-and-digest
//! watcher ([`crate::kit::watch`]): the look is the served references (loose and packed),
//! and a subscribed URI's digest is what it resolves to at them — the ref's commit, or the
//! object id and mode at its path.
//!
//! Invariants:
//! - A look reads the references only (one iteration of `HEAD`, `refs/heads/`,
//!   `refs/tags/`); objects are read only when something changed, and only for
//!   subscribed URIs (at most [`MAX_CHECKED`](super::state::MAX_CHECKED) per change; beyond that, subscribers are
//!   told to look again rather than the change being lost).
//! - A subscribed URI hears `updated` exactly when what it resolves to differs from what
//!   it resolved to when subscribed or at the last change. The set of refs changing
//!   publishes `list_changed`; any change updates the repository's own URI.
//! - The first look is taken when the provider is attached, so no change after that is
//!   missed; a failing look keeps the last good one and is logged once; a panic inside
//!   one poll (gix on a corrupt repository) is logged and the next poll goes on.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use gix::ObjectId;
use rsrc::ChangeFeed;

use super::names::{self, Target};
use super::repo::{self, Refs};
use super::state::ServedRepo;
use crate::kit::blocking::Stop;
use crate::kit::watch::{self, Runs, Source, Subscribed};

/// Takes the first look, then polls every `interval` on a thread of its own.
pub(super) fn start(served: &Arc<ServedRepo>, feed: &ChangeFeed, interval: Duration) {
    let repo = served.repo.to_thread_local();
    let first = Refs::read(&repo, served.config.max_refs, &Stop::default()).ok();
    watch::start(
        served,
        feed,
        interval,
        repo,
        first,
        Runs::Thread("rsrc-git-poll".into()),
    );
}

impl Source for ServedRepo {
    /// The served references.
    type Look = Refs;
    /// The watcher's own handle on the repository.
    type Probe = gix::Repository;

    fn topic(&self) -> &str {
        &self.prefix
    }

    fn subscribed(&self) -> &Subscribed {
        &self.subscribed
    }

    async fn look(&self, repo: &mut gix::Repository) -> Result<Refs, String> {
        Refs::read(repo, self.config.max_refs, &Stop::default())
            .map_err(|e| format!("cannot read the git references: {e}"))
    }

    async fn moved(&self, _: &mut gix::Repository, before: &Refs, now: &Refs, feed: &ChangeFeed) {
        if !before.map.keys().eq(now.map.keys()) {
            feed.list_changed();
        }
        feed.updated(&self.prefix);
    }

    async fn digest(
        &self,
        repo: &mut gix::Repository,
        now: &Refs,
        uri: &str,
    ) -> Result<Option<u64>, String> {
        Ok(self.digest_at(repo, now, uri))
    }
}

impl ServedRepo {
    /// The digest of what `uri` resolves to among `refs`; `None` for the repository's own
    /// URI (updated on every change) and for URIs that name nothing of this provider.
    pub(super) fn digest_at(&self, repo: &gix::Repository, refs: &Refs, uri: &str) -> Option<u64> {
        let rest = uri.strip_prefix(self.prefix.as_str())?;
        if rest.is_empty() {
            return None;
        }
        let target = names::parse(rest, self.hash).ok()?;
        let mut h = DefaultHasher::new();
        identity(repo, refs, &target).hash(&mut h);
        Some(h.finish())
    }
}

/// What `target` resolves to among `refs`: an object id and mode (0 for a ref's commit),
/// or nothing.
fn identity(repo: &gix::Repository, refs: &Refs, target: &Target) -> Option<(ObjectId, u16)> {
    let id = refs.resolve(target.ref_name()?)?;
    let path = target.path();
    if path.is_empty() {
        return Some((id, 0));
    }
    repo::commit(repo, id)
        .ok()
        .flatten()
        .and_then(|c| repo::walk(repo, c.tree, path).ok().flatten())
        .map(|node| node.identity())
}
