//! The Lua scripts of the session store: every change to a session's keys is one of
//! them, so that nothing is left half-written.
//!
//! Invariants: a key a script creates gets its expiry in the same script; no script
//! writes to a session whose record is missing, except [`RESTORE`], which puts back a
//! lost one and never a deleted one (its tombstone is there); stream 0 is written only by
//! the instance the record names as holder ([`LOG`]); every change of holder increments
//! `claims`, so later claims are told from earlier ones; what a script reads back is
//! bounded ([`LOAD`], [`LOG_READ`]): a record or entry over its bound is reported, not
//! returned. Values the instances authenticate (fields, members, entries) are written
//! as the instances tagged them; scripts never make one up.

use redis::Script;

/// The scripts, hashed once.
pub(super) struct Scripts {
    pub(super) create: Script,
    pub(super) load: Script,
    pub(super) touch: Script,
    pub(super) save: Script,
    pub(super) restore: Script,
    pub(super) delete: Script,
    pub(super) claim: Script,
    pub(super) open: Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Scripts {
            create: Script::new(CREATE),
            load: Script::new(LOAD),
            touch: Script::new(TOUCH),
            save: Script::new(SAVE),
            restore: Script::new(RESTORE),
            delete: Script::new(DELETE),
            claim: Script::new(CLAIM),
            open: Script::new(OPEN),
        }
    }
}

/// Records a new session (anything left under its keys is dropped first): its version,
/// client and init (tagged), no stream, revision 0. ARGV: ttl, version, client, init.
const CREATE: &str = r"
redis.call('del', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('hset', KEYS[1], 'version', ARGV[2], 'client', ARGV[3], 'init', ARGV[4],
  'streams', 0, 'rev', 0, 'claims', 0)
redis.call('pexpire', KEYS[1], ARGV[1])
return 1";

/// A session's record and subscriptions: {fields (flat), members}, or -1 (deleted), 0
/// (missing), -3 (over the bounds: more than ARGV[2] fields or a field over ARGV[3]
/// bytes, more than ARGV[4] members or more than ARGV[5] bytes of them). ARGV[1]: the ttl
/// to restart the expiry with, 0 to leave it.
const LOAD: &str = r"
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[4]) == 1 then return -1 end
  return 0
end
if redis.call('hlen', KEYS[1]) > tonumber(ARGV[2]) then return -3 end
local fields = redis.call('hgetall', KEYS[1])
for i = 2, #fields, 2 do
  if string.len(fields[i]) > tonumber(ARGV[3]) then return -3 end
end
if redis.call('scard', KEYS[2]) > tonumber(ARGV[4]) then return -3 end
local members = redis.call('smembers', KEYS[2])
local bytes = 0
for _, m in ipairs(members) do bytes = bytes + string.len(m) end
if bytes > tonumber(ARGV[5]) then return -3 end
if tonumber(ARGV[1]) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('pexpire', KEYS[2], ARGV[1])
  redis.call('pexpire', KEYS[3], ARGV[1])
end
return {fields, members}";

/// Restarts a session's expiry: 1 if it exists, 0 if deleted, -1 if missing.
const TOUCH: &str = r"
if redis.call('pexpire', KEYS[1], ARGV[1]) == 1 then
  redis.call('pexpire', KEYS[2], ARGV[1])
  redis.call('pexpire', KEYS[3], ARGV[1])
  return 1
end
if redis.call('exists', KEYS[4]) == 1 then return 0 end
return -1";

/// Applies one request's changes; the merged state and its revision, or -1 (deleted),
/// 0 (missing). ARGV: ttl, init (tagged, '' if unchanged), level changed ('1'), level
/// (tagged), the number of subscriptions added, those, then those removed (tagged).
const SAVE: &str = r"
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[3]) == 1 then return -1 end
  return 0
end
if ARGV[2] ~= '' then redis.call('hset', KEYS[1], 'init', ARGV[2]) end
if ARGV[3] == '1' then redis.call('hset', KEYS[1], 'level', ARGV[4]) end
local n = tonumber(ARGV[5])
for i = 6, 5 + n do redis.call('sadd', KEYS[2], ARGV[i]) end
for i = 6 + n, #ARGV do redis.call('srem', KEYS[2], ARGV[i]) end
local rev = redis.call('hincrby', KEYS[1], 'rev', 1)
redis.call('pexpire', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[1])
return {rev, redis.call('hget', KEYS[1], 'init') or '',
        redis.call('hget', KEYS[1], 'level') or '', redis.call('smembers', KEYS[2])}";

/// Re-creates a lost session from a copy: -1 if deleted meanwhile, 1 if anything was
/// written, 0 if a record at least as recent was there (taking its holder if it had
/// none). ARGV: ttl, holder (this instance, or ''), version, client, init, level
/// (tagged, '' for none), claims, rev, streams, subscriptions (tagged).
const RESTORE: &str = r"
if redis.call('exists', KEYS[3]) == 1 then return -1 end
local exists = redis.call('exists', KEYS[1]) == 1
local claims = tonumber(ARGV[7])
local streams = tonumber(ARGV[9])
if exists then
  claims = math.max(claims, tonumber(redis.call('hget', KEYS[1], 'claims') or '0'))
  streams = math.max(streams, tonumber(redis.call('hget', KEYS[1], 'streams') or '0'))
  redis.call('hset', KEYS[1], 'streams', streams)
  local holder = redis.call('hget', KEYS[1], 'holder') or ''
  if tonumber(redis.call('hget', KEYS[1], 'rev') or '0') >= tonumber(ARGV[8]) then
    if ARGV[2] ~= '' and holder == '' then
      redis.call('hset', KEYS[1], 'holder', ARGV[2], 'claims', claims + 1)
      return 1
    end
    return 0
  end
