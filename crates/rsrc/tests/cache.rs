//! The read cache, through the wire: single flight, hits within the time to live, the
//! caching hint of cached results, eviction on change, bounds, and errors never stored.
//! Time is tokio's paused clock, which drives both a backend's latency and the cache's
//! time to live, so nothing here depends on the speed of the machine.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rsrc::declare::{IntoContent, Options, Resources};
use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::{
    CacheLimits, Cached, NotFound, ReadCache, Representation, ResourceError, ResourceSet, Server,
};
use serde_json::json;

/// A backend that counts its calls and takes 100 ms (of tokio's clock) for each.
#[derive(Default)]
struct Backend {
    calls: AtomicUsize,
}

impl Backend {
    async fn fetch(&self, id: &str) -> Option<String> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
        (id != "missing").then(|| format!("{id} (call {n})"))
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn server(backend: Arc<Backend>, ttl: Duration) -> Server {
    let set = Resources::shared(backend)
        .template(
            ResourceTemplate::new("x://items/{id}", "item"),
            Options::new().cache(ttl),
            |b, _ctx, vars| async move {
                let id: String = vars.get("id")?;
                b.fetch(&id).await.into_content()
            },
        )
        .build()
        .unwrap();
    Server::builder("t", "0").mount("x:", set).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_second_read_within_the_ttl_is_served_from_the_cache() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;

    let start = tokio::time::Instant::now();
    let first = common::read(&mut p, "x://items/a").await;
    assert!(start.elapsed() >= Duration::from_millis(100));
    let start = tokio::time::Instant::now();
    let second = common::read(&mut p, "x://items/a").await;
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "no backend call, no waiting"
    );
    assert_eq!(first["result"], second["result"]);
    assert_eq!(backend.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn concurrent_reads_of_a_cold_uri_share_one_backend_call() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let start = tokio::time::Instant::now();
    let reads = (0..20).map(|_| {
        let srv = srv.clone();
        tokio::spawn(async move {
            let mut p = common::connect_as(&srv, ProtocolVersion::V2026_07_28).await;
            common::read(&mut p, "x://items/cold").await
        })
    });
    let results = futures_util::future::join_all(reads).await;
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    assert_eq!(backend.calls(), 1);
    for r in results {
        assert_eq!(r.unwrap()["result"]["contents"][0]["text"], "cold (call 1)");
    }
}

#[tokio::test(start_paused = true)]
async fn cached_results_carry_the_time_they_have_left_on_2026_results() {
    let backend = Arc::new(Backend::default());
    let srv = server(backend, Duration::from_secs(300));
    let mut p = common::connect_as(&srv, ProtocolVersion::V2026_07_28).await;
    let first = common::read(&mut p, "x://items/a").await;
    assert_eq!(first["result"]["ttlMs"], 300_000);
    assert_eq!(first["result"]["cacheScope"], "private");
    tokio::time::advance(Duration::from_secs(100)).await;
    let second = common::read(&mut p, "x://items/a").await;
    assert_eq!(second["result"]["ttlMs"], 200_000, "{second}");
}

#[tokio::test(start_paused = true)]
async fn a_read_once_the_ttl_has_run_out_goes_to_the_backend_again() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let mut p = common::connect_as(&srv, ProtocolVersion::V2026_07_28).await;
    let first = common::read(&mut p, "x://items/a").await;
    assert_eq!(first["result"]["contents"][0]["text"], "a (call 1)");
    tokio::time::advance(Duration::from_secs(299)).await;
    let cached = common::read(&mut p, "x://items/a").await;
    assert_eq!(cached["result"]["contents"][0]["text"], "a (call 1)");
    // Stored once the backend answered: its 300 s run from then.
    assert_eq!(cached["result"]["ttlMs"], 1_000, "{cached}");
    tokio::time::advance(Duration::from_secs(1)).await;
    let fresh = common::read(&mut p, "x://items/a").await;
    assert_eq!(fresh["result"]["contents"][0]["text"], "a (call 2)");
    assert_eq!(fresh["result"]["ttlMs"], 300_000, "{fresh}");
    assert_eq!(backend.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn an_update_published_for_a_uri_drops_its_entry() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    common::read(&mut p, "x://items/a").await;
    common::read(&mut p, "x://items/b").await;
    srv.changes().updated("x://items/a");
    let again = common::read(&mut p, "x://items/a").await;
    assert_eq!(again["result"]["contents"][0]["text"], "a (call 3)");
    common::read(&mut p, "x://items/b").await;
    assert_eq!(backend.calls(), 3, "b stayed cached");
}

#[tokio::test(start_paused = true)]
async fn a_read_in_flight_when_its_uri_changes_is_not_stored() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let reader = {
        let srv = srv.clone();
        tokio::spawn(async move {
            let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
            common::read(&mut p, "x://items/a").await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(backend.calls(), 1, "the read is in flight");
    srv.changes().updated("x://items/a");
    assert_eq!(
        reader.await.unwrap()["result"]["contents"][0]["text"],
        "a (call 1)"
    );
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let after = common::read(&mut p, "x://items/a").await;
    assert_eq!(after["result"]["contents"][0]["text"], "a (call 2)");
}

#[tokio::test(start_paused = true)]
async fn not_found_is_never_stored_and_names_the_uri() {
    let backend = Arc::new(Backend::default());
    let srv = server(Arc::clone(&backend), Duration::from_secs(300));
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    for _ in 0..2 {
        let r = common::read(&mut p, "x://items/missing").await;
        assert_eq!(r["error"]["code"], -32002);
        assert_eq!(r["error"]["data"]["uri"], "x://items/missing");
    }
    assert_eq!(backend.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_first_reader_hands_the_call_to_a_waiting_one() {
    let backend = Arc::new(Backend::default());
    let cache = ReadCache::default();
    let policy = rsrc::CachePolicy::new(Duration::from_secs(60));
    let load = |b: Arc<Backend>| async move {
        let text = b.fetch("a").await.ok_or(NotFound)?;
        Ok(vec![rsrc::protocol::ResourceContents::text(
            Resource::new("x://a", "a"),
            text,
        )]
        .into())
    };
    let first = {
        let (cache, b) = (cache.clone(), Arc::clone(&backend));
        tokio::spawn(async move { cache.read("x://a", policy, || load(b)).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = {
        let (cache, b) = (cache.clone(), Arc::clone(&backend));
        tokio::spawn(async move { cache.read("x://a", policy, || load(b)).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    first.abort();
    let out = second.await.unwrap().unwrap();
    assert_eq!(out.contents[0].body.as_text(), Some("a (call 2)"));
    assert_eq!(backend.calls(), 2);
    assert_eq!(cache.entry_count(), 1);
}

#[tokio::test]
async fn entries_stay_within_the_limits() {
    let cache = ReadCache::new(CacheLimits {
        max_entries: 10,
        max_bytes: 64 * 1024,
    });
    let policy = rsrc::CachePolicy::new(Duration::from_secs(60));
    for i in 0..100 {
        let uri = format!("x://{i}");
        let text = "x".repeat(100);
        cache
            .read(&uri, policy, || async {
                Ok(vec![rsrc::protocol::ResourceContents::text(
                    Resource::new(&uri, "x"),
                    text,
                )]
                .into())
            })
            .await
            .unwrap();
    }
    assert!(cache.entry_count() <= 10, "{}", cache.entry_count());
    // An entry larger than an eighth of the budget is served but not kept.
    let big = "y".repeat(16 * 1024);
    cache.invalidate_all();
    cache
        .read("x://big", policy, || async {
            Ok(vec![rsrc::protocol::ResourceContents::text(
                Resource::new("x://big", "big"),
                big,
            )]
            .into())
        })
        .await
        .unwrap();
    assert_eq!(cache.entry_count(), 0);
}

#[tokio::test]
async fn any_provider_can_be_wrapped_and_follows_its_changes() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let set = ResourceSet::new()
        .with_dynamic(Resource::new("y://now", "now"), move |_| {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Ok::<_, ResourceError>(vec![Representation::text(format!("call {n}"))]) }
        })
        .with_subscriptions();
    let srv = Server::builder("t", "0")
        .mount("y:", Cached::new(set, Duration::from_secs(60)))
        .build()
        .unwrap();
    let mut p = common::connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    assert_eq!(
        common::read(&mut p, "y://now").await["result"]["contents"][0]["text"],
        "call 1"
    );
    assert_eq!(
        common::read(&mut p, "y://now").await["result"]["contents"][0]["text"],
        "call 1"
    );
    // The subscription is forwarded to the wrapped provider, and the change both drops
    // the entry and reaches the subscriber.
    let sub = p
        .request("resources/subscribe", json!({"uri": "y://now"}))
        .await;
    assert!(sub["result"].is_object(), "{sub}");
    srv.changes().updated("y://now");
    let again = common::read(&mut p, "y://now").await;
    assert_eq!(again["result"]["contents"][0]["text"], "call 2");
    let notes = p.drain(Duration::from_millis(200)).await;
    assert!(
        notes
            .iter()
            .any(|n| n["method"] == "notifications/resources/updated"),
        "{notes:?}"
    );
}
