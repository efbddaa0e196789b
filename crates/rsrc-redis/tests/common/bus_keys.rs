//! The bus key of the Redis tests, and what an instance of the deployment writes to
//! Redis with it, computed here independently of rsrc's own code: a session's name,
//! record fields and subscriptions as tagged, messages on the channel as signed. A test
//! that writes to Redis as another instance would uses these; one that writes without
//! them stands for someone who can reach Redis but has no key.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rsrc_redis::RedisBusOptions;
use sha2::Sha256;

/// The deployment's one bus key.
pub const KEY: [u8; 32] = *b"tests-bus-key-0123456789abcdef!!";

/// Bus options with the test key.
pub fn options() -> RedisBusOptions {
    let mut o = RedisBusOptions::default();
    o.keys = vec![KEY];
    o
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(key).unwrap()
}

/// The key of one purpose, as rsrc derives it.
fn derived(label: &str) -> Vec<u8> {
    mac(&KEY)
        .chain_update(label.as_bytes())
        .finalize()
        .into_bytes()
        .to_vec()
}

/// A tag: HMAC-SHA256 of the parts (each after its length), 128 bits, base64url.
fn tag(label: &str, parts: &[&[u8]]) -> String {
    let mut m = mac(&derived(label));
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
    }
    URL_SAFE_NO_PAD.encode(&m.finalize().into_bytes()[..16])
}

/// The name of session `sid` (created without authentication) in Redis.
pub fn session_name(sid: &str) -> String {
    tag("rsrc/bus/session-names", &[sid.as_bytes(), b""])
}

/// The key of session `sid`'s record: `rsrc:session:NAME`.
pub fn session_key(sid: &str) -> String {
    format!("rsrc:session:{}", session_name(sid))
}

/// `value` of `field` of session `sid`, as an instance stores it.
pub fn tagged(sid: &str, field: &str, value: &str) -> String {
    let name = session_name(sid);
    let t = tag(
        "rsrc/bus/session-fields",
        &[name.as_bytes(), field.as_bytes(), value.as_bytes()],
    );
    format!("{t}:{value}")
}

/// A message on the `rsrc:changes` channel from instance `from`, with `fields` (the
/// event: `{"resync": ""}`, `{"session": NAME}`…), as an instance signs it.
pub fn message(from: &str, fields: serde_json::Value) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(1);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut json = fields;
    json["from"] = from.into();
    json["ts"] = now.into();
    json["seq"] = SEQ.fetch_add(1, Ordering::Relaxed).into();
    let text = json.to_string();
    let t = tag("rsrc/bus/messages", &[b"rsrc:changes", text.as_bytes()]);
    format!("{t}.{text}")
}
