//! The commit script of the Redis index and the write planning around it.
//!
//! A write is optimistic: the client reads the group records of a batch's
//! owners (plain `MGET`), plans the new records and the exact members to
//! remove from and add to each bucket, and `COMMIT` checks that every record
//! still has the version it read, then applies everything at once; otherwise
//! it changes nothing and the client re-reads and re-plans. The script runs
//! atomically on one shard's slot, so a failure leaves whole batches written
//! or untouched, and a retried write re-plans against what is there: it
//! converges, and a write already applied plans to nothing.
//!
//! Buckets are rewritten with `SET` of the exact new value: `APPEND` grows a
//! string to twice its length, which costs more memory than the members.
//! A bucket touched by a batch is rewritten once, however many members the
//! batch adds to it, so bulk loads cost about one rewrite per bucket per batch.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use redis::Script;

use copyhound_core::{Error, ErrorKind, Result};

use super::codec::{GroupRecord, Keys, Members, OwnerEntries, kind_of_byte};
use super::probe::ProbeLayout;

/// Applies a planned write if no group record changed since it was read.
/// KEYS[1]: the shard's entry counter; KEYS[2]: its write counter. ARGV[1]: group count n; ARGV[2]: entry
/// count delta; ARGV[3]: member width; then n (record key, version read as 8
/// bytes or "" when absent, new record) triples; then (bucket key, members to
/// remove, members to add) triples.
pub static COMMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
-- Many short-lived bucket strings: collecting them during the script costs
-- more than the memory they hold until it ends.
collectgarbage('stop')
local n = tonumber(ARGV[1])
local width = tonumber(ARGV[3])
local position = 4
for i = 1, n do
  if redis.call('GETRANGE', ARGV[position], 0, 7) ~= ARGV[position + 1] then
    collectgarbage('restart')
    return 0
  end
  position = position + 3
end
position = 4
for i = 1, n do
  redis.call('SET', ARGV[position], ARGV[position + 2])
  position = position + 3
end
local function remove_one(value, member)
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
-- Buckets in chunks: one MGET and one MSET per chunk instead of a call per bucket.
local chunk = 2000
while position <= #ARGV do
  local keys = {}
  local last = math.min(#ARGV, position + 3 * chunk - 1)
  for p = position, last, 3 do keys[#keys + 1] = ARGV[p] end
  local values = redis.call('MGET', unpack(keys))
  local writes = {}
  local i = 0
  for p = position, last, 3 do
    i = i + 1
    local value = values[i]
    local removes = ARGV[p + 1]
    if removes ~= '' and value then
      for offset = 1, #removes, width do
        value = remove_one(value, string.sub(removes, offset, offset + width - 1))
      end
    end
    if value then value = value .. ARGV[p + 2] else value = ARGV[p + 2] end
    if value == '' then
      redis.call('DEL', ARGV[p])
    else
      writes[#writes + 1] = ARGV[p]
      writes[#writes + 1] = value
    end
  end
  if #writes > 0 then redis.call('MSET', unpack(writes)) end
  position = last + 1
end
local delta = tonumber(ARGV[2])
if delta ~= 0 then redis.call('INCRBY', KEYS[1], delta) end
redis.call('INCR', KEYS[2])
collectgarbage('restart')
return 1
",
    )
});

/// What a write needs to know about the index.
#[derive(Clone, Copy, Debug)]
pub struct Geometry<'a> {
    pub layout: &'a ProbeLayout,
    pub keys: &'a Keys,
    /// Bits of an owner id below its group number.
    pub seq_bits: u32,
}

impl Geometry<'_> {
    pub fn owner_id(&self, group: u32, seq: u32) -> u32 {
        group << self.seq_bits | seq
    }

    /// Returns (group, seq) of an owner id.
    pub fn split_id(&self, id: u32) -> (u32, u32) {
        (id >> self.seq_bits, id & ((1 << self.seq_bits) - 1))
    }
}

/// One owner to write: its name and group.
pub struct OwnerWrite<'a> {
    pub name: &'a str,
    pub group: u32,
}

/// (key, old, new) for a group record (old: the version read);
/// (key, members to remove, members to add) for a bucket.
pub type Edit = (Vec<u8>, Vec<u8>, Vec<u8>);

