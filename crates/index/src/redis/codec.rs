//! Redis key names and the binary layouts of bucket members and owner records:
//! every key pattern of the Redis index is spelled here and nowhere else.
//!
//! Keys of shard `s` share the hash tag `{s}`, so one owner's record and all
//! its buckets live in one cluster slot (scripts stay atomic) and a query's
//! `MGET` of its buckets never crosses slots.

use std::collections::BTreeMap;

use copyhound_core::ports::EntryKind;
use copyhound_core::{Error, ErrorKind, Result};

use crate::layout::SegmentLayout;

/// Bytes of an owner id in a bucket member.
pub const OWNER_ID_BYTES: usize = 4;

/// Key names of one index.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    /// The prefix of every key.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The hash of fixed parameters (max distance, shards, bucket bits).
    pub fn meta(&self) -> String {
        format!("{}meta", self.prefix)
    }

    fn shard(&self, shard: u32) -> String {
        format!("{}{{{shard}}}:", self.prefix)
    }

    /// Owner name -> owner id, per shard.
    pub fn owners(&self, shard: u32) -> String {
        format!("{}owners", self.shard(shard))
    }

    /// Owner id counter, per shard.
    pub fn sequence(&self, shard: u32) -> String {
        format!("{}seq", self.shard(shard))
    }

    /// Live entry counter, per shard.
    pub fn count(&self, shard: u32) -> String {
        format!("{}count", self.shard(shard))
    }

    /// Prefix of owner record keys (`<prefix>{s}:o:<id>`).
    pub fn record_prefix(&self, shard: u32) -> String {
        format!("{}o:", self.shard(shard))
    }

    /// The bucket of (kind, table, bucket value).
    pub fn bucket(&self, shard: u32, kind: EntryKind, table: usize, bucket: u64) -> Vec<u8> {
        let mut key = format!("{}b:", self.shard(shard)).into_bytes();
        key.push(kind_byte(kind));
        key.push(table as u8);
        key.extend_from_slice(&(bucket as u32).to_be_bytes());
        key
    }
}

pub fn kind_byte(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::Document => 0,
        EntryKind::Passage => 1,
        EntryKind::Dna => 2,
        EntryKind::Anchor => 3,
    }
}

/// How one table's members are cut: the fingerprint bytes its bucket key
/// already fixes are left out of the member.
#[derive(Clone, Debug)]
pub struct MemberLayout {
    bucket_bits: Vec<u32>,
    covered: Vec<[bool; 8]>,
}

impl MemberLayout {
    pub fn new(layout: &SegmentLayout, bucket_bits: u32) -> Self {
        let bucket_bits: Vec<u32> = (0..layout.tables())
            .map(|table| bucket_bits.min(layout.length(table)).max(1))
            .collect();
        let covered = (0..layout.tables())
            .map(|table| {
                let start = layout.start(table);
                let end = start + bucket_bits[table];
                std::array::from_fn(|byte| 8 * byte as u32 >= start && 8 * byte as u32 + 8 <= end)
            })
            .collect();
        Self {
            bucket_bits,
            covered,
        }
    }

    pub fn bucket_bits(&self, table: usize) -> u32 {
        self.bucket_bits[table]
    }

    /// Returns the member width of `table`, bytes.
    pub fn width(&self, table: usize) -> usize {
        8 - self.covered[table]
            .iter()
            .filter(|covered| **covered)
            .count()
            + OWNER_ID_BYTES
    }

    /// Appends the member of (fingerprint, owner id) for `table` to `out`.
    pub fn encode(&self, table: usize, fingerprint: u64, owner_id: u32, out: &mut Vec<u8>) {
        for (byte, covered) in fingerprint.to_be_bytes().iter().zip(self.covered[table]) {
            if !covered {
                out.push(*byte);
            }
        }
        out.extend_from_slice(&owner_id.to_be_bytes());
    }

