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

use super::probe::FILTER_BITS;

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

/// Fixed-width bucket members: the entry's filter in its table (see
/// `probe.rs`) and the owner id, packed big-endian into 5 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Members;

impl Members {
    /// Bits of an owner id (16.7M owners per shard).
    pub const ID_BITS: u32 = 24;
    /// Bytes per member.
    pub const WIDTH: usize = ((FILTER_BITS + Self::ID_BITS) / 8) as usize;

    #[inline]
    pub fn encode(filter: u64, id: u32, out: &mut Vec<u8>) {
        let packed = filter << Self::ID_BITS | u64::from(id);
        out.extend_from_slice(&packed.to_be_bytes()[8 - Self::WIDTH..]);
    }

    /// Returns (filter, owner id) of one member ([`Members::WIDTH`] bytes).
    #[inline]
    pub fn decode(member: &[u8]) -> (u64, u32) {
        let mut bytes = [0_u8; 8];
        bytes[8 - Self::WIDTH..].copy_from_slice(member);
        let packed = u64::from_be_bytes(bytes);
        (
            packed >> Self::ID_BITS,
            (packed & ((1 << Self::ID_BITS) - 1)) as u32,
        )
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
        let (version, views) = view_group(bytes)?;
        let owners = views
            .into_iter()
            .map(|view| OwnerRecord {
                seq: view.seq,
                name: view.name.to_owned(),
                entries: view
                    .runs()
                    .flat_map(|run| {
                        let kind = run.kind;
                        run.entries()
                            .map(move |(ordinal, fingerprint)| ((kind, ordinal), fingerprint))
                    })
                    .collect(),
            })
            .collect();
        Ok(Self { version, owners })
    }
}

/// One owner of a group record, read in place: queries resolve candidates
/// against records without building the maps (or any allocation) a write needs.
#[derive(Clone, Copy, Debug)]
pub struct OwnerView<'a> {
    pub seq: u32,
    pub name: &'a str,
    /// The owner's runs, already checked by [`view_group`].
    runs: &'a [u8],
    run_count: u64,
}

impl<'a> OwnerView<'a> {
    /// Returns the (ordinal, fingerprint) entries of kind byte `kind`.
    pub fn entries(&self, kind: u8) -> impl Iterator<Item = (u32, u64)> + 'a {
        self.runs()
            .filter(move |run| run.kind == kind)
            .flat_map(RunView::entries)
    }

    fn runs(&self) -> impl Iterator<Item = RunView<'a>> + 'a {
        let mut reader = Reader {
            bytes: self.runs,
            at: 0,
        };
        // Checked when the view was made, so a read cannot fail here.
        (0..self.run_count).map_while(move |_| read_run(&mut reader).ok())
    }
}

/// Consecutive ordinals of one kind and their fingerprints (8 bytes each).
#[derive(Debug)]
struct RunView<'a> {
    kind: u8,
    first: u32,
    fingerprints: &'a [u8],
}

impl<'a> RunView<'a> {
    fn entries(self) -> impl Iterator<Item = (u32, u64)> + 'a {
        let first = self.first;
        self.fingerprints
            .chunks_exact(8)
            .enumerate()
            .map(move |(offset, bytes)| {
                let mut fingerprint = [0_u8; 8];
                fingerprint.copy_from_slice(bytes);
                (first + offset as u32, u64::from_be_bytes(fingerprint))
            })
    }
}

fn read_run<'a>(reader: &mut Reader<'a>) -> Result<RunView<'a>> {
    let kind = reader.take(1)?[0];
    kind_of_byte(kind)?;
    let first = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
    let length = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
    if length == 0 || first.checked_add(length - 1).is_none() {
        return Err(corrupt());
    }
    let fingerprints = reader.take(8 * length as usize)?;
    Ok(RunView {
        kind,
        first,
        fingerprints,
    })
}

/// Reads a group record in place: its version and its owners in `seq` order.
/// An absent key is the empty record of version 0.
pub fn view_group(bytes: &[u8]) -> Result<(u64, Vec<OwnerView<'_>>)> {
    if bytes.is_empty() {
        return Ok((0, Vec::new()));
    }
    let mut reader = Reader { bytes, at: 0 };
    let version = u64::from_be_bytes(reader.take(8)?.try_into().map_err(|_| corrupt())?);
    let mut owners: Vec<OwnerView<'_>> = Vec::new();
    while reader.at < bytes.len() {
        let seq = u32::try_from(reader.varint()?).map_err(|_| corrupt())?;
        let name_length = reader.varint()? as usize;
        let name = std::str::from_utf8(reader.take(name_length)?).map_err(|_| corrupt())?;
        let run_count = reader.varint()?;
        let start = reader.at;
        for _ in 0..run_count {
            read_run(&mut reader)?;
        }
        if owners.last().is_some_and(|last| last.seq >= seq) {
            return Err(corrupt());
        }
        owners.push(OwnerView {
            seq,
            name,
            runs: &bytes[start..reader.at],
            run_count,
        });
    }
    Ok((version, owners))
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
        let mut out = Vec::new();
        let (filter, id) = ((1 << FILTER_BITS) - 1, (1 << Members::ID_BITS) - 1);
        Members::encode(filter, id, &mut out);
        Members::encode(5, 7, &mut out);
        assert_eq!(Members::WIDTH, 5);
        assert_eq!(out.len(), 2 * Members::WIDTH);
        assert_eq!(Members::decode(&out[..Members::WIDTH]), (filter, id));
        assert_eq!(Members::decode(&out[Members::WIDTH..]), (5, 7));
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
