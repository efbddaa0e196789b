//! A request that goes away stops the git work it started. Each kind of work runs as a
//! request runs it ([`crate::kit::blocking::run`]), and the request's future is dropped
//! while the work is in its middle: the work must give up at its next look at the stop
//! signal, answer a cancellation, and leave nothing partial remembered (the history of
//! the served refs).

use std::sync::Arc;

use super::config::GitConfig;
use super::provider::GitProvider;
use super::state::ServedRepo;
use crate::kit::blocking::Stop;
use crate::kit::blocking::tests::{drop_at, gave_up};

#[path = "../../tests/common/gitrepo.rs"]
mod gitrepo;

use gitrepo::{Fixture, Item};

/// A repository whose `main` holds 300 files in its root, over 40 commits, with 150
/// more branches, none at the first commit.
fn fixture() -> (Fixture, Vec<gix::ObjectId>) {
    let f = Fixture::new();
    let names: Vec<String> = (0..300).map(|i| format!("f{i:03}")).collect();
    let items: Vec<Item<'_>> = names.iter().map(|n| Item::File(n, b"x")).collect();
    let commits: Vec<_> = (0..40)
        .map(|i| f.commit("main", &format!("c{i}"), &items))
        .collect();
    for b in 0..150 {
        f.set_ref(&format!("refs/heads/b{b:03}"), commits[1 + b % 39]);
    }
    (f, commits)
}

fn served(f: &Fixture) -> Arc<ServedRepo> {
    let config = GitConfig {
        poll_interval: None,
        ..GitConfig::default()
    };
    Arc::clone(&GitProvider::open(f.path(), config).unwrap().served)
}

/// Runs `f` as a request's work does: with a thread-local handle on the repository.
fn on_repo<T>(served: &Arc<ServedRepo>, f: impl FnOnce(&ServedRepo, &gix::Repository) -> T) -> T {
    f(served, &served.repo.to_thread_local())
}

#[tokio::test]
async fn a_tree_listing_gives_up_once_its_request_went_away() {
    let (f, _) = fixture();
    let served = served(&f);
    let whole = on_repo(&served, |s, repo| {
        s.list_children(repo, "git:///main", (None, 1000, None), &Stop::default())
    });
    assert_eq!(whole.unwrap().resources.len(), 300);
    let s = Arc::clone(&served);
    gave_up(
        drop_at(100, move |stop| {
            on_repo(&s, |s, repo| {
                s.list_children(repo, "git:///main", (None, 1000, None), stop)
            })
        })
        .await,
    );
}

#[tokio::test]
async fn a_refs_listing_gives_up_once_its_request_went_away() {
    let (f, _) = fixture();
    let served = served(&f);
    let whole = on_repo(&served, |s, repo| {
        s.list_refs(repo, (None, 1000, None), &Stop::default())
    });
    // HEAD, main and the 150 branches.
    assert_eq!(whole.unwrap().resources.len(), 152);
    let s = Arc::clone(&served);
    gave_up(
        drop_at(100, move |stop| {
            on_repo(&s, |s, repo| s.list_refs(repo, (None, 1000, None), stop))
        })
        .await,
    );
}

#[tokio::test]
async fn a_history_walk_gives_up_once_its_request_went_away_and_is_not_remembered() {
    let (f, commits) = fixture();
    let served = served(&f);
    // The first commit is reachable only through the history of the tips: naming it walks
    // the history (after reading `main` and the 150 branches), stopped here in the middle
    // of its 40 commits.
    let uri = format!("git:///{}", commits[0]);
    let s = Arc::clone(&served);
    let at = uri.clone();
    gave_up(
        drop_at(151 + 20, move |stop| {
            on_repo(&s, |s, repo| s.metadata(repo, &at, stop))
        })
        .await,
    );
    // A walk that gave up left nothing behind: the whole history is walked next time.
    let found = on_repo(&served, |s, repo| s.metadata(repo, &uri, &Stop::default()));
    assert_eq!(found.unwrap().uri, uri);
}
