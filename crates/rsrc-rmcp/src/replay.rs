//! What a `subscriptions/listen` stream may have missed between rmcp's acknowledgement
//! and the engine's subscription, sent once the engine has subscribed.
//!
//! rmcp acknowledges a stream itself, before `ServerHandler::listen` runs, where rsrc's
//! own server acknowledges only once the stream is subscribed (and its provider sees
//! every change: a watcher armed). A client may act on the acknowledgement at once, so a
//! change could be published before the engine holds the stream's subscriptions. This
//! module keeps the last changes published ([`ChangeLog`], fed by the change feed's
//! observer, which runs before any listener hears of a change). Where the log stood is
//! noted before rmcp acknowledges ([`ChangeLog::note`], from
//! `accepted_subscription_filter`, which rmcp asks first), `listen` takes the oldest
//! such note ([`ChangeLog::noted`]), and once the engine has acknowledged (and so
//! subscribed) the stream, the changes since then for what the stream holds are sent to
//! it.
//!
//! A provider may also not hear a change at all until its watcher is in place, which
//! rsrc's own server waits for before it acknowledges. The note says whether every
//! provider heard every change when rmcp acknowledged ([`rsrc::Server::hears_every_change`]);
//! if one did not, every URI the stream holds is told to look again, and the list too if
//! the stream follows it.
//!
//! Invariant: a change made after rmcp acknowledged a stream reaches it, at worst twice
//! (a stream may take an older note than its own, never a newer one); if more changes
//! came than the log keeps, or a provider could not hear every change when the stream was
//! acknowledged, every subscribed URI is told to look again (and the list, if the stream
//! follows it).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use rsrc::ChangeEvent;

/// How many changes the log keeps.
const KEPT: usize = 1024;

/// One change, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Logged {
    Updated(String),
    ListChanged,
    /// Anything under this prefix may have changed.
    Resync(String),
}

/// Where the log stood when a stream was acknowledged, and whether every provider heard
/// every change then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Since {
    pub(crate) mark: u64,
    pub(crate) heard_all: bool,
}

/// The last [`KEPT`] changes, numbered.
#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    state: Mutex<State>,
    /// Where the log stood when streams not yet listening were acknowledged, oldest
    /// first (at most [`KEPT`]).
    notes: Mutex<VecDeque<Since>>,
}

#[derive(Debug, Default)]
struct State {
    /// The number the next change gets.
    next: u64,
    events: VecDeque<(u64, Logged)>,
}

