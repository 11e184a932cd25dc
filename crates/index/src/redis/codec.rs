//! Redis key names and the binary layouts of bucket members and group
//! records: every key pattern of the Redis index is spelled here and nowhere
//! else.
//!
//! Keys of shard `s` share the hash tag `{s}`, so a write's records and
//! buckets live in one cluster slot (its script stays atomic) and a query's
//! `MGET` of its buckets never crosses slots. Keys are short and binary
//! because Redis charges ~72 bytes per key before the value.

use std::collections::BTreeMap;

use copyhound_core::ports::EntryKind;
use copyhound_core::{Error, ErrorKind, Result};

/// Fewest owner-id bits a member carries (the rest of its bytes hold the residue).
const MIN_ID_BITS: u32 = 24;

/// Key names of one index.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
    bucket_bytes: usize,
}

impl Keys {
    pub fn new(prefix: &str, bucket_bits: u32) -> Self {
        Self {
            prefix: prefix.to_owned(),
            bucket_bytes: bucket_bits.div_ceil(8) as usize,
        }
    }

    /// The prefix of every key.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The hash of fixed parameters (format, max distance, shards, bucket bits, groups).
    pub fn meta(&self) -> String {
        format!("{}meta", self.prefix)
    }

    fn shard(&self, shard: u32) -> String {
        format!("{}{{{shard}}}:", self.prefix)
    }

    /// Live entry counter, per shard.
    pub fn count(&self, shard: u32) -> String {
        format!("{}count", self.shard(shard))
    }

    /// Write counter, per shard: every write bumps it, so a `WATCH` on it
    /// sees any other write of the shard.
    pub fn writes(&self, shard: u32) -> String {
        format!("{}writes", self.shard(shard))
    }

    /// The record of owner group `group`.
    pub fn group(&self, shard: u32, group: u32) -> Vec<u8> {
        let mut key = format!("{}g:", self.shard(shard)).into_bytes();
        key.extend_from_slice(&group.to_be_bytes());
        key
    }

    /// Returns the key prefix of shard `shard`'s buckets (to append [`Keys::bucket_suffix`] to).
    pub fn bucket_prefix(&self, shard: u32) -> Vec<u8> {
        format!("{}b:", self.shard(shard)).into_bytes()
    }

    /// Appends the (kind, table, bucket) part of a bucket key to `key`.
    #[inline]
    pub fn bucket_suffix(&self, key: &mut Vec<u8>, kind: EntryKind, table: usize, bucket: u64) {
        key.push(kind_byte(kind) << 5 | table as u8);
        key.extend_from_slice(&bucket.to_be_bytes()[8 - self.bucket_bytes..]);
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

pub fn kind_of_byte(byte: u8) -> Result<EntryKind> {
    Ok(match byte {
        0 => EntryKind::Document,
        1 => EntryKind::Passage,
        2 => EntryKind::Dna,
        3 => EntryKind::Anchor,
        _ => return Err(corrupt()),
    })
}

/// Fixed-width bucket members: the residue (fingerprint bits not in the key)
/// and the owner id, packed big-endian into as few bytes as leave the id at
/// least 24 bits (10 bytes and 31-bit ids at 15-bit buckets).
#[derive(Clone, Copy, Debug)]
pub struct Members {
    width: usize,
    id_bits: u32,
}

impl Members {
    pub fn new(residue_bits: u32) -> Self {
        let width = (residue_bits + MIN_ID_BITS).div_ceil(8);
        Self {
            width: width as usize,
            id_bits: (8 * width - residue_bits).min(32),
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn id_bits(&self) -> u32 {
        self.id_bits
    }

    #[inline]
    pub fn encode(&self, residue: u64, id: u32, out: &mut Vec<u8>) {
        let packed = (u128::from(residue) << self.id_bits) | u128::from(id);
        out.extend_from_slice(&packed.to_be_bytes()[16 - self.width..]);
    }

    /// Returns (residue, owner id) of one member (`width` bytes).
    #[inline]
    pub fn decode(&self, member: &[u8]) -> (u64, u32) {
        let mut bytes = [0_u8; 16];
        bytes[16 - self.width..].copy_from_slice(member);
        let packed = u128::from_be_bytes(bytes);
        let id = (packed & ((1 << self.id_bits) - 1)) as u32;
        ((packed >> self.id_bits) as u64, id)
    }
}

/// The entries of one owner: (kind byte, ordinal) -> fingerprint.
pub type OwnerEntries = BTreeMap<(u8, u32), u64>;

/// One owner inside a group record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRecord {
    /// The owner's number within its group (its id is `group << seq_bits | seq`).
    pub seq: u32,
    pub name: String,
    pub entries: OwnerEntries,
}

/// The record of one owner group: a version (bumped by every write, compared
/// by the commit script) and the group's owners in `seq` order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupRecord {
    pub version: u64,
    pub owners: Vec<OwnerRecord>,
}

impl GroupRecord {
    /// Returns the position of the owner called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.owners.iter().position(|owner| owner.name == name)
    }

    /// Adds an owner under the smallest free number below `limit`; returns its position.
    pub fn add(&mut self, name: &str, limit: u32) -> Result<usize> {
        let mut seq = 0;
        let mut position = 0;
        while position < self.owners.len() && self.owners[position].seq == seq {
            seq += 1;
            position += 1;
        }
        if seq >= limit {
            return Err(Error::new(
                ErrorKind::Config,
                "redis index owner group is full: recreate the index with more groups",
            ));
        }
        self.owners.insert(
            position,
            OwnerRecord {
                seq,
                name: name.to_owned(),
                entries: OwnerEntries::new(),
            },
        );
        Ok(position)
    }

    /// Encodes the record; `version` first, so the commit script compares 8 bytes.
    ///
    /// Per owner: seq, name, then runs of consecutive ordinals of one kind
    /// (kind, first ordinal, length, fingerprints), varints elsewhere.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            8 + self
                .owners
                .iter()
                .map(|owner| 8 + owner.name.len() + 9 * owner.entries.len())
                .sum::<usize>(),
        );
        out.extend_from_slice(&self.version.to_be_bytes());
        for owner in &self.owners {
            put_varint(&mut out, u64::from(owner.seq));
            put_varint(&mut out, owner.name.len() as u64);
            out.extend_from_slice(owner.name.as_bytes());
            let runs = runs(&owner.entries);
            put_varint(&mut out, runs.len() as u64);
            for run in runs {
                out.push(run[0].0.0);
                put_varint(&mut out, u64::from(run[0].0.1));
                put_varint(&mut out, run.len() as u64);
                for (_, fingerprint) in run {
                    out.extend_from_slice(&fingerprint.to_be_bytes());
                }
            }
        }
        out
    }

    /// Decodes a record; an absent key is the empty record of version 0.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        if bytes.is_empty() {
            return Ok(Self::default());
        }
        let mut reader = Reader { bytes, at: 0 };
        let version = u64::from_be_bytes(reader.take(8)?.try_into().map_err(|_| corrupt())?);
        let mut owners = Vec::new();
        while reader.at < bytes.len() {
            let seq = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
            let name_length = reader.varint()? as usize;
            let name = std::str::from_utf8(reader.take(name_length)?)
                .map_err(|_| corrupt())?
                .to_owned();
            let mut entries = OwnerEntries::new();
            for _ in 0..reader.varint()? {
                let kind = reader.take(1)?[0];
                kind_of_byte(kind)?;
                let first = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
                let length = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
                for offset in 0..length {
                    let ordinal = first.checked_add(offset).ok_or_else(corrupt)?;
                    let fingerprint =
                        u64::from_be_bytes(reader.take(8)?.try_into().map_err(|_| corrupt())?);
                    entries.insert((kind, ordinal), fingerprint);
                }
            }
            if owners
                .last()
                .is_some_and(|last: &OwnerRecord| last.seq >= seq)
            {
                return Err(corrupt());
            }
            owners.push(OwnerRecord { seq, name, entries });
        }
        Ok(Self { version, owners })
    }
}

