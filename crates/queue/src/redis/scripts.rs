//! Key layout and the Lua scripts of the Redis queue. Every state change that
//! touches more than one key runs as one script, so a crash or a concurrent
//! worker never sees a task in two places (or in none).
//!
//! Deadlines live in the consumer group's pending list itself: a delivery made
//! with visibility `v` gets its idle time set to `HORIZON - v`, so it reaches
//! the `HORIZON` idle threshold that `XAUTOCLAIM` uses exactly `v` after
//! delivery. Per-delivery visibilities and `extend` then need no side table.

use std::sync::LazyLock;

use redis::Script;

/// The idle threshold of `XAUTOCLAIM`; also the longest visibility honoured.
pub const HORIZON_MS: u64 = 7 * 24 * 3_600 * 1_000;
/// The consumer group every worker joins.
pub const GROUP: &str = "workers";
/// The one consumer name: ownership is tracked by delivery counts in ack ids,
/// so per-process consumers (which Redis never forgets) are not needed.
pub const CONSUMER: &str = "worker";
/// Due retries moved back into the stream per `receive`.
pub const PROMOTE_LIMIT: usize = 1_000;

/// The keys of one queue, all under the configured prefix.
#[derive(Clone, Debug)]
pub struct Keys {
    /// Stream of tasks waiting or in flight (entries: task, prior, error).
    pub stream: String,
    /// Sorted set of failed tasks by retry time (ms); members are JSON.
    pub retry: String,
    /// Stream of dead letters (entries: task, attempts, error, dead_at).
    pub dead: String,
    /// Where the `XAUTOCLAIM` scan resumes.
    pub claim_cursor: String,
    /// Prefix of the slot groups (sorted sets of holders by lease end, ms).
    pub slots: String,
    /// Prefix of the turn keys (the next free turn, ms; expires when passed).
    pub turns: String,
}

impl Keys {
    /// Returns the keys under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            stream: format!("{prefix}tasks"),
            retry: format!("{prefix}retry"),
            dead: format!("{prefix}dead"),
            claim_cursor: format!("{prefix}claim_cursor"),
            slots: format!("{prefix}slots:"),
            turns: format!("{prefix}turns:"),
        }
    }

    /// Returns every key, for clean-up.
    pub fn all(&self) -> [&str; 4] {
        [&self.stream, &self.retry, &self.dead, &self.claim_cursor]
    }
}

