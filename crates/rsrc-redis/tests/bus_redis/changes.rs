//! Changes and signals between instances: a change seen by one instance reaches the
//! subscribers of the others once (and its own once, not again through Redis), a signal
//! runs the other instances' handlers only, and a burst of resyncs costs one resync.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::bus_keys;
use crate::support::{
    eventually, heard_until_probe, instance, publish_raw, subscribed, until_connected, updates,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_seen_by_one_instance_reaches_subscribers_of_the_other_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_a = subscribed(&a, "w:///a").await;
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    while !on_a.drain(Duration::from_millis(300)).await.is_empty() {}

    a.changes().updated("w:///a");
    assert_eq!(heard_until_probe(&a, &mut on_b).await, ["w:///a"]);
    assert_eq!(
        heard_until_probe(&a, &mut on_a).await,
        ["w:///a"],
        "its own change reaches an instance once, not again through Redis"
    );
    // Only subscribers hear of a URI; a local feed's changes stay on their instance.
    a.changes().updated("w:///b");
    a.changes().local().updated("w:///a");
    assert!(heard_until_probe(&a, &mut on_b).await.is_empty());
    assert_eq!(heard_until_probe(&a, &mut on_a).await, ["w:///a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_runs_the_handlers_of_the_other_instances_only() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    let (heard_a, heard_b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    for (server, heard) in [(&a, &heard_a), (&b, &heard_b)] {
        let heard = Arc::clone(heard);
        server.changes().on_signal("db://shop", move || {
            heard.fetch_add(1, Ordering::SeqCst);
        });
    }
    a.changes().signal("db://shop");
    a.changes().signal("db://other");
    // Signals travel the channel in order with the probe.
    heard_until_probe(&a, &mut on_b).await;
    assert_eq!(heard_b.load(Ordering::SeqCst), 1);
    assert_eq!(heard_a.load(Ordering::SeqCst), 0);
}

/// 200 resyncs from another instance cost this one one resync (or two, if the burst
/// straddles the rate limit), not 200: its listeners are told to look again, and its
/// observers (read caches) drop what they hold, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_resyncs_costs_one_resync() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let a = instance(&redis).await;
    let b = instance(&redis).await;
    let mut on_b = subscribed(&b, "w:///a").await;
    until_connected(&a, &mut on_b).await;
    let resyncs = Arc::new(AtomicUsize::new(0));
    b.changes().on_change({
        let resyncs = Arc::clone(&resyncs);
        move |e| {
            if matches!(e, rsrc::ChangeEvent::Resync(_)) {
                resyncs.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let burst: Vec<String> = (0..200)
        .map(|_| bus_keys::message("elsewhere", json!({"resync": ""})))
        .collect();
    publish_raw(&redis.url(), &burst);
    assert!(
        eventually(|| resyncs.load(Ordering::SeqCst) > 0).await,
        "the resync never came"
    );
    // Whatever else the burst causes comes within the rate limit's period (1 s) after
    // the first.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let done = resyncs.load(Ordering::SeqCst);
    assert!(
        (1..=2).contains(&done),
        "one resync per burst (two at most), not one per message: {done}"
    );
    let heard = updates(&mut on_b, Duration::from_millis(200)).await;
    assert!(heard.len() <= 2, "{heard:?}");
}
