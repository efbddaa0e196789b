//! Watching the skills directories: a scan every interval on a thread of its own, the
//! new index swapped in, and what changed between the two published (in turns with the
//! other instances of a deployment, [`crate::poll`]).
//!
//! Invariant: the thread holds the served state weakly and ends once the provider is
//! dropped; a changed file notifies its subscribers, a skill or file that appears or goes
//! notifies `list_changed`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rsrc::ChangeFeed;

use super::index::publish;
use super::roots::PREFIX;
use super::state::ServedSkills;
use crate::poll::Turns;

/// Scans the roots every `interval` on a thread of its own, publishing what changed.
pub(super) fn start(served: &Arc<ServedSkills>, feed: &ChangeFeed, interval: Duration) {
    const SLICE: Duration = Duration::from_millis(500);
    let weak: Weak<ServedSkills> = Arc::downgrade(served);
    let turns = Turns::new(feed, PREFIX);
    let spawned = std::thread::Builder::new()
        .name("rsrc-skills-poll".into())
        .spawn(move || {
            while let Ok(turn) = turns.wait(interval, SLICE, || weak.strong_count() > 0) {
                let (Some(turn), Some(served)) = (turn, weak.upgrade()) else {
                    continue;
                };
                // Swapped even when nothing was published: new stamps spare the next
                // scan from hashing a file that was only touched.
                let (old, new) = served.rescan();
                if publish(&old, &new, turns.feed()) {
                    turns.found_change(turn);
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "skills are not watched: no thread");
    }
}
