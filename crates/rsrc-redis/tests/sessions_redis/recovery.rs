//! Redis losing everything: after a restart without persistence, the instances holding a
//! copy of a session serve it on and put it back, even a copy no request touches.

use std::time::Duration;

use rsrc_http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::bus_keys::{self, message, session_key as key, tagged};
use crate::support::{
    UPDATED, at, call, eventually, get_stream, instance, instance_with_options, next_of,
    noisy_levels, redis_cmd,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_go_on_when_redis_restarts_empty_and_are_put_back_from_their_copies() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let mut stream = get_stream(&at(a.addr, &sid), None).await;
    assert!(
        eventually(async || {
            sa.changes().updated("w:///a");
            next_of(&mut stream, UPDATED, Duration::from_millis(200))
                .await
                .is_some()
        })
        .await
    );

    // An instance that has never seen the session.
    let (_sc, c) = instance(&redis, HttpConfig::default()).await;
    // Redis restarts without persistence: every key is gone.
    redis.restart();
    let exists = |k: &str| redis_cmd::<bool>(&redis, &["EXISTS", k]);
    assert!(!exists(&key(&sid)));
    let pubsub = || {
        let list: String = redis_cmd(&redis, &["CLIENT", "LIST", "TYPE", "pubsub"]);
        list.lines().count()
    };
    assert!(
        eventually(async || pubsub() == 3).await,
        "every instance subscribed again"
    );
    let status = call(&mut at(c.addr, &sid), "ping", json!({})).await.status;
    assert!(status == 503 || status == 200, "{status}");
    // The instances that know the session serve it on, and put it back.
    assert_eq!(
        call(&mut at(a.addr, &sid), "ping", json!({})).await.status,
        200
    );
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    assert!(
        eventually(async || exists(&key(&sid))).await,
        "the session is re-created from a copy"
    );
    let members: Vec<String> = redis_cmd(&redis, &["SMEMBERS", &format!("{}:subs", key(&sid))]);
    assert_eq!(
        members,
        [tagged(&sid, "sub", "w:///a")],
        "with its subscription"
    );
    // The instance that never saw it loads it from there; until it is back, that
    // instance asks the client to retry rather than telling it the session is gone.
    let mut on_c = at(c.addr, &sid);
    assert_eq!(call(&mut on_c, "ping", json!({})).await.status, 200);
    // A's GET stream goes on, hearing changes seen elsewhere once the bus is back.
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            next_of(&mut stream, UPDATED, Duration::from_millis(300))
                .await
                .is_some()
        })
        .await,
        "the GET stream goes on after the restart"
    );
    // DELETE still ends it everywhere, for good.
    let host = on_c.host();
    let deleted = on_c
        .send(
            "DELETE",
            &[
                ("host", &host),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            b"",
        )
        .await;
    assert_eq!(deleted.status, 204);
    for addr in [a.addr, b.addr] {
        assert!(
            eventually(async || call(&mut at(addr, &sid), "ping", json!({})).await.status == 404)
                .await
        );
    }
    assert!(!exists(&key(&sid)), "a deleted session is not put back");
}

/// The cluster flake of issue 29: after Redis restarted empty, an idle session (no
/// stream, no request) was put back only if its instances happened to reload their
/// copies twice. The reload when the subscription comes back is the only path for an
/// idle copy, and its first round trip meets a connection that died with Redis: a
/// reload the store cannot answer is now tried again instead of dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_put_back_after_redis_restarts_empty_without_any_request() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    // Leases renewed only every 40 s: nothing but the reload when the subscription
    // comes back (no failed lease renewal restarting the subscription a second time)
    // can put the session back within the test's 10 s.
    let mut options = bus_keys::options();
    options.lease_ttl = Duration::from_secs(120);
    let (_sa, a, _) = instance_with_options(&redis.url(), HttpConfig::default(), options).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // A resync round has run, and its reload used the store's connection (which dies
    // with Redis): its level, changed behind its back, shows. The next round comes a
    // rate-limit period later at the earliest.
    let error = tagged(&sid, "level", "error");
    let _: () = redis_cmd(&redis, &["HSET", &key(&sid), "level", &error]);
    let _: i64 = redis_cmd(&redis, &["HINCRBY", &key(&sid), "rev", "1"]);
    let _: i64 = redis_cmd(
        &redis,
        &[
            "PUBLISH",
            "rsrc:changes",
            &message("elsewhere", json!({"resync": ""})),
        ],
    );
    assert!(eventually(async || noisy_levels(&mut first).await == ["error"]).await);
    let exists = |redis: &RedisServer| redis_cmd::<bool>(redis, &["EXISTS", &key(&sid)]);
    assert!(exists(&redis));
    redis.restart();
    assert!(!exists(&redis));
    assert!(
        eventually(async || exists(&redis)).await,
        "the idle session is put back from A's copy, with no request to A"
    );
}