/// A planned write of one shard: the arguments of `COMMIT` after the counters.
#[derive(Debug, Default)]
pub struct Plan {
    pub groups: Vec<Edit>,
    pub buckets: Vec<Edit>,
    pub count_delta: i64,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// A member change: kind byte, add (or remove), owner id, fingerprint.
/// Two fingerprints of one owner may share a member in a table; the bucket
/// then holds it twice, and removing one leaves the other.
type MemberChange = (u8, bool, u32, u64);

/// Plans the change of each owner from what `records` hold to `target(current)`.
/// `records` maps group -> (bytes read, decoded).
pub fn plan(
    geometry: Geometry<'_>,
    shard: u32,
    owners: &[OwnerWrite<'_>],
    records: &mut BTreeMap<u32, (Vec<u8>, GroupRecord)>,
    mut target: impl FnMut(&str, &OwnerEntries) -> OwnerEntries,
) -> Result<Plan> {
    let mut plan = Plan::default();
    let mut changes: Vec<MemberChange> = Vec::new();
    let mut dirty = BTreeSet::new();
    let seq_limit = 1_u32 << geometry.seq_bits;
    for owner in owners {
        let (_, record) = records.get_mut(&owner.group).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                "group record missing from a write plan",
            )
        })?;
        let position = record.find(owner.name);
        let empty = OwnerEntries::new();
        let current = position.map_or(&empty, |position| &record.owners[position].entries);
        let wanted = target(owner.name, current);
        if &wanted == current {
            continue;
        }
        let position = match position {
            Some(position) => position,
            None => record.add(owner.name, seq_limit)?,
        };
        let id = geometry.owner_id(owner.group, record.owners[position].seq);
        let before = distinct(&record.owners[position].entries);
        let after = distinct(&wanted);
        for (kind, fingerprint) in before.difference(&after) {
            changes.push((*kind, false, id, *fingerprint));
        }
        for (kind, fingerprint) in after.difference(&before) {
            changes.push((*kind, true, id, *fingerprint));
        }
        plan.count_delta += wanted.len() as i64 - record.owners[position].entries.len() as i64;
        if wanted.is_empty() {
            record.owners.remove(position);
        } else {
            record.owners[position].entries = wanted;
        }
        dirty.insert(owner.group);
    }
    for group in dirty {
        let (read, record) = &mut records.get_mut(&group).expect("dirty groups were read");
        record.version = record.version.wrapping_add(1);
        plan.groups.push((
            geometry.keys.group(shard, group),
            read.get(..8).unwrap_or_default().to_vec(),
            record.encode(),
        ));
    }
    plan.buckets = bucket_edits(geometry, shard, changes)?;
    Ok(plan)
}

/// Distinct (kind, fingerprint) pairs: an owner holds one member per pair and table.
fn distinct(entries: &OwnerEntries) -> BTreeSet<(u8, u64)> {
    entries
        .iter()
        .map(|((kind, _), fingerprint)| (*kind, *fingerprint))
        .collect()
}

/// Expands member changes into per-bucket (key, removes, adds).
fn bucket_edits(
    geometry: Geometry<'_>,
    shard: u32,
    changes: Vec<MemberChange>,
) -> Result<Vec<Edit>> {
    let layout = geometry.layout;
    let mut placed: Vec<(u8, u64, bool, u64, u32)> =
        Vec::with_capacity(changes.len() * layout.tables());
    for (kind, add, id, fingerprint) in changes {
        for table in 0..layout.tables() {
            placed.push((
                kind << 5 | table as u8,
                layout.bucket(table, fingerprint),
                add,
                layout.filter(table, fingerprint),
                id,
            ));
        }
    }
    placed.sort_unstable();
    let prefix = geometry.keys.bucket_prefix(shard);
    let mut edits: Vec<Edit> = Vec::new();
    let mut last = None;
    for (kind_table, bucket, add, filter, id) in placed {
        if last != Some((kind_table, bucket)) {
            last = Some((kind_table, bucket));
            let mut key = Vec::with_capacity(prefix.len() + 4);
            key.extend_from_slice(&prefix);
            let kind = kind_of_byte(kind_table >> 5)?;
            geometry
                .keys
                .bucket_suffix(&mut key, kind, usize::from(kind_table & 31), bucket);
            edits.push((key, Vec::new(), Vec::new()));
        }
        let edit = edits.last_mut().expect("an edit was pushed");
        let out = if add { &mut edit.2 } else { &mut edit.1 };
        Members::encode(filter, id, out);
    }
    Ok(edits)
}

/// Applies one bucket edit as the commit script does: each member of
/// `removes` drops one aligned occurrence, then `adds` is appended.
pub fn edit_bucket(current: Option<Vec<u8>>, removes: &[u8], adds: &[u8], width: usize) -> Vec<u8> {
    let mut value = current.unwrap_or_default();
    value.reserve_exact(adds.len());
    for member in removes.chunks_exact(width) {
        if let Some(position) = value
            .chunks_exact(width)
            .position(|stored| stored == member)
        {
            value.drain(position * width..(position + 1) * width);
        }
    }
    value.extend_from_slice(adds);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edits_remove_aligned_members_then_append() {
        let value = b"abcdefcdab".to_vec();
        assert_eq!(
            edit_bucket(Some(value.clone()), b"cd", b"xy", 2),
            b"abefcdabxy"
        );
        // "bc" is not aligned, so nothing is removed.
        assert_eq!(edit_bucket(Some(value), b"bcab", b"", 2), b"cdefcdab");
        assert_eq!(edit_bucket(None, b"ab", b"", 2), b"");
    }
}
