//! What every bus test uses: servers on one Redis with subscribable resources, peers
//! subscribed to them, and waiting for the bus to carry a probe change rather than for
//! time. Invariant: what a test counts never includes the probe ([`PROBE`]), and a wait
//! for the probe is a wait for everything sent before it (the channel keeps order).

use std::time::{Duration, Instant};

use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server};
use rsrc_redis::{RedisBus, RedisBusOptions};
use rsrc_testkit::Peer;
use rsrc_testkit::redis::RedisServer;
use serde_json::json;

use crate::{bus_keys, common};

/// Leases of the default 3 s: a holder keeps its lease through a stall of over a second
/// (the tests run on loaded machines).
pub(crate) fn options() -> RedisBusOptions {
    bus_keys::options()
}

/// The resource that [`until_connected`] changes to see the bus work: left out of what
/// the tests count.
pub(crate) const PROBE: &str = "w:///probe";

pub(crate) async fn instance(redis: &RedisServer) -> Server {
    instance_at(&redis.url()).await
}

pub(crate) async fn instance_at(url: &str) -> Server {
    server_on(RedisBus::connect(url, options()).await.unwrap())
}

pub(crate) fn server_on(bus: RedisBus) -> Server {
    Server::builder("rsrc-bus", "0")
        .mount(
            "w:",
            ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_text(Resource::new("w:///b", "b"), "B")
                .with_text(Resource::new(PROBE, "probe"), "P")
                .with_subscriptions(),
        )
        .bus(bus)
        .build()
        .unwrap()
}

pub(crate) async fn subscribed(server: &Server, uri: &str) -> Peer {
    let mut peer = common::connect(server);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    for uri in [uri, PROBE] {
        let ok = peer
            .request("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(ok["result"], json!({}));
    }
    peer
}

/// The URIs updated within `wait` (the probe left out).
pub(crate) async fn updates(peer: &mut Peer, wait: Duration) -> Vec<String> {
    peer.drain(wait)
        .await
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"]["uri"].as_str().unwrap().to_owned())
        .filter(|u| u != PROBE)
        .collect()
}

/// Waits until `peer` hears a change of the probe published by `from`: the bus works.
/// A probe is published again only after 3 s without hearing one (one published before
/// the subscription was up is lost, not late), and the peer is drained until quiet, so
/// that no probe is left on its way.
pub(crate) async fn until_connected(from: &Server, peer: &mut Peer) {
    let deadline = Instant::now() + Duration::from_secs(20);
    'probing: loop {
        from.changes().updated(PROBE);
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(3) {
            let heard = peer.drain(Duration::from_millis(100)).await;
            if heard.iter().any(|m| m["params"]["uri"] == PROBE) {
                break 'probing;
            }
        }
        assert!(Instant::now() < deadline, "the bus never delivered");
    }
    while !peer.drain(Duration::from_millis(500)).await.is_empty() {}
}

/// Waits until `f` holds, polling; false after 10 s.
pub(crate) async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

pub(crate) fn redis_conn(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// The URIs `peer` hears until it hears the probe, which `from` changes after what the
/// test did: what the bus carried before the probe has arrived (messages keep their
/// order), so nothing more of it can come.
pub(crate) async fn heard_until_probe(from: &Server, peer: &mut Peer) -> Vec<String> {
    from.changes().updated(PROBE);
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut got = Vec::new();
    loop {
        for m in peer.drain(Duration::from_millis(100)).await {
            if m["method"] != "notifications/resources/updated" {
                continue;
            }
            match m["params"]["uri"].as_str() {
                Some(PROBE) => return got,
                Some(uri) => got.push(uri.to_owned()),
                None => {}
            }
        }
        assert!(Instant::now() < deadline, "the probe never arrived");
    }
}

/// Publishes every payload of `payloads` on the change channel, in one round trip.
pub(crate) fn publish_raw(url: &str, payloads: &[String]) {
    let mut c = redis_conn(url);
    let mut p = redis::pipe();
    for m in payloads {
        p.cmd("PUBLISH").arg("rsrc:changes").arg(m).ignore();
    }
    p.query::<()>(&mut c).unwrap();
}
