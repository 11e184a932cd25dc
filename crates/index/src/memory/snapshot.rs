//! The snapshot file of the in-memory index: a header (magic, format version,
//! payload length, xxh3 checksum) and a payload of owner names and, per kind,
//! (owner, ordinal, fingerprint) triples. Tables are not stored: they are
//! rebuilt on load in linear time, so a snapshot opens under any `max_distance`.
//!
//! Written atomically (temp file, fsync, rename, fsync of the directory), so a
//! crash leaves the old or the new snapshot; a torn or foreign file is a
//! `Corrupt` error, never a panic. Writes since the snapshot are in the log
//! (`wal.rs`).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use copyhound_core::{Error, ErrorKind, Result};
use xxhash_rust::xxh3::xxh3_64;

use super::state::{Base, KIND_COUNT};
use super::tables::RawEntry;
use crate::layout::SegmentLayout;

/// File name of the snapshot inside the index directory.
pub const SNAPSHOT_FILE: &str = "index.snapshot";
const MAGIC: &[u8; 8] = b"CHIDXSNP";
const FORMAT_VERSION: u32 = 2; // 2: a fourth kind (anchors)
const HEADER_BYTES: usize = 8 + 4 + 8 + 8;

/// Returns the snapshot bytes of `base`.
pub fn encode(base: &Base) -> Vec<u8> {
    let entries: usize = base.kinds.iter().map(|kind| kind.len()).sum();
    let mut payload = Vec::with_capacity(entries * 16 + base.owners.len() * 32);
    payload.extend_from_slice(&(base.owners.len() as u32).to_le_bytes());
    for id in 0..base.owners.len() as u32 {
        let name = base.owners.name(id);
        payload.extend_from_slice(&(name.len() as u32).to_le_bytes());
        payload.extend_from_slice(name.as_bytes());
    }
    for slot in 0..base.kinds.len() {
        payload.extend_from_slice(&(base.kinds[slot].len() as u64).to_le_bytes());
        for (owner, ordinal, fingerprint) in base.raw_entries(slot) {
            payload.extend_from_slice(&owner.to_le_bytes());
            payload.extend_from_slice(&ordinal.to_le_bytes());
            payload.extend_from_slice(&fingerprint.to_le_bytes());
        }
    }
    let mut file = Vec::with_capacity(HEADER_BYTES + payload.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&xxh3_64(&payload).to_le_bytes());
    file.extend_from_slice(&payload);
    file
}

/// Decodes snapshot bytes into a base with tables for `layout`.
pub fn decode(bytes: &[u8], layout: &SegmentLayout) -> Result<Base> {
    let mut header = Reader { bytes, offset: 0 };
    if header.take(8)? != MAGIC {
        return Err(corrupt("not an index snapshot (bad magic)"));
    }
    let version = header.u32()?;
    if version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "unknown index snapshot format version {version}"
        )));
    }
    let length = header.u64()?;
    let checksum = header.u64()?;
    let payload = &bytes[HEADER_BYTES..];
    if payload.len() as u64 != length {
        return Err(corrupt(format!(
            "index snapshot is truncated: {} of {length} payload bytes",
            payload.len()
        )));
    }
    if xxh3_64(payload) != checksum {
        return Err(corrupt("index snapshot checksum mismatch"));
    }
    let mut reader = Reader {
        bytes: payload,
        offset: 0,
    };
    let owner_count = reader.u32()? as usize;
    let mut names: Vec<String> = Vec::with_capacity(owner_count.min(payload.len() / 4));
    for _ in 0..owner_count {
        let length = reader.u32()? as usize;
        let name = std::str::from_utf8(reader.take(length)?)
            .map_err(|_| corrupt("owner name is not utf-8"))?;
        if names
            .last()
            .is_some_and(|previous| previous.as_str() >= name)
        {
            return Err(corrupt("owner names are not sorted"));
        }
        names.push(name.to_owned());
    }
    let mut entries: [Vec<RawEntry>; KIND_COUNT] = Default::default();
    for collected in &mut entries {
        let count = reader.u64()? as usize;
        collected.reserve(count.min(payload.len() / 16));
        for _ in 0..count {
            let entry = (reader.u32()?, reader.u32()?, reader.u64()?);
            let ordered = collected
                .last()
                .is_none_or(|previous| (previous.0, previous.1) < (entry.0, entry.1));
            if entry.0 as usize >= owner_count || !ordered {
                return Err(corrupt(
                    "index snapshot entries are out of order or name no owner",
                ));
            }
            collected.push(entry);
        }
    }
    if reader.offset != payload.len() {
        return Err(corrupt("index snapshot has trailing bytes"));
    }
    Base::build(layout, &names, entries)
}

/// Reads the snapshot in `dir` and returns it with its size in bytes; `None` when there is none.
pub fn read(dir: &Path, layout: &SegmentLayout) -> Result<Option<(Base, u64)>> {
    let path = dir.join(SNAPSHOT_FILE);
    let present = path
        .try_exists()
        .map_err(|error| io_error("failed to look for the index snapshot", error))?;
    if !present {
        return Ok(None);
    }
    let bytes =
        fs::read(&path).map_err(|error| io_error("failed to read the index snapshot", error))?;
    let size = bytes.len() as u64;
    decode(&bytes, layout).map(|base| Some((base, size)))
}

/// Writes `bytes` as the snapshot of `dir`, atomically.
pub fn write(dir: &Path, bytes: &[u8]) -> Result<PathBuf> {
    fs::create_dir_all(dir)
        .map_err(|error| io_error("failed to create the index directory", error))?;
    let path = dir.join(SNAPSHOT_FILE);
    let temporary = dir.join(format!("{SNAPSHOT_FILE}.tmp-{}", std::process::id()));
    let written = File::create(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| fs::rename(&temporary, &path))
        .and_then(|()| File::open(dir).and_then(|directory| directory.sync_all()));
    if let Err(error) = written {
        let _ignored = fs::remove_file(&temporary);
        return Err(io_error("failed to write the index snapshot", error));
    }
    Ok(path)
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Corrupt, message)
}

fn io_error(context: &'static str, error: std::io::Error) -> Error {
    Error::with_source(ErrorKind::Internal, context, error)
}

struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        let end = self
            .offset
            .checked_add(count)
            .filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| corrupt("index snapshot is truncated"))?;
        let slice = &self.bytes[self.offset..end];
        self.offset = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("took 4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("took 8 bytes"),
        ))
    }
}
