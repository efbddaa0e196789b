//! One namespace, one deployment: every instance records what it serves under
//! `NAMESPACE:member:ID` (renewed with its leases, gone with it), authenticated with the
//! bus keys. An instance starting refuses to join a namespace where a live instance
//! serves something else, or writes with keys it does not have: two deployments sharing
//! a namespace would share leases too, and one would never hear of its own changes.
//!
//! Invariants:
//! - What an instance serves is compared as a digest of its description
//!   ([`RedisBusOptions::serves`](super::RedisBusOptions::serves)); only the sources'
//!   URI prefixes are written in clear, for the error message.
//! - Reading the records is bounded: at most [`MAX_MEMBERS`] records, each at most
//!   [`MAX_RECORD`] bytes.
//! - A record that does not verify is another deployment's.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use redis::aio::MultiplexedConnection;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::BusState;
use crate::keyring::feed;

/// The most records read.
const MAX_MEMBERS: usize = 1024;
/// The largest record read.
const MAX_RECORD: usize = 64 * 1024;

/// What one instance serves.
#[derive(Serialize, Deserialize)]
struct Member {
    /// SHA-256 of its description, hex.
    serves: String,
    /// Its sources' URI prefixes.
    sources: Vec<String>,
}

/// Reads the values of `KEYS` no larger than `ARGV[1]` (larger ones as empty strings).
const VALUES: &str = r"
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('get', k)
  if v and string.len(v) <= tonumber(ARGV[1]) then out[i] = v else out[i] = '' end
end
return out";

impl BusState {
    fn member_key(&self, id: &str) -> String {
        format!("{}:member:{id}", self.options.namespace)
    }

    fn member(&self) -> Member {
        let mut lines = self.options.serves.clone();
        lines.sort();
        let digest = Sha256::digest(lines.join("\n").as_bytes());
        Member {
            serves: digest.iter().map(|b| format!("{b:02x}")).collect(),
            sources: lines
                .iter()
                .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
                .collect(),
        }
    }

    /// This instance's record, authenticated: `TAG.JSON`.
    pub(super) fn member_record(&self) -> (String, String) {
        let json = serde_json::to_string(&self.member()).unwrap_or_default();
        let key = self.member_key(&self.id);
        let tag = self
            .keys
            .members
            .seal(|m| feed(m, &[key.as_bytes(), json.as_bytes()]));
        (key, format!("{}.{json}", URL_SAFE_NO_PAD.encode(tag)))
    }

    /// The record stored under `key`, if it verifies.
    fn read_member(&self, key: &str, record: &str) -> Option<Member> {
        let (tag, json) = record.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.keys
            .members
            .opens(&tag, |m| feed(m, &[key.as_bytes(), json.as_bytes()]))
            .then(|| serde_json::from_str(json).ok())
            .flatten()
    }
}

/// Refuses a namespace where a live instance serves something else, or writes with
/// other keys (the message says which and what to do); else records what this instance
/// serves at once, so that an instance starting next finds it.
pub(super) async fn join(s: &BusState, conn: &mut MultiplexedConnection) -> Result<(), String> {
    check(s, conn).await?;
    let (key, record) = s.member_record();
    let ttl = u64::try_from(s.options.lease_ttl.as_millis())
        .unwrap_or(u64::MAX)
        .max(3);
    redis::cmd("SET")
        .arg(key)
        .arg(record)
        .arg("PX")
        .arg(ttl)
        .query_async::<()>(conn)
        .await
        .map_err(|e| format!("Redis does not answer: {e}"))
}

async fn check(s: &BusState, conn: &mut MultiplexedConnection) -> Result<(), String> {
    let pattern = s.member_key("*");
    let mut keys: Vec<String> = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await
            .map_err(|e| format!("Redis does not answer: {e}"))?;
        keys.extend(found);
        cursor = next;
        if cursor == 0 || keys.len() >= MAX_MEMBERS {
            break;
        }
    }
    keys.truncate(MAX_MEMBERS);
    if keys.is_empty() {
        return Ok(());
    }
    let script = redis::Script::new(VALUES);
    let mut call = script.prepare_invoke();
    for k in &keys {
        call.key(k);
    }
    let values: Vec<String> = call
        .arg(MAX_RECORD)
        .invoke_async(conn)
        .await
        .map_err(|e| format!("Redis does not answer: {e}"))?;
    let mine = s.member();
    let ns = &s.options.namespace;
    for (key, value) in keys.iter().zip(values) {
        let other = key.rsplit(':').next().unwrap_or_default();
        match s.read_member(key, &value) {
            None => {
                return Err(format!(
                    "the namespace {ns:?} of this Redis is used by another deployment: instance {other} writes there with bus keys this one does not have. Give each deployment its own namespace (--bus-namespace), or every instance of one deployment the same --bus-key-file"
                ));
            }
            Some(m)
                if !(m.sources.is_empty() || mine.sources.is_empty())
                    && m.serves != mine.serves =>
            {
                return Err(format!(
                    "instance {other} serves other sources under the namespace {ns:?} ({}; this one serves {}, or the same from other places or with other settings): instances sharing a namespace must serve the same sources, or one would never hear of its own changes. Give each deployment its own namespace (--bus-namespace)",
                    m.sources.join(", "),
                    mine.sources.join(", ")
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