/// Splits entries (sorted by kind, ordinal) into runs of consecutive ordinals of one kind.
fn runs(entries: &OwnerEntries) -> Vec<Vec<(&(u8, u32), &u64)>> {
    let mut runs: Vec<Vec<(&(u8, u32), &u64)>> = Vec::new();
    for entry in entries {
        match runs.last_mut() {
            Some(run)
                if run.last().is_some_and(|(last, _)| {
                    last.0 == entry.0.0 && last.1.checked_add(1) == Some(entry.0.1)
                }) =>
            {
                run.push(entry);
            }
            _ => runs.push(vec![entry]),
        }
    }
    runs
}

fn corrupt() -> Error {
    Error::new(ErrorKind::Corrupt, "redis index group record is malformed")
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, length: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(length).ok_or_else(corrupt)?;
        let slice = self.bytes.get(self.at..end).ok_or_else(corrupt)?;
        self.at = end;
        Ok(slice)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0_u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(corrupt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip() {
        for residue_bits in [40, 48, 49, 56, 63] {
            let members = Members::new(residue_bits);
            assert!(members.id_bits() >= 24);
            let residue = u64::MAX >> (64 - residue_bits);
            let id = (1_u32 << members.id_bits()) - 1;
            let mut out = Vec::new();
            members.encode(residue, id, &mut out);
            members.encode(5, 7, &mut out);
            assert_eq!(out.len(), 2 * members.width());
            assert_eq!(members.decode(&out[..members.width()]), (residue, id));
            assert_eq!(members.decode(&out[members.width()..]), (5, 7));
        }
        assert_eq!(Members::new(49).width(), 10);
        assert_eq!(Members::new(49).id_bits(), 31);
    }

    #[test]
    fn group_records_round_trip_and_reject_damage() {
        let mut record = GroupRecord {
            version: 9,
            ..GroupRecord::default()
        };
        let first = record.add("c:work:1", 16).unwrap();
        record.owners[first].entries = [((0, 0), 5), ((1, 0), 1), ((1, 1), 2), ((1, 7), u64::MAX)]
            .into_iter()
            .collect();
        record.add("p:页面", 16).unwrap();
        let bytes = record.encode();
        assert_eq!(GroupRecord::decode(&bytes).unwrap(), record);
        assert_eq!(record.owners[1].seq, 1);
        for cut in 1..bytes.len() {
            if let Ok(decoded) = GroupRecord::decode(&bytes[..cut]) {
                assert_ne!(decoded, record);
            }
        }
        assert_eq!(GroupRecord::decode(b"").unwrap(), GroupRecord::default());
    }

    #[test]
    fn owners_take_the_smallest_free_number() {
        let mut record = GroupRecord::default();
        for name in ["a", "b", "c"] {
            record.add(name, 3).unwrap();
        }
        assert_eq!(record.add("d", 3).unwrap_err().kind(), ErrorKind::Config);
        record.owners.remove(1);
        let position = record.add("d", 3).unwrap();
        assert_eq!(record.owners[position].seq, 1);
        assert_eq!(record.find("d"), Some(1));
    }
}