    /// Decodes one member of `table` in the bucket `bucket` (start bit `start`).
    pub fn decode(&self, table: usize, start: u32, bucket: u64, member: &[u8]) -> (u64, u32) {
        let fixed = (bucket << (64 - start - self.bucket_bits[table])).to_be_bytes();
        let mut bytes = [0_u8; 8];
        let mut next = 0;
        for (index, byte) in bytes.iter_mut().enumerate() {
            if self.covered[table][index] {
                *byte = fixed[index];
            } else {
                *byte = member[next];
                next += 1;
            }
        }
        let owner = u32::from_be_bytes(
            member[next..next + OWNER_ID_BYTES]
                .try_into()
                .expect("4 owner id bytes"),
        );
        (u64::from_be_bytes(bytes), owner)
    }
}

/// The entries of one owner: (kind byte, ordinal) -> fingerprint.
pub type OwnerEntries = BTreeMap<(u8, u32), u64>;

/// Encodes an owner record: name, then (kind, ordinal, fingerprint) per entry;
/// empty when the owner has no entry (the key is deleted).
pub fn encode_record(name: &str, entries: &OwnerEntries) -> Vec<u8> {
    if entries.is_empty() {
        return Vec::new();
    }
    let name_length = u16::try_from(name.len()).expect("owner names are checked to fit u16");
    let mut record = Vec::with_capacity(2 + name.len() + entries.len() * 13);
    record.extend_from_slice(&name_length.to_be_bytes());
    record.extend_from_slice(name.as_bytes());
    for ((kind, ordinal), fingerprint) in entries {
        record.push(*kind);
        record.extend_from_slice(&ordinal.to_be_bytes());
        record.extend_from_slice(&fingerprint.to_be_bytes());
    }
    record
}

/// Decodes an owner record into its name and entries (empty record: no entries).
pub fn decode_record(record: &[u8]) -> Result<(String, OwnerEntries)> {
    let mut entries = OwnerEntries::new();
    if record.is_empty() {
        return Ok((String::new(), entries));
    }
    let corrupt = || Error::new(ErrorKind::Corrupt, "redis index owner record is malformed");
    let name_length = u16::from_be_bytes(
        record
            .get(..2)
            .ok_or_else(corrupt)?
            .try_into()
            .expect("2 bytes"),
    ) as usize;
    let name = record.get(2..2 + name_length).ok_or_else(corrupt)?;
    let name = std::str::from_utf8(name).map_err(|_| corrupt())?.to_owned();
    let body = &record[2 + name_length..];
    if !body.len().is_multiple_of(13) {
        return Err(corrupt());
    }
    for chunk in body.chunks_exact(13) {
        let ordinal = u32::from_be_bytes(chunk[1..5].try_into().expect("4 bytes"));
        let fingerprint = u64::from_be_bytes(chunk[5..13].try_into().expect("8 bytes"));
        entries.insert((chunk[0], ordinal), fingerprint);
    }
    Ok((name, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip_and_drop_covered_bytes() {
        for max_distance in [0, 1, 3, 5] {
            let layout = SegmentLayout::new(max_distance).unwrap();
            let members = MemberLayout::new(&layout, 16);
            for table in 0..layout.tables() {
                let fingerprint = 0xfedc_ba98_7654_3210_u64 ^ table as u64;
                let mut member = Vec::new();
                members.encode(table, fingerprint, 77, &mut member);
                assert_eq!(member.len(), members.width(table));
                let bucket = layout.bucket(table, fingerprint, members.bucket_bits(table));
                assert_eq!(
                    members.decode(table, layout.start(table), bucket, &member),
                    (fingerprint, 77)
                );
            }
        }
        let members = MemberLayout::new(&SegmentLayout::new(3).unwrap(), 16);
        assert_eq!(members.width(0), 10);
    }

    #[test]
    fn records_round_trip() {
        let entries: OwnerEntries = [((0, 0), 5), ((1, 9), u64::MAX)].into_iter().collect();
        let record = encode_record("p:x", &entries);
        assert_eq!(decode_record(&record).unwrap(), ("p:x".to_owned(), entries));
        assert!(decode_record(&record[..record.len() - 1]).is_err());
        assert!(encode_record("p:x", &OwnerEntries::new()).is_empty());
    }
}