impl ChangeLog {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a change (the change feed's observer).
    pub(crate) fn record(&self, event: ChangeEvent<'_>) {
        let logged = match event {
            ChangeEvent::Updated(uri) => Logged::Updated(uri.to_owned()),
            ChangeEvent::ListChanged => Logged::ListChanged,
            ChangeEvent::Resync(prefix) => Logged::Resync(prefix.to_owned()),
            _ => Logged::Resync(String::new()),
        };
        let mut state = self.state();
        let n = state.next;
        state.next += 1;
        if state.events.len() == KEPT {
            state.events.pop_front();
        }
        state.events.push_back((n, logged));
    }

    /// Where the log stands.
    pub(crate) fn mark(&self) -> u64 {
        self.state().next
    }

    /// Notes where the log stands, and whether every provider hears every change
    /// (`heard_all`), for a stream about to be acknowledged.
    pub(crate) fn note(&self, heard_all: bool) {
        let mark = self.mark();
        let mut notes = self.notes.lock().unwrap_or_else(PoisonError::into_inner);
        if notes.len() == KEPT {
            notes.pop_front();
        }
        notes.push_back(Since { mark, heard_all });
    }

    /// The oldest note (a stream starts from no later than its acknowledgement), or
    /// where the log stands if none is left.
    pub(crate) fn noted(&self) -> Since {
        let oldest = self
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        oldest.unwrap_or_else(|| Since {
            mark: self.mark(),
            heard_all: true,
        })
    }

    /// The notifications a stream holding `uris` (and list changes, if `lists`) should
    /// have heard since `since`: the URIs updated (each once) and whether the list
    /// changed.
    pub(crate) fn missed(&self, since: Since, uris: &[String], lists: bool) -> (Vec<String>, bool) {
        let mark = since.mark;
        let state = self.state();
        let lost = state.events.front().is_some_and(|(n, _)| *n > mark) && state.next > mark;
        let mut updated: Vec<String> = Vec::new();
        let mut list_changed = false;
        let mut add = |uri: &String| {
            if !updated.contains(uri) {
                updated.push(uri.clone());
            }
        };
        if lost {
            uris.iter().for_each(&mut add);
            return (updated, lists);
        }
        if !since.heard_all {
            uris.iter().for_each(&mut add);
            list_changed = lists;
        }
        for (_, event) in state.events.iter().filter(|(n, _)| *n >= mark) {
            match event {
                Logged::Updated(uri) if uris.contains(uri) => add(uri),
                Logged::Updated(_) => {}
                Logged::ListChanged => list_changed = lists,
                Logged::Resync(prefix) => {
                    uris.iter()
                        .filter(|u| u.starts_with(prefix.as_str()))
                        .for_each(&mut add);
                    list_changed = lists;
                }
            }
        }
        (updated, list_changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_after_the_mark_to_held_uris_are_missed() {
        let log = ChangeLog::default();
        log.record(ChangeEvent::Updated("a:1"));
        let mark = Since {
            mark: log.mark(),
            heard_all: true,
        };
        log.record(ChangeEvent::Updated("a:2"));
        log.record(ChangeEvent::Updated("a:3"));
        log.record(ChangeEvent::Updated("a:2"));
        log.record(ChangeEvent::ListChanged);
        let held = ["a:1".to_owned(), "a:2".to_owned()];
        assert_eq!(
            log.missed(mark, &held, false),
            (vec!["a:2".to_owned()], false)
        );
        assert!(log.missed(mark, &held, true).1);
        let now = Since {
            mark: log.mark(),
            heard_all: true,
        };
        assert_eq!(log.missed(now, &held, true), (vec![], false));
    }

    #[test]
    fn a_stream_starts_from_where_the_log_stood_before_its_acknowledgement() {
        let log = ChangeLog::default();
        log.note(true);
        log.record(ChangeEvent::Updated("a:1"));
        let since = log.noted();
        assert_eq!(
            log.missed(since, &["a:1".to_owned()], false).0,
            ["a:1".to_owned()]
        );
        assert_eq!(
            log.noted().mark,
            log.mark(),
            "no note left: the log's position"
        );
    }

    #[test]
    fn a_stream_acknowledged_while_a_provider_could_not_hear_every_change_looks_again() {
        let log = ChangeLog::default();
        log.note(false);
        log.record(ChangeEvent::Updated("a:2"));
        let held = ["a:1".to_owned(), "a:2".to_owned()];
        let since = log.noted();
        assert!(!since.heard_all);
        assert_eq!(log.missed(since, &held, false), (held.to_vec(), false));
        assert_eq!(log.missed(since, &held, true), (held.to_vec(), true));
    }

    #[test]
    fn a_resync_or_an_overflow_tells_every_held_uri() {
        let log = ChangeLog::default();
        let mark = Since {
            mark: log.mark(),
            heard_all: true,
        };
        log.record(ChangeEvent::Resync("a:"));
        let held = ["a:1".to_owned(), "b:1".to_owned()];
        assert_eq!(
            log.missed(mark, &held, true),
            (vec!["a:1".to_owned()], true)
        );
        for _ in 0..=KEPT {
            log.record(ChangeEvent::Updated("c:1"));
        }
        assert_eq!(log.missed(mark, &held, false).0, held);
    }
}