const COMMON: &str = r#"
local function fields_of(flat)
  local fields = {}
  for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
  return fields
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function ensure_group(stream, group)
  redis.pcall('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
end
local function delivery_count(stream, group, id)
  local pending = redis.call('XPENDING', stream, group, id, id, 1)
  if #pending == 0 then return nil end
  return tonumber(pending[1][4])
end
local function bury(stream, dead, group, id, task, attempts, err, now)
  redis.call('XADD', dead, '*', 'task', task, 'attempts', attempts, 'error', err, 'dead_at', now)
  redis.call('XACK', stream, group, id)
  redis.call('XDEL', stream, id)
end
local function hide(stream, group, consumer, ids, idle)
  if #ids == 0 then return end
  local args = {'XCLAIM', stream, group, consumer, 0}
  for _, id in ipairs(ids) do args[#args + 1] = id end
  args[#args + 1] = 'IDLE'; args[#args + 1] = idle; args[#args + 1] = 'JUSTID'
  redis.call(unpack(args))
end
"#;

/// KEYS: stream, retry, dead, cursor. ARGV: group, consumer, max, visibility ms,
/// horizon ms, max attempts, promote limit. Returns `{id, task, attempt, delivery}`s.
const RECEIVE: &str = r#"
local stream, retry, dead, cursor_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local group, consumer, max = ARGV[1], ARGV[2], tonumber(ARGV[3])
local idle = tonumber(ARGV[5]) - tonumber(ARGV[4])
local max_attempts = tonumber(ARGV[6])
ensure_group(stream, group)
local now = now_ms()
for _, member in ipairs(redis.call('ZRANGEBYSCORE', retry, '-inf', now, 'LIMIT', 0, tonumber(ARGV[7]))) do
  local r = cjson.decode(member)
  redis.call('XADD', stream, '*', 'task', r.task, 'prior', r.prior, 'error', r.error)
  redis.call('ZREM', retry, member)
end
local out, hidden = {}, {}
local cursor = redis.call('GET', cursor_key) or '0-0'
for pass = 1, 2 do
  if #out >= max then break end
  if pass == 2 then cursor = '0-0' end
  local started_at_zero = cursor == '0-0'
  local claimed = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[5], cursor, 'COUNT', max - #out)
  cursor = claimed[1]
  for _, entry in ipairs(claimed[2]) do
    if entry and entry[2] then
      local id, f = entry[1], fields_of(entry[2])
      local attempt = tonumber(f.prior) + (delivery_count(stream, group, id) or 1)
      if attempt > max_attempts then
        local err = 'visibility timeout expired on delivery ' .. (attempt - 1)
        bury(stream, dead, group, id, f.task, attempt - 1, err, now)
      else
        hidden[#hidden + 1] = id
        out[#out + 1] = {id, f.task, attempt, attempt - tonumber(f.prior)}
      end
    end
  end
  if started_at_zero then break end
end
redis.call('SET', cursor_key, cursor)
if #out < max then
  local read = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', max - #out, 'STREAMS', stream, '>')
  if read then
    for _, entry in ipairs(read[1][2]) do
      local f = fields_of(entry[2])
      hidden[#hidden + 1] = entry[1]
      out[#out + 1] = {entry[1], f.task, tonumber(f.prior) + 1, 1}
    end
  end
end
hide(stream, group, consumer, hidden, idle)
return out
"#;

/// KEYS: stream, retry, dead. ARGV: group, id, delivery, error, max attempts,
/// then the retry delay (ms) of attempts 1.. . Returns 0 stale, 1 retry, 2 dead.
const FAIL: &str = r#"
local stream, retry, dead = KEYS[1], KEYS[2], KEYS[3]
local group, id, err = ARGV[1], ARGV[2], ARGV[4]
ensure_group(stream, group)
local count = delivery_count(stream, group, id)
if count == nil or count ~= tonumber(ARGV[3]) then return 0 end
local entries = redis.call('XRANGE', stream, id, id)
if #entries == 0 then
  redis.call('XACK', stream, group, id)
  return 0
end
local f = fields_of(entries[1][2])
local attempt = tonumber(f.prior) + count
local now = now_ms()
if attempt >= tonumber(ARGV[5]) then
  bury(stream, dead, group, id, f.task, attempt, err, now)
  return 2
end
local delay = tonumber(ARGV[5 + attempt]) or tonumber(ARGV[#ARGV])
redis.call('ZADD', retry, now + delay, cjson.encode({task = f.task, prior = attempt, error = err}))
redis.call('XACK', stream, group, id)
redis.call('XDEL', stream, id)
return 1
"#;

/// KEYS: stream, retry. ARGV: group, id, delivery, delay ms. Returns 0 stale,
/// 1 deferred. The delivery is not counted: `prior` stays one below it.
const DEFER: &str = r#"
local stream, retry = KEYS[1], KEYS[2]
local group, id = ARGV[1], ARGV[2]
ensure_group(stream, group)
local count = delivery_count(stream, group, id)
if count == nil or count ~= tonumber(ARGV[3]) then return 0 end
local entries = redis.call('XRANGE', stream, id, id)
if #entries == 0 then
  redis.call('XACK', stream, group, id)
  return 0
end
local f = fields_of(entries[1][2])
local prior = tonumber(f.prior) + count - 1
redis.call('ZADD', retry, now_ms() + tonumber(ARGV[4]), cjson.encode({task = f.task, prior = prior, error = f.error or ''}))
redis.call('XACK', stream, group, id)
redis.call('XDEL', stream, id)
return 1
"#;

/// KEYS: slot group. ARGV: holder, limit, lease ms. Returns 1 when the holder
/// has a slot (taken or renewed), 0 when all are held by others.
const ACQUIRE_SLOT: &str = r#"
local key, holder, limit, lease = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, holder) or redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now + lease, holder)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(1, tonumber(last[2]) - now))
  return 1
end
return 0
"#;

/// KEYS: turn. ARGV: interval (ms). Reserves the key's next turn and returns
/// the wait for it (ms); the key expires once its last turn has passed.
const RESERVE_TURN: &str = r#"
local key, interval = KEYS[1], tonumber(ARGV[1])
local now = now_ms()
local turn = math.max(now, tonumber(redis.call('GET', key) or '0'))
redis.call('SET', key, turn + interval, 'PX', turn + interval - now + 1000)
return turn - now
"#;

/// KEYS: stream. ARGV: group, consumer, id, delivery, idle. Returns 1 if extended.
const EXTEND: &str = r#"
local stream, group = KEYS[1], ARGV[1]
ensure_group(stream, group)
local count = delivery_count(stream, group, ARGV[3])
if count == nil or count ~= tonumber(ARGV[4]) then return 0 end
hide(stream, group, ARGV[2], {ARGV[3]}, tonumber(ARGV[5]))
return 1
"#;

/// KEYS: stream, retry, dead. ARGV: group. Returns {stream length, pending, retrying, dead}.
const STATS: &str = r#"
local stream, retry, dead, group = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
ensure_group(stream, group)
local pending = redis.call('XPENDING', stream, group)
return {redis.call('XLEN', stream), tonumber(pending[1]), redis.call('ZCARD', retry), redis.call('XLEN', dead)}
"#;

/// KEYS: stream, dead. ARGV: limit. Returns how many dead letters were re-queued.
const RETRY_DEAD: &str = r#"
local stream, dead = KEYS[1], KEYS[2]
local moved = 0
for _, entry in ipairs(redis.call('XRANGE', dead, '-', '+', 'COUNT', tonumber(ARGV[1]))) do
  local f = fields_of(entry[2])
  redis.call('XADD', stream, '*', 'task', f.task, 'prior', 0, 'error', '')
  redis.call('XDEL', dead, entry[1])
  moved = moved + 1
end
return moved
"#;

fn script(body: &str) -> Script {
    Script::new(&format!("{COMMON}\n{body}"))
}

/// The receive script.
pub static RECEIVE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(RECEIVE));
/// The fail script.
pub static FAIL_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(FAIL));
/// The defer script.
pub static DEFER_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(DEFER));
/// The slot script.
pub static ACQUIRE_SLOT_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(ACQUIRE_SLOT));
/// The reserve-turn script.
pub static RESERVE_TURN_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(RESERVE_TURN));
/// The extend script.
pub static EXTEND_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(EXTEND));
/// The stats script.
pub static STATS_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(STATS));
/// The retry-dead script.
pub static RETRY_DEAD_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(RETRY_DEAD));
