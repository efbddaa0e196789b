//! One session, whichever instance gets each request: subscriptions and a log level set
//! on one instance hold on the others, DELETE and expiry end it everywhere (and a DELETE
//! the store cannot carry out ends nothing), its owner alone can use it, and what the
//! instances keep of it stays bounded.

use std::time::Duration;

use rsrc_http::HttpConfig;
use rsrc_testkit::HttpResponse;
use rsrc_testkit::redis::RedisServer;
use serde_json::{Value, json};

use crate::bus_keys::session_key as key;
use crate::support::{UPDATED, at, call, eventually, get_stream, instance, next_of, redis_cmd};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_a_session_may_land_on_another_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await; // initialize on A, notifications/initialized on A
    let sid = first.session().unwrap().to_owned();

    // B has never seen the session: it loads it, and subscribes on its behalf.
    let mut on_b = at(b.addr, &sid);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.status, 200);
    assert_eq!(sub.json()["result"], json!({}));
    let level = call(&mut on_b, "logging/setLevel", json!({"level": "error"})).await;
    assert_eq!(level.json()["result"], json!({}));

    // A holds the GET stream; the change is seen by B and crosses over.
    let on_a = at(a.addr, &sid);
    let mut stream = get_stream(&on_a, None).await;
    assert_eq!(stream.status, 200);
    let mut heard = None;
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            heard = next_of(&mut stream, UPDATED, Duration::from_millis(200)).await;
            heard.is_some()
        })
        .await,
        "A's GET stream hears a subscription made on B"
    );
    assert_eq!(heard.unwrap().1["params"]["uri"], "w:///a");

    // The log level set on B filters what A sends.
    let mut again = at(a.addr, &sid);
    let noisy = call(
        &mut again,
        "resources/read",
        json!({"uri": "sample:///noisy"}),
    )
    .await;
    let logs: Vec<&Value> = noisy
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{:?}", noisy.messages);
    assert_eq!(logs[0]["params"]["level"], "error");

    // Unsubscribed on B: A's stream no longer hears the resource. Each round changes
    // `a` then `b` (still subscribed): hearing `b` without `a` is the positive signal.
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///b"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let unsub = call(&mut on_b, "resources/unsubscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(unsub.json()["result"], json!({}));
    assert!(
        eventually(async || {
            sb.changes().updated("w:///a");
            sb.changes().updated("w:///b");
            let mut heard = Vec::new();
            while let Some((_, m)) = next_of(&mut stream, UPDATED, Duration::from_secs(2)).await {
                heard.push(m["params"]["uri"].as_str().unwrap().to_owned());
                if heard.last().is_some_and(|u| u == "w:///b") {
                    break;
                }
            }
            heard == ["w:///b"]
        })
        .await,
        "A's stream stops hearing a resource unsubscribed on B"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_one_instance_ends_the_session_on_every_instance() {
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

    let host = first.host();
    let deleted = first
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
    assert!(
        eventually(async || call(&mut on_b, "ping", json!({})).await.status == 404).await,
        "B's copy ends too"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_fails_with_503_when_the_store_cannot_delete() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    redis.kill();
    let host = first.host();
    let deleted = first
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
    assert_eq!(
        deleted.status, 503,
        "not ended: the other instances still serve it"
    );
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_idle_for_too_long_is_gone_from_every_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let config = HttpConfig {
        session_idle: Duration::from_secs(1),
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
    // Redis lets the record go once unused for the idle time and a quarter; every copy
    // has been unused for longer than the idle time by then.
    assert!(
        eventually(async || redis_cmd::<i64>(&redis, &["EXISTS", &key(&sid)]) == 0).await,
        "the record expires in Redis"
    );
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 404);
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 404);
}

/// The review's reproduction: `--max-sessions 3` with 12 sessions left 12 records in
/// Redis, and an evicted session came back from Redis and answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_session_ends_everywhere_and_redis_keeps_no_more_than_the_cap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let capped = HttpConfig {
        max_sessions: 3,
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, capped).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..12 {
        let mut p = a.peer();
        p.initialize().await;
        ids.push(p.session().unwrap().to_owned());
    }
    let records = || {
        let keys: Vec<String> = redis_cmd(&redis, &["KEYS", "rsrc:session:*"]);
        keys.iter().filter(|k| k.matches(':').count() == 2).count()
    };
    assert!(
        eventually(async || records() <= 3).await,
        "{} records for a cap of 3",
        records()
    );
    for sid in &ids[..9] {
        assert_eq!(
            call(&mut at(b.addr, sid), "ping", json!({})).await.status,
            404,
            "an evicted session answers nowhere"
        );
        assert_eq!(
            call(&mut at(a.addr, sid), "ping", json!({})).await.status,
            404
        );
    }
    for sid in &ids[9..] {
        assert_eq!(
            call(&mut at(b.addr, sid), "ping", json!({})).await.status,
            200
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_identity_cannot_use_a_shared_session_and_junk_ids_are_unknown() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let mut first = a.peer();
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    // Without authentication every client is the same identity; a made-up id is not
    // a session, on either instance, and never reaches Redis as a key.
    for junk in ["nope", "../../etc", &"A".repeat(32), &sid[..31]] {
        let mut p = at(b.addr, junk);
        assert_eq!(call(&mut p, "ping", json!({})).await.status, 404, "{junk}");
    }
    let mut on_b = at(b.addr, &sid);
    assert_eq!(call(&mut on_b, "ping", json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_identity_cannot_use_a_shared_session_on_any_instance() {
    use rsrc_http::{AuthConfig, JwtVerifier, TokenVerifier};
    let Some(redis) = RedisServer::start() else {
        return;
    };
    const RESOURCE: &str = "https://mcp.example.com/mcp";
    let config = HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Jwt(JwtVerifier::hmac(b"key-one")),
            RESOURCE,
        )),
        ..HttpConfig::default()
    };
    let (_sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let token = |sub: &str| {
        let jwt = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &json!({"aud": RESOURCE, "exp": exp, "sub": sub}),
            &jsonwebtoken::EncodingKey::from_secret(b"key-one"),
        )
        .unwrap();
        format!("Bearer {jwt}")
    };
    let (alice, mallory) = (token("alice"), token("mallory"));
    let mut first = a.peer();
    first.always("authorization", &alice);
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let as_who = |addr, auth: &str| {
        let mut p = at(addr, &sid);
        p.always("authorization", auth);
        p
    };
    let refused = |res: &HttpResponse| res.status == 404;
    // Mallory, on B (which loads it from the store) and on A (which has it): unknown.
    for addr in [b.addr, a.addr] {
        let mut m = as_who(addr, &mallory);
        assert!(refused(&call(&mut m, "ping", json!({})).await), "{addr}");
        let host = m.host();
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut h = vec![
                ("host", host.clone()),
                ("mcp-session-id", sid.clone()),
                ("mcp-protocol-version", "2025-11-25".to_owned()),
                ("authorization", mallory.clone()),
            ];
            h.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
            h
        };
        let get = with(&[("accept", "text/event-stream"), ("last-event-id", "0-1")]);
        let get: Vec<(&str, &str)> = get.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(m.send("GET", &get, b"").await.status, 404);
        let del = with(&[]);
        let del: Vec<(&str, &str)> = del.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(m.send("DELETE", &del, b"").await.status, 404);
    }
    // Alice uses it on B, which now has a copy: still Alice's alone.
    assert_eq!(
        call(&mut as_who(b.addr, &alice), "ping", json!({}))
            .await
            .status,
        200
    );
    assert!(refused(
        &call(&mut as_who(b.addr, &mallory), "ping", json!({})).await
    ));
    assert_eq!(call(&mut first, "ping", json!({})).await.status, 200);
}

/// What a session stores of its client is bounded: a client describing itself at great
/// length is shared by its name and version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_information_is_stored_within_a_few_kib() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b) = instance(&redis, HttpConfig::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
            "capabilities": {"experimental": {"x": "y".repeat(100_000)}},
            "clientInfo": {"name": "verbose", "version": "1", "title": "t".repeat(50_000)}}});
    let res = a.peer().post(&init).await;
    assert_eq!(res.status, 200);
    let sid = res.header("mcp-session-id").unwrap().to_owned();
    let client: String = redis_cmd(&redis, &["HGET", &key(&sid), "client"]);
    assert!(client.len() <= 4 * 1024 + 64, "{} bytes", client.len());
    assert!(client.contains("verbose"), "{client}");
    assert_eq!(
        call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
        200,
        "the session is served elsewhere"
    );
}
