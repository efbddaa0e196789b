//! Redis is outside the trust boundary: it never holds a session's id nor a plain digest
//! of its owner, and an entry or record written there without the bus keys, or over its
//! bounds, is never believed.

use std::time::{Duration, Instant};

use rsrc_http::HttpConfig;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::bus_keys::{session_key as key, tagged};
use crate::support::{
    StreamEntries, UPDATED, at, call, eventually, get_stream, instance, instance_with_bus, next_of,
    redis_cmd, top_entry,
};

/// Every key of Redis with what it holds, as text (hashes, sets, streams, strings).
fn everything_in(redis: &RedisServer) -> Vec<(String, String)> {
    let keys: Vec<String> = redis_cmd(redis, &["KEYS", "*"]);
    keys.into_iter()
        .map(|k| {
            let kind: String = redis_cmd(redis, &["TYPE", &k]);
            let value = match kind.as_str() {
                "hash" => format!("{:?}", redis_cmd::<Vec<Vec<u8>>>(redis, &["HGETALL", &k])),
                "set" => format!("{:?}", redis_cmd::<Vec<Vec<u8>>>(redis, &["SMEMBERS", &k])),
                "string" => format!("{:?}", redis_cmd::<Vec<u8>>(redis, &["GET", &k])),
                "stream" => format!(
                    "{:?}",
                    redis_cmd::<StreamEntries>(redis, &["XRANGE", &k, "-", "+"])
                ),
                other => other.to_owned(),
            };
            (k, value)
        })
        .collect()
}

/// What a reader of Redis sees of a session whose client authenticates with a static
/// token: neither the session's id (a bearer credential in the 2025 revisions) nor the
/// token's digest, in any key, any value or any message on the channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_never_holds_a_session_id_nor_a_plain_owner_digest() {
    use rsrc_http::{AuthConfig, TokenVerifier};
    use sha2::Digest as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    const TOKEN: &str = "a-static-token-for-every-client-0123456789";
    let config = HttpConfig {
        auth: Some(AuthConfig::new(
            TokenVerifier::Static(TOKEN.into()),
            "http://localhost/mcp",
        )),
        ..HttpConfig::default()
    };
    // Someone listening on every channel of the namespace.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut spy = client.get_connection().unwrap();
    let mut spy = spy.as_pubsub();
    spy.psubscribe("*").unwrap();
    spy.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let (sa, a) = instance(&redis, config.clone()).await;
    let (_sb, b) = instance(&redis, config).await;
    let auth = format!("Bearer {TOKEN}");
    let mut first = a.peer();
    first.always("authorization", &auth);
    first.initialize().await;
    let sid = first.session().unwrap().to_owned();
    let mut on_b = at(b.addr, &sid);
    on_b.always("authorization", &auth);
    let sub = call(&mut on_b, "resources/subscribe", json!({"uri": "w:///a"})).await;
    assert_eq!(sub.json()["result"], json!({}));
    let host = first.host();
    let mut stream = first
        .open(
            "GET",
            &[
                ("host", host.as_str()),
                ("accept", "text/event-stream"),
                ("mcp-session-id", sid.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
                ("authorization", auth.as_str()),
            ],
            b"",
        )
        .await;
    assert_eq!(stream.status, 200);
    sa.changes().updated("w:///a");
    let (id, _) = next_of(&mut stream, UPDATED, Duration::from_secs(5))
        .await
        .expect("A holds the stream");
    // The session's name (a digest of its id and its owner) is unknown here: its
    // stream 0 is the one stream of the namespace.
    assert!(
        eventually(async || {
            let logs: Vec<String> = redis_cmd(&redis, &["KEYS", "rsrc:session:*:s0"]);
            logs.len() == 1 && top_entry(&redis, &logs[0]) == Some(format!("{}-0", &id[2..]))
        })
        .await,
        "the event is stored"
    );
    let digest: String = sha2::Sha256::digest(TOKEN.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let stored = everything_in(&redis);
    assert!(
        stored.iter().any(|(k, _)| k.starts_with("rsrc:session:")),
        "{stored:?}"
    );
    for (k, v) in &stored {
        for secret in [sid.as_str(), &digest, TOKEN] {
            assert!(!k.contains(secret) && !v.contains(secret), "{k}: {v}");
        }
    }
    let mut heard = 0;
    while let Ok(m) = spy.get_message() {
        let payload: String = m.get_payload().unwrap();
        assert!(!payload.contains(&sid), "{payload}");
        heard += 1;
    }
    assert!(heard > 0, "the spy heard the instances");
}

/// The review's reproduction: an `XADD` into a session's stream reached the client, on
/// resumption, as a request rsrc never sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_written_into_a_replay_log_by_someone_else_is_never_replayed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b, bus_b) = instance_with_bus(&redis.url(), HttpConfig::default()).await;
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
    let log = format!("{}:s0", key(&sid));
    let seq: u64 = id[2..].parse().unwrap();
    assert!(
        eventually(async || top_entry(&redis, &log) == Some(format!("{seq}-0"))).await,
        "the event is stored"
    );
    drop(stream);
    // The next event, as someone with write access to Redis but no key puts it there,
    // with a tag copied from the genuine entry.
    let genuine: StreamEntries = redis_cmd(&redis, &["XRANGE", &log, "-", "+"]);
    let tag = genuine[0]
        .1
        .iter()
        .find(|(f, _)| f == "t")
        .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        .unwrap();
    let next = seq + 1;
    let forged = format!(
        "id: 0-{next}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"sampling/createMessage\",\"params\":{{\"messages\":[],\"maxTokens\":1}}}}\n\n"
    );
    let _: String = redis_cmd(
        &redis,
        &[
            "XADD",
            &log,
            &format!("{next}-0"),
            "f",
            &forged,
            "o",
            "1",
            "t",
            &tag,
        ],
    );
    let before = bus_b.rejected().stored;
    // Resumed on B: whatever it replays, then every subscription announced again.
    let mut resumed = get_stream(&at(b.addr, &sid), Some(&id)).await;
    assert_eq!(resumed.status, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let event = resumed
            .next_event(deadline.saturating_duration_since(Instant::now()))
            .await
            .expect("the subscriptions are announced again");
        assert!(
            !event.data.contains("sampling/createMessage"),
            "a forged entry reached the client: {event:?}"
        );
        if event.data.contains(UPDATED) {
            break;
        }
    }
    assert!(
        bus_b.rejected().stored > before,
        "the forged entry is counted"
    );
}

/// A record changed by someone without the keys is not believed; one over its bounds is
/// not even read whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_record_that_does_not_verify_or_is_too_large_is_not_believed() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (_sa, a) = instance(&redis, HttpConfig::default()).await;
    let (_sb, b, bus_b) = instance_with_bus(&redis.url(), HttpConfig::default()).await;
    // Not tagged with the bus keys; tagged, but over the bound of what is read back.
    for field in ["version", "client"] {
        let mut first = a.peer();
        first.initialize().await;
        let sid = first.session().unwrap().to_owned();
        let value = match field {
            "version" => "2025-06-18".to_owned(),
            _ => tagged(
                &sid,
                "client",
                &format!("{{\"x\":\"{}\"}}", "x".repeat(1 << 20)),
            ),
        };
        let _: () = redis_cmd(&redis, &["HSET", &key(&sid), field, &value]);
        let before = bus_b.rejected().stored;
        assert_eq!(
            call(&mut at(b.addr, &sid), "ping", json!({})).await.status,
            404,
            "{field}"
        );
        assert!(bus_b.rejected().stored > before, "{field}");
    }
}