end
local holder = ARGV[2]
if holder ~= '' then
  claims = claims + 1
elseif exists then
  holder = redis.call('hget', KEYS[1], 'holder') or ''
end
redis.call('hset', KEYS[1], 'version', ARGV[3], 'client', ARGV[4], 'init', ARGV[5],
  'holder', holder, 'claims', claims, 'rev', ARGV[8], 'streams', streams)
if ARGV[6] ~= '' then redis.call('hset', KEYS[1], 'level', ARGV[6])
else redis.call('hdel', KEYS[1], 'level') end
redis.call('del', KEYS[2])
for i = 10, #ARGV do redis.call('sadd', KEYS[2], ARGV[i]) end
redis.call('pexpire', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[1])
return 1";

/// Deletes a session and its streams, leaving the tombstone.
const DELETE: &str = r"
local n = tonumber(redis.call('hget', KEYS[1], 'streams') or '0')
redis.call('del', KEYS[1], KEYS[2], KEYS[1] .. ':s0')
for i = math.max(1, n - tonumber(ARGV[1])), n do
  redis.call('del', KEYS[1] .. ':s' .. i)
end
redis.call('set', KEYS[3], '1', 'PX', ARGV[2])
return 1";

/// Makes ARGV[1] the holder: {previous holder, top entry of stream 0, claim number},
/// or -1 (deleted), 0 (missing).
const CLAIM: &str = r"
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[3]) == 1 then return -1 end
  return 0
end
local old = redis.call('hget', KEYS[1], 'holder') or ''
redis.call('hset', KEYS[1], 'holder', ARGV[1])
local number = redis.call('hincrby', KEYS[1], 'claims', 1)
local last = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1)
local top = '0-0'
if last[1] then top = last[1][1] end
return {old, top, number}";

/// Numbers a new POST stream written by ARGV[1], forgetting the oldest beyond ARGV[2].
const OPEN: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return 0 end
local n = redis.call('hincrby', KEYS[1], 'streams', 1)
redis.call('hset', KEYS[1], 'w' .. n, ARGV[1])
local old = n - tonumber(ARGV[2])
if old > 0 then
  redis.call('del', KEYS[1] .. ':s' .. old)
  redis.call('hdel', KEYS[1], 'w' .. old)
end
return n";

/// Writes one log entry: 1 written, 0 refused (stream 0 of a session another instance
/// holds), -1 (the session does not exist), -2 (out of order). A stream-0 entry for a
/// session nobody holds makes this instance its holder. ARGV: 'e' (event) or 'x' (end),
/// seq, oldest kept, frame, ttl, this instance, '1' for stream 0, the entry's tag.
pub(super) const LOG: &str = r"
if redis.call('exists', KEYS[1]) == 0 then return -1 end
if ARGV[7] == '1' then
  local h = redis.call('hget', KEYS[1], 'holder') or ''
  if h == '' then
    redis.call('hset', KEYS[1], 'holder', ARGV[6])
    redis.call('hincrby', KEYS[1], 'claims', 1)
  elseif h ~= ARGV[6] then
    return 0
  end
end
local r
if ARGV[1] == 'e' then
  r = redis.pcall('xadd', KEYS[2], 'MINID', '=', ARGV[3] .. '-0', ARGV[2] .. '-0',
    'f', ARGV[4], 'o', ARGV[3], 't', ARGV[8])
else
  r = redis.pcall('xadd', KEYS[2], ARGV[2] .. '-1', 'end', '1', 't', ARGV[8])
end
if type(r) == 'table' and r.err then return -2 end
redis.call('pexpire', KEYS[2], ARGV[5])
return 1";

/// Reads a stream back, newest first, within bounds: {top entry's id, 1 if the bounds
/// stopped the reading (older events exist), {the entries}}, each entry {id, fields}, or
/// {id, {'big', '1'}} for one whose fields exceed ARGV[4] bytes. ARGV: the position
/// (events after it are read), most events, most bytes (the newest event is read
/// whatever its size), the largest entry. At most the most events and 1,024 more entries
/// (end markers, which a writer adds one of) are examined.
pub(super) const LOG_READ: &str = r"
local top = redis.call('xrevrange', KEYS[1], '+', '-', 'COUNT', 1)
local topid = '0-0'
if top[1] then topid = top[1][1] end
local out = {}
local bounded = 0
local min = '(' .. ARGV[1] .. '-1'
local max = '+'
local events, bytes, examined = 0, 0, 0
local maxevents, maxbytes, maxentry = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
while true do
  local page = redis.call('xrevrange', KEYS[1], max, min, 'COUNT', 64)
  if #page == 0 then return {topid, bounded, out} end
  for _, e in ipairs(page) do
    examined = examined + 1
    if examined > maxevents + 1024 then
      bounded = 1
      return {topid, bounded, out}
    end
    max = '(' .. e[1]
    local size = 0
    for j = 2, #e[2], 2 do size = size + string.len(e[2][j]) end
    if string.sub(e[1], -2) == '-0' then
      if events >= 1 and (events >= maxevents or bytes + size > maxbytes) then
        bounded = 1
        return {topid, bounded, out}
      end
      events = events + 1
      if size > maxentry then
        table.insert(out, {e[1], {'big', '1'}})
      else
        bytes = bytes + size
        table.insert(out, e)
      end
    end
  end
end";
