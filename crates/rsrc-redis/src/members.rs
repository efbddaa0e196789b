//! One namespace, one deployment: every instance records what it serves under
//! `NAMESPACE:member:ID` (renewed with its leases, gone with it), authenticated with the
//! bus keys, and lists itself in the sorted set `NAMESPACE:members` (scored by when its
//! record expires). An instance starting refuses to join a namespace where a live
//! instance serves something else, or writes with keys it does not have: two deployments
//! sharing a namespace would share leases too, and one would never hear of its own
//! changes.
//!
//! Invariants:
//! - What an instance serves is compared as a digest of its description
//!   ([`RedisBusOptions::serves`](crate::RedisBusOptions::serves)); only the sources'
//!   URI prefixes are written in clear, for the error message.
//! - Reading the records is bounded: at most [`MAX_MEMBERS`] live instances, each record
//!   at most [`MAX_RECORD`] bytes; the rest of the keyspace is never scanned.
//! - A record that does not verify (or is over its bound) is another deployment's; an
//!   instance listed whose record has expired is gone, not a stranger.

use redis::aio::MultiplexedConnection;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::state::BusState;
use crate::wire::now_ms;

/// The most live instances read.
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

/// The live instances' records: ids listed in `KEYS[1]` with a score after `ARGV[1]`
/// (the expired pruned), at most `ARGV[3]`, each `{id, record}` with the record `false`
/// when it has expired and `''` when it is over `ARGV[2]` bytes.
const LIVE: &str = r"
redis.call('zremrangebyscore', KEYS[1], '-inf', '(' .. ARGV[1])
local ids = redis.call('zrangebyscore', KEYS[1], ARGV[1], '+inf', 'LIMIT', 0, ARGV[3])
local out = {}
for i, id in ipairs(ids) do
  local v = redis.call('get', KEYS[2] .. id)
  if v and string.len(v) > tonumber(ARGV[2]) then v = '' end
  out[i] = {id, v}
end
return out";

/// Records this instance: `KEYS[1]` its record (`ARGV[1]`, for `ARGV[2]` ms), listed in
/// `KEYS[2]` under its id `ARGV[3]` until `ARGV[4]` (ms since the epoch).
pub(crate) const RECORD: &str = r"
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[4], ARGV[3])
redis.call('pexpire', KEYS[2], ARGV[2])
return 1";

impl BusState {
    fn member_key(&self, id: &str) -> String {
        format!("{}:member:{id}", self.options.namespace)
    }

    /// The sorted set listing the instances with a record.
    pub(crate) fn members_key(&self) -> String {
        format!("{}:members", self.options.namespace)
    }

    /// How long a record lasts without renewal: as long as a lease.
    fn member_ttl(&self) -> u64 {
        u64::try_from(self.options.lease_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(3)
    }

    /// The script call that records (or renews) this instance's record.
    pub(crate) fn record_member(&self) -> redis::ScriptInvocation<'static> {
        static SCRIPT: std::sync::OnceLock<redis::Script> = std::sync::OnceLock::new();
        let (key, record) = self.member_record();
        let ttl = self.member_ttl();
        let mut call = SCRIPT.get_or_init(|| redis::Script::new(RECORD)).key(key);
        call.key(self.members_key())
            .arg(record)
            .arg(ttl)
            .arg(&self.id)
            .arg(now_ms().saturating_add(ttl));
        call
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

    /// This instance's record, authenticated: `TAG.JSON`, bound to its key.
    pub(crate) fn member_record(&self) -> (String, String) {
        let json = serde_json::to_string(&self.member()).unwrap_or_default();
        let key = self.member_key(&self.id);
        let record = self.keys.members.seal_text('.', &[key.as_bytes()], &json);
        (key, record)
    }

    /// The record stored under `key`, if it verifies.
    fn read_member(&self, key: &str, record: &str) -> Option<Member> {
        let json = self
            .keys
            .members
            .open_text('.', &[key.as_bytes()], record)?;
        serde_json::from_str(json).ok()
    }
}

/// Refuses a namespace where a live instance serves something else, or writes with
/// other keys (the message says which and what to do); else records what this instance
/// serves at once, so that an instance starting next finds it.
pub(crate) async fn join(s: &BusState, conn: &mut MultiplexedConnection) -> Result<(), String> {
    check(s, conn).await?;
    s.record_member()
        .invoke_async::<i64>(conn)
        .await
        .map(|_| ())
        .map_err(|e| format!("Redis does not answer: {e}"))
}

async fn check(s: &BusState, conn: &mut MultiplexedConnection) -> Result<(), String> {
    let live: Vec<(String, Option<String>)> = redis::Script::new(LIVE)
        .key(s.members_key())
        .key(s.member_key(""))
        .arg(now_ms())
        .arg(MAX_RECORD)
        .arg(MAX_MEMBERS)
        .invoke_async(conn)
        .await
        .map_err(|e| format!("Redis does not answer: {e}"))?;
    let mine = s.member();
    let ns = &s.options.namespace;
    for (other, record) in live {
        // Listed, but its record expired: gone.
        let Some(record) = record else { continue };
        match s.read_member(&s.member_key(&other), &record) {
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
