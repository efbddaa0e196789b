//! Instances changing one session at once: a save writes only what its request changed,
//! concurrent changes all stay, a reload racing a save keeps the change being saved, a
//! lost announcement reaches the copies with the next resync (and a burst of resyncs
//! costs each copy about one reload), and a session deleted elsewhere is never brought
//! back by a save.

use std::time::Duration;

use rsrc_http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::bus_keys::{self, message, session_key as key, tagged};
use crate::redis_proxy::RedisProxy;
use crate::support::{
    UPDATED, at, call, ends_within, eventually, get_stream, instance, instance_at, next_of,
    noisy_levels, redis_cmd,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_whose_announcement_was_lost_reaches_the_copies_with_the_resync() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    let level = call(&mut on_b, "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(level.json()["result"], json!({}));
    assert_eq!(noisy_levels(&mut on_b).await, ["info", "error"]);
    // Another instance changed the level; its announcement overflowed its queue, so it
    // told every instance to resync instead.
    let level = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &level]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    assert!(
        eventually(async || {
            let _: i64 = redis_cmd(
                &redis,
                &[
                    "PUBLISH",
                    "rsrc:changes",
                    &message("elsewhere", json!({"resync": ""})),
                ],
            );
            noisy_levels(&mut on_b).await == ["error"]
        })
        .await,
        "B reloads its copy on a resync from another instance"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_writes_only_what_its_request_changed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    // B set the level, and A's copy has not heard yet (the announcement is on its way).
    let error = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &error]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    let level: String = redis_cmd(&redis, &["HGET", &key(&sid), "level"]);
    assert_eq!(level, error, "A's save kept B's level");
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(members, [tagged(&sid, "sub", "w:///a")]);
    // And A's copy took the merged state: its level is B's.
    assert_eq!(noisy_levels(&mut at(a.addr, &sid)).await, ["error"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_changes_on_two_instances_all_stay() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    // A subscribes while B changes the level again and again: every change reloads A's
    // copy, racing A's own saves.
    let levels = tokio::spawn({
        let addr = b.addr;
        let sid = sid.clone();
        async move {
            let mut on_b = at(addr, &sid);
            for i in 0..40 {
                let level = if i % 2 == 0 { "info" } else { "warning" };
                call(&mut on_b, "logging/setLevel", json!({"level": level})).await;
            }
        }
    });
    let mut on_a = at(a.addr, &sid);
    for uri in ["w:///a", "w:///b"] {
        let sub = call(&mut on_a, "resources/subscribe", json!({"uri": uri})).await;
        assert_eq!(sub.json()["result"], json!({}));
    }
    levels.await.unwrap();
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(members.len(), 2, "{members:?}");
    // A's own copy still has both: its stream hears each.
    for uri in ["w:///a", "w:///b"] {
        sa.changes().updated(uri);
        let (_, m) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("A's stream hears {uri}"));
        assert_eq!(m["params"]["uri"], uri);
    }
    // The last level B set is A's too.
    assert!(eventually(async || noisy_levels(&mut on_a).await == ["error"]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_racing_a_save_keeps_the_change_being_saved() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A speaks to Redis through a proxy that can slow Redis's answers down.
    let proxy = RedisProxy::start(redis.port()).await;
    let (sa, a) = instance_at(&proxy.url, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    assert_eq!(stream.status, 200);
    // Every answer now takes 300 ms. Another instance announces a change of the session:
    // A hears it 300 ms later and reloads, and the record it reads (without the
    // subscription below) comes back 300 ms after that...
    // (A record's load names its subscriptions' key; the stream's log writes do not.)
    proxy.watch(format!("{}:subs", key(&sid)).as_bytes());
    proxy.delay(Duration::from_millis(300));
    let _: i64 = redis_cmd(
        &redis,
        &[
            "PUBLISH",
            "rsrc:changes",
            &message(
                "elsewhere",
                json!({"session": bus_keys::session_name(&sid)}),
            ),
        ],
    );
    // ...while A subscribes in between, once its reload's read is on its way to Redis:
    // its save is read after the reload's read.
    assert!(
        eventually(async || proxy.watched() > 0).await,
        "A reloads the session it heard of"
    );
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.json()["result"], json!({}));
    // Every answer Redis gave, the stale record included, has reached A.
    proxy.delay(Duration::ZERO);
    proxy.drained().await;
    // The stale record did not take the subscription away from A's copy.
    sa.changes().updated("w:///a");
    assert!(
        next_of(&mut stream, UPDATED, Duration::from_secs(5))
            .await
            .is_some(),
        "A's stream hears the resource it subscribed to"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_elsewhere_is_not_recreated_by_a_save_and_its_busy_copies_end() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A checks the store only every few minutes (its saves are what is tested); B looks
    // at its sessions every second.
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let quick = HttpConfig {
        session_idle: Duration::from_secs(4),
        ..HttpConfig::default()
    };
    let (_sb, b) = instance(&redis, quick).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // B's copy is busy: it serves the GET stream.
    let mut stream = get_stream(&at(b.addr, &sid), None).await;
    assert_eq!(stream.status, 200);
    // B's claim of the stream is announced, and A reloads its copy when it hears it: a
    // reload after the deletion below would end A's copy before its save is tried. A
    // change made on B after the claim is the signal: A's copy shows it only once A has
    // reloaded for everything B announced before it (one channel, reloads in order), and
    // for its own subscription coming up.
    let level = call(
        &mut at(b.addr, &sid),
        "logging/setLevel",
        json!({"level": "error"}),
    )
    .await;
    assert_eq!(level.json()["result"], json!({}));
    assert!(
        eventually(async || noisy_levels(&mut at(a.addr, &sid)).await == ["error"]).await,
        "A hears B's changes"
    );
    // Deleted on some instance; the announcement reaches neither A nor B.
    let k = key(&sid);
    let _: i64 = redis_cmd(
        &redis,
        &["DEL", &k, &format!("{k}:subs"), &format!("{k}:s0")],
    );
    let _: () = redis_cmd(&redis, &["SET", &format!("{k}:gone"), "1", "PX", "60000"]);
    // A's next change finds it gone, and does not bring it back.
    let sub = call(
        &mut at(a.addr, &sid),
        "resources/subscribe",
        json!({"uri": "w:///a"}),
    )
    .await;
    assert_eq!(sub.status, 200);
    assert!(
        !redis_cmd::<bool>(&redis, &["EXISTS", &k]),
        "no record without its owner"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
    // B's busy copy ends at its next check, with its stream.
    assert!(
        ends_within(&mut stream, Duration::from_secs(10)).await,
        "B's copy ends"
    );
}

/// The review's reproduction: 200 resyncs made ~10,000 session reloads for 40 sessions.
/// Coalesced, a burst costs each copy one reload (two if it straddles the rate limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_resyncs_reloads_each_session_about_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..40 {
        let mut p = a.peer();
        p.initialize().await;
        let sid = p.session().unwrap().to_owned();
        // B has a copy of each.
        assert_eq!(
            call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
            200
        );
        ids.push(sid);
    }
    // Every record changes behind B's back (its announcement lost), so that B's reloads
    // show; then 200 resyncs arrive at once.
    for sid in &ids {
        let _: () = redis_cmd(
            &redis,
            &["HSET", &key(sid), "level", &tagged(sid, "level", "error")],
        );
        let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(sid), "rev", "1"]);
    }
    let _: () = redis_cmd(&redis, &["CONFIG", "RESETSTAT"]);
    let mut c = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut p = redis::pipe();
    for _ in 0..200 {
        p.cmd("PUBLISH")
            .arg("rsrc:changes")
            .arg(message("elsewhere", json!({"resync": ""})))
            .ignore();
    }
    p.query::<()>(&mut c).unwrap();
    // B reloads its copies: one has the new level (a read costs a few scripts too, so
    // only one is read).
    assert!(
        eventually(async || noisy_levels(&mut at(b.addr, &ids[0])).await == ["error"]).await,
        "B reloaded its copies"
    );
    // Whatever else the burst causes comes within the rate limit's period (1 s).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stats: String = redis_cmd(&redis, &["INFO", "commandstats"]);
    let calls = |cmd: &str| {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{cmd}:calls=")))
            .and_then(|rest| rest.split(',').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Each reload is one script; the leases and the read add a few dozen.
    let scripts = calls("evalsha") + calls("eval");
    eprintln!("{scripts} scripts ran for 40 sessions and 200 resyncs");
    assert!(
        scripts < 200,
        "{scripts} scripts for 40 sessions and 200 resyncs (one reload each is 40)"
    );
}
