//! A session's SSE streams across instances: a GET or POST stream resumes on another
//! instance from the shared replay log, in order and with nothing skipped; only the
//! holder of the GET stream writes it; a stored stream with a hole, or an event id at the
//! top of the range, is refused rather than replayed wrong.

use std::time::Duration;

use rsrc_http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use serde_json::{Value, json};

use crate::bus_keys::session_key as key;
use crate::harness::standard;
use crate::support::{
    UPDATED, at, call, ends_within, eventually, get_stream, instance, next_of, redis_cmd, top_entry,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_resumes_on_another_instance_when_its_holder_is_gone() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = b.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;

    let on_a = at(a.addr, &sid);
    let mut stream = get_stream(&on_a, None).await;
    let mut first_id = None;
    assert!(
        eventually(async || {
            sa.changes().updated("w:///a");
            first_id = next_of(&mut stream, UPDATED, Duration::from_millis(200)).await;
            first_id.is_some()
        })
        .await
    );
    let (first_id, _) = first_id.unwrap();
    // A second notification the client never reads: its connection breaks first. A
    // stops once the event is in the shared log.
    drop(stream);
    sa.changes().updated("w:///a");
    let seq = |id: &str| id.split_once('-').unwrap().1.parse::<u64>().unwrap();
    let log = format!("{}:s0", key(&sid));
    let next = format!("{}-0", seq(&first_id) + 1);
    assert!(
        eventually(async || top_entry(&redis, &log).as_deref() == Some(next.as_str())).await,
        "the missed event is stored"
    );
    a.shut_down().await;
    drop(sa);

    // Resumed on B: the missed event from the shared log, then every subscription again.
    let mut resumed = get_stream(&at(b.addr, &sid), Some(&first_id)).await;
    assert_eq!(resumed.status, 200);
    let (replayed, msg) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("the event written by A is replayed");
    assert_eq!(msg["params"]["uri"], "w:///a");
    assert!(replayed.starts_with("0-"));
    assert_eq!(seq(&replayed), seq(&first_id) + 1, "nothing skipped");
    let (resync, _) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("subscriptions are announced again after the take-over");
    assert!(seq(&resync) > seq(&replayed), "ids go on after the replay");
    // And B now delivers new changes itself.
    sb.changes().updated("w:///a");
    let (later, _) = next_of(&mut resumed, UPDATED, Duration::from_secs(5))
        .await
        .expect("B delivers");
    assert!(seq(&later) > seq(&resync));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_stream_resumes_on_another_instance_and_ends_with_its_response() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let slow = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///slow", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&slow).unwrap())
        .await;
    let mut last = None;
    for _ in 0..3 {
        last = stream.next_event(Duration::from_secs(5)).await.unwrap().id;
    }
    drop(stream);
    let last = last.unwrap();
    let (stream_no, seq) = last.split_once('-').unwrap();
    let mut expected: u64 = seq.parse::<u64>().unwrap() + 1;

    let mut resumed = get_stream(&at(b.addr, &sid), Some(&last)).await;
    assert_eq!(resumed.status, 200);
    resumed.answering("resources/read");
    let mut response = None;
    while let Some(e) = resumed.next_event(Duration::from_secs(10)).await {
        assert_eq!(
            e.id.unwrap(),
            format!("{stream_no}-{expected}"),
            "in order, nothing skipped"
        );
        expected += 1;
        let msg: Value = serde_json::from_str(&e.data).unwrap();
        if msg.get("id").is_some() {
            response = Some(msg);
        }
    }
    let response = response.expect("the response written by A arrives through B");
    assert_eq!(response["id"], 8);
    assert_eq!(response["result"]["contents"][0]["text"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_no_longer_holds_the_get_stream_cannot_write_it() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, _b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("A holds the stream");
    let stored = |redis: &RedisServer| top_entry(redis, &format!("{}:s0", key(&sid)));
    assert!(eventually(async || stored(&redis) == Some(format!("{}-0", &id[2..]))).await);
    // Another instance claims the stream; its announcement has not reached A.
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "holder", "elsewhere"]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "claims", "1"]);
    sa.changes().updated("w:///a");
    // A's next event is refused by Redis, and A lets go of the stream.
    assert!(
        ends_within(&mut stream, Duration::from_secs(10)).await,
        "A's stream ends: the client is to resume where the stream is held"
    );
    assert_eq!(
        stored(&redis),
        Some(format!("{}-0", &id[2..])),
        "nothing after the claim came from A"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_ids_at_the_top_of_the_range_are_refused_or_numbered_past_without_overflow() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let peer = at(a.addr, &sid);
    for id in [
        "0-18446744073709551615",
        "3-18446744073709551615",
        "0-9007199254740993",
    ] {
        assert_eq!(get_stream(&peer, Some(id)).await.status, 400, "{id}");
    }
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&peer, Some("0-9007199254740992")).await;
    assert_eq!(stream.status, 200);
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("numbered after the client's id");
    assert_eq!(id, "0-9007199254740993");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumption_past_the_end_of_a_finished_stream_ends() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let quick = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///progress", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&quick).unwrap())
        .await;
    let mut last = None;
    while let Some(e) = stream.next_event(Duration::from_secs(5)).await {
        last = e.id.or(last);
    }
    let last = last.expect("a streamed answer");
    let (n, seq) = last.split_once('-').unwrap();
    let beyond = format!("{n}-{}", seq.parse::<u64>().unwrap() + 5);
    // Written to Redis by A's log task: once it is there, B resumes from it.
    let stored = async || {
        top_entry(&redis, &format!("{}:s{n}", key(&sid))).is_some_and(|id| id.ends_with("-1"))
    };
    assert!(eventually(stored).await, "the end is stored");
    // Past the end first: B has no copy of the stream yet, it reads the store.
    for id in [beyond.as_str(), last.as_str()] {
        let mut resumed = get_stream(&at(b.addr, &sid), Some(id)).await;
        assert_eq!(resumed.status, 200);
        assert!(
            ends_within(&mut resumed, Duration::from_secs(5)).await,
            "resumed from {id}: the stream ended, nothing to replay"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_stream_with_a_hole_is_not_resumed_elsewhere() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut peer = a.peer();
    peer.initialize().await;
    let sid = peer.session().unwrap().to_owned();
    let host = peer.host();
    let quick = json!({"jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "sample:///progress", "_meta": {"progressToken": "mine"}}});
    let mut h = standard(&host);
    h.push(("mcp-session-id", &sid));
    h.push(("mcp-protocol-version", "2025-11-25"));
    let mut stream = peer
        .open("POST", &h, &serde_json::to_vec(&quick).unwrap())
        .await;
    let mut ids = Vec::new();
    while let Some(e) = stream.next_event(Duration::from_secs(5)).await {
        ids.extend(e.id);
    }
    let n = ids[0].split_once('-').unwrap().0.to_owned();
    let log = format!("{}:s{n}", key(&sid));
    assert!(
        eventually(async || top_entry(&redis, &log).is_some_and(|id| id.ends_with("-1"))).await,
        "the stream and its end are stored"
    );
    let ttl: i64 = redis_cmd(&redis, &["PTTL", &log]);
    assert!(ttl > 0, "a stored stream always expires");
    // The event in the middle never reached Redis (Redis was away, the queue was full).
    let middle = format!("{}-0", ids[ids.len() - 2].split_once('-').unwrap().1);
    let _: i64 = redis_cmd(&redis, &["XDEL", &log, &middle]);
    let resumed = get_stream(&at(b.addr, &sid), Some(&ids[0])).await;
    assert_eq!(
        resumed.status, 400,
        "not replayed as if nothing were missing"
    );
}
