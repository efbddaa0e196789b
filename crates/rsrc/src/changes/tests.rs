//! The hub's rules, each checked through listeners and notifiers in memory.

use super::*;
use std::time::Duration;
use tokio::sync::mpsc::Receiver;

fn listener(hub: &Arc<Hub>, sub: Option<i64>, queue: usize) -> (Arc<Listener>, Receiver<Vec<u8>>) {
    let (n, rx) = Notifier::channel(queue);
    (hub.listener(n, sub.map(RequestId::Number), 2), rx)
}

async fn next(rx: &mut Receiver<Vec<u8>>) -> Option<serde_json::Value> {
    tokio::time::timeout(Duration::from_millis(200), rx.recv())
        .await
        .ok()
        .flatten()
        .map(|b| serde_json::from_slice(&b).unwrap())
}

#[tokio::test]
async fn only_subscribers_of_a_uri_hear_of_it() {
    let hub = Arc::new(Hub::default());
    let feed = hub.feed();
    let (a, mut ra) = listener(&hub, None, 16);
    let (b, mut rb) = listener(&hub, Some(7), 16);
    a.subscribe("x:///1").unwrap();
    b.subscribe("x:///1").unwrap();
    b.subscribe("x:///2").unwrap();
    feed.updated("x:///2");
    let m = next(&mut rb).await.unwrap();
    assert_eq!(m["params"]["uri"], "x:///2");
    assert_eq!(
        m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert!(next(&mut ra).await.is_none());
    feed.updated("x:///1");
    assert!(
        next(&mut ra).await.unwrap()["params"]
            .get("_meta")
            .is_none()
    );
    assert!(next(&mut rb).await.is_some());
    assert!(a.unsubscribe("x:///1"));
    assert!(!a.unsubscribe("x:///1"));
    feed.updated("x:///1");
    assert!(next(&mut ra).await.is_none());
}

#[tokio::test]
async fn subscriptions_are_bounded_and_released_on_drop() {
    let hub = Arc::new(Hub::default());
    let feed = hub.feed();
    let (a, _ra) = listener(&hub, None, 16);
    a.subscribe("x:///1").unwrap();
    a.subscribe("x:///1").unwrap();
    a.subscribe("x:///2").unwrap();
    assert_eq!(a.subscribe("x:///3"), Err(TooMany(2)));
    assert_eq!(feed.subscribers("x:///1"), 1);
    let mut subscribed = feed.subscribed("x:///");
    subscribed.sort();
    assert_eq!(subscribed, ["x:///1", "x:///2"]);
    assert!(feed.subscribed("y:///").is_empty());
    drop(a);
    assert_eq!(feed.subscribers("x:///1"), 0);
    assert!(lock(&hub.state).by_uri.is_empty());
}

#[tokio::test]
async fn list_changes_go_to_those_who_asked() {
    let hub = Arc::new(Hub::default());
    let (a, mut ra) = listener(&hub, None, 16);
    let (_b, mut rb) = listener(&hub, None, 16);
    a.listen_to_lists();
    hub.feed().list_changed();
    assert_eq!(
        next(&mut ra).await.unwrap()["method"],
        "notifications/resources/list_changed"
    );
    assert!(next(&mut rb).await.is_none());
}

#[tokio::test]
async fn a_slow_consumer_gets_the_latest_state_not_a_backlog() {
    let hub = Arc::new(Hub::default());
    let feed = hub.feed();
    // Room for one message: the consumer does not read while changes pour in.
    let (a, mut ra) = listener(&hub, None, 1);
    a.subscribe("x:///1").unwrap();
    a.subscribe("x:///2").unwrap();
    a.listen_to_lists();
    for _ in 0..1000 {
        feed.updated("x:///1");
        feed.updated("x:///2");
        feed.list_changed();
    }
    // The delivery task runs until the one slot is full (one thread: yielding lets it).
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
    let mut got = Vec::new();
    while let Some(m) = next(&mut ra).await {
        got.push(m["params"]["uri"].as_str().unwrap_or("list").to_owned());
    }
    // One in the queue, one waiting for room, the rest coalesced: at most one of each
    // change after the first.
    assert!(got.len() <= 4, "{got:?}");
    for what in ["x:///1", "x:///2", "list"] {
        assert!(got.iter().any(|g| g == what), "{what} missing from {got:?}");
    }
}
