//! The two Lua scripts of the Redis index and the write planning around them.
//!
//! A write is optimistic: `OWNERS` returns (allocating when inserting) the ids
//! and current records of a batch's owners; the client computes the new records
//! and the exact bucket members to remove and add; `APPLY` checks every record
//! is unchanged and applies everything at once, or changes nothing and returns
//! 0 (the client re-reads and re-plans). Each script runs atomically on one
//! shard's slot, so a failure between two scripts leaves whole owners written
//! or untouched, and a retried write re-plans against what is there: it
//! converges, and a write already applied plans to nothing.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Script;

use copyhound_core::Result;

use super::codec::{Keys, MemberLayout, OwnerEntries, decode_record, encode_record};
use crate::layout::SegmentLayout;

/// Returns, per owner name in ARGV[3..], its id (0 when absent and not allocated)
/// and its record ("" when none). KEYS: owners hash, id counter. ARGV[1]: record
/// key prefix; ARGV[2]: "1" to allocate ids for unknown owners.
pub static OWNERS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local out = {}
local allocate = ARGV[2] == '1'
for i = 3, #ARGV do
  local id = redis.call('HGET', KEYS[1], ARGV[i])
  if (not id) and allocate then
    id = redis.call('INCR', KEYS[2])
    redis.call('HSET', KEYS[1], ARGV[i], id)
  end
  if id then
    out[#out + 1] = tonumber(id)
    out[#out + 1] = redis.call('GET', ARGV[1] .. id) or ''
  else
    out[#out + 1] = 0
    out[#out + 1] = ''
  end
end
return out
",
    )
});

/// Applies a planned write if no owner record changed since it was read.
/// KEYS: owners hash (routing), entry counter. ARGV[1]: owner count n; ARGV[2]:
/// entry count delta; then n (record key, expected, new) triples; then
/// (bucket key, member width, members to remove, members to add) quadruples.
pub static APPLY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = tonumber(ARGV[1])
local position = 3
for i = 1, n do
  local current = redis.call('GET', ARGV[position]) or ''
  if current ~= ARGV[position + 1] then return 0 end
  position = position + 3
end
position = 3
for i = 1, n do
  if ARGV[position + 2] == '' then
    redis.call('DEL', ARGV[position])
  else
    redis.call('SET', ARGV[position], ARGV[position + 2])
  end
  position = position + 3
end
local function remove_one(value, member, width)
  local from = 1
  while true do
    local found = string.find(value, member, from, true)
    if not found then return value end
    if (found - 1) % width == 0 then
      return string.sub(value, 1, found - 1) .. string.sub(value, found + width)
    end
    from = found + 1
  end
end
while position <= #ARGV do
  local key = ARGV[position]
  local width = tonumber(ARGV[position + 1])
  local removes = ARGV[position + 2]
  local value = redis.call('GET', key) or ''
  for offset = 1, #removes, width do
    value = remove_one(value, string.sub(removes, offset, offset + width - 1), width)
  end
  value = value .. ARGV[position + 3]
  if value == '' then redis.call('DEL', key) else redis.call('SET', key, value) end
  position = position + 4
end
redis.call('INCRBY', KEYS[2], ARGV[2])
return 1
",
    )
});

/// One owner as read by `OWNERS`.
#[derive(Debug)]
pub struct OwnerState {
    pub name: String,
    pub id: u32,
    pub record: Vec<u8>,
}

/// A planned write of one shard: arguments of `APPLY` (after the counters).
#[derive(Debug, Default)]
pub struct Plan {
    pub owners: Vec<(String, Vec<u8>, Vec<u8>)>,
    pub buckets: BTreeMap<Vec<u8>, (usize, Vec<u8>, Vec<u8>)>,
    pub count_delta: i64,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }
}

/// Plans the change of each owner from its current record to `target(current)`.
pub fn plan(
    layout: &SegmentLayout,
    members: &MemberLayout,
    keys: &Keys,
    shard: u32,
    owners: &[OwnerState],
    mut target: impl FnMut(&str, &OwnerEntries) -> OwnerEntries,
) -> Result<Plan> {
    let mut plan = Plan::default();
    let record_prefix = keys.record_prefix(shard);
    for owner in owners.iter().filter(|owner| owner.id != 0) {
        let (_, current) = decode_record(&owner.record)?;
        let wanted = target(&owner.name, &current);
        if wanted == current {
            continue;
        }
        for (key, fingerprint) in &current {
            if wanted.get(key) != Some(fingerprint) {
                plan_members(
                    layout,
                    members,
                    keys,
                    shard,
                    *key,
                    *fingerprint,
                    owner.id,
                    &mut plan,
                    false,
                );
                plan.count_delta -= 1;
            }
        }
        for (key, fingerprint) in &wanted {
            if current.get(key) != Some(fingerprint) {
                plan_members(
                    layout,
                    members,
                    keys,
                    shard,
                    *key,
                    *fingerprint,
                    owner.id,
                    &mut plan,
                    true,
                );
                plan.count_delta += 1;
            }
        }
        let key = format!("{record_prefix}{}", owner.id);
        plan.owners.push((
            key,
            owner.record.clone(),
            encode_record(&owner.name, &wanted),
        ));
    }
    Ok(plan)
}

#[allow(clippy::too_many_arguments)]
fn plan_members(
    layout: &SegmentLayout,
    members: &MemberLayout,
    keys: &Keys,
    shard: u32,
    (kind, _ordinal): (u8, u32),
    fingerprint: u64,
    owner_id: u32,
    plan: &mut Plan,
    add: bool,
) {
    let kind = super::kind_of_byte(kind);
    for table in 0..layout.tables() {
        let bucket = layout.bucket(table, fingerprint, members.bucket_bits(table));
        let key = keys.bucket(shard, kind, table, bucket);
        let group = plan
            .buckets
            .entry(key)
            .or_insert_with(|| (members.width(table), Vec::new(), Vec::new()));
        members.encode(
            table,
            fingerprint,
            owner_id,
            if add { &mut group.2 } else { &mut group.1 },
        );
    }
}
