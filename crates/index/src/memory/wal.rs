//! The write-ahead log of the in-memory index, beside its snapshot: every
//! acknowledged write is on disk before the index answers `Ok`, so a process
//! killed at any instant (kill -9, power loss) loses no acknowledged write.
//!
//! File: a header (magic, format version), then records, each a payload length
//! (`u32`), the xxh3 of the payload (`u64`) and the payload: a count and that
//! many operations (insert entries, remove owners). One append is one record
//! (a group commit puts several writes in it) written and `fdatasync`ed
//! before it returns, so a crash can only cut the last record. On open, a record cut short by a crash (it
//! runs past the end of the file, or the last record or a zero-filled tail fails
//! its checksum) is dropped with a warning and truncated away; a bad record
//! followed by other data is `Corrupt`. A snapshot makes the log redundant and
//! resets it; replaying operations the snapshot already holds converges, since
//! insert is an upsert and removal drops whatever the owner has.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use copyhound_core::ports::{EntryKind, IndexEntry};
use copyhound_core::{Error, ErrorKind, Result};
use xxhash_rust::xxh3::xxh3_64;

/// File name of the log inside the index directory.
pub const LOG_FILE: &str = "index.wal";
const MAGIC: &[u8; 8] = b"CHIDXWAL";
const FORMAT_VERSION: u32 = 1;
const FILE_HEADER_BYTES: u64 = 12;
const RECORD_HEADER_BYTES: usize = 4 + 8;
const OP_INSERT: u8 = 1;
const OP_REMOVE_OWNERS: u8 = 2;

/// One logged write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LogOp {
    /// Entries inserted (upserted) in one call.
    Insert(Vec<IndexEntry>),
    /// Owners whose entries were removed.
    RemoveOwners(Vec<String>),
}

/// Returns the encoded operation.
pub(crate) fn encode(op: &LogOp) -> Result<Vec<u8>> {
    match op {
        LogOp::Insert(entries) => encode_insert(entries),
        LogOp::RemoveOwners(owners) => encode_removal(owners),
    }
}

/// Returns the encoded operation of an insert.
pub(crate) fn encode_insert(entries: &[IndexEntry]) -> Result<Vec<u8>> {
    let mut owners: Vec<&str> = entries.iter().map(|entry| entry.owner.as_str()).collect();
    owners.sort_unstable();
    owners.dedup();
    let mut payload = Vec::with_capacity(entries.len() * 17 + owners.len() * 24 + 9);
    payload.push(OP_INSERT);
    push_names(&mut payload, &owners)?;
    payload.extend_from_slice(&count_u32(entries.len())?.to_le_bytes());
    for entry in entries {
        let owner = owners
            .binary_search(&entry.owner.as_str())
            .expect("every owner of the write is in its table");
        payload.extend_from_slice(&(owner as u32).to_le_bytes());
        payload.push(kind_byte(entry.kind));
        payload.extend_from_slice(&entry.ordinal.to_le_bytes());
        payload.extend_from_slice(&entry.fingerprint.to_le_bytes());
    }
    Ok(payload)
}

/// Returns the encoded operation of an owner removal.
pub(crate) fn encode_removal(owners: &[String]) -> Result<Vec<u8>> {
    let names: Vec<&str> = owners.iter().map(String::as_str).collect();
    let mut payload = vec![OP_REMOVE_OWNERS];
    push_names(&mut payload, &names)?;
    Ok(payload)
}

fn push_names(payload: &mut Vec<u8>, names: &[&str]) -> Result<()> {
    payload.extend_from_slice(&count_u32(names.len())?.to_le_bytes());
    for name in names {
        payload.extend_from_slice(&count_u32(name.len())?.to_le_bytes());
        payload.extend_from_slice(name.as_bytes());
    }
    Ok(())
}

/// Returns one record holding encoded operations: an append is all or nothing on replay.
pub(crate) fn frame(ops: &[Vec<u8>]) -> Result<Vec<u8>> {
    let payload_bytes = 4 + ops.iter().map(Vec::len).sum::<usize>();
    let length = count_u32(payload_bytes)?;
    let mut record = Vec::with_capacity(RECORD_HEADER_BYTES + payload_bytes);
    record.extend_from_slice(&length.to_le_bytes());
    record.extend_from_slice(&[0; 8]);
    record.extend_from_slice(&count_u32(ops.len())?.to_le_bytes());
    for op in ops {
        record.extend_from_slice(op);
    }
    let checksum = xxh3_64(&record[RECORD_HEADER_BYTES..]);
    record[4..RECORD_HEADER_BYTES].copy_from_slice(&checksum.to_le_bytes());
    Ok(record)
}

fn count_u32(count: usize) -> Result<u32> {
    u32::try_from(count)
        .map_err(|_| Error::invalid("an index write is too large for one log record"))
}

fn kind_byte(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::Document => 0,
        EntryKind::Passage => 1,
        EntryKind::Dna => 2,
        EntryKind::Anchor => 3,
    }
}

fn kind_of(byte: u8) -> Result<EntryKind> {
    Ok(match byte {
        0 => EntryKind::Document,
        1 => EntryKind::Passage,
        2 => EntryKind::Dna,
        3 => EntryKind::Anchor,
        other => {
            return Err(corrupt(format!(
                "index log names unknown entry kind {other}"
            )));
        }
    })
}

/// What a log file holds: its operations and where its valid part ends.
#[derive(Debug, Default)]
pub(crate) struct ParsedLog {
    pub ops: Vec<LogOp>,
    /// Bytes of whole, valid records after the file header.
    pub valid_bytes: u64,
    /// Bytes of a torn tail dropped after them.
    pub torn_bytes: u64,
}

/// Parses the records of a log (the bytes after the file header).
pub(crate) fn parse_records(bytes: &[u8]) -> Result<ParsedLog> {
    let mut ops = Vec::new();
    let mut offset = 0_usize;
    let torn = |ops, offset: usize| ParsedLog {
        ops,
        valid_bytes: offset as u64,
        torn_bytes: (bytes.len() - offset) as u64,
    };
    while offset < bytes.len() {
        let rest = &bytes[offset..];
        if rest.len() < RECORD_HEADER_BYTES {
            return Ok(torn(ops, offset));
        }
        let length = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let checksum = u64::from_le_bytes(rest[4..12].try_into().expect("8 bytes"));
        let end = RECORD_HEADER_BYTES + length;
        let Some(payload) = rest.get(RECORD_HEADER_BYTES..end) else {
            // The record runs past the end of the file: an append cut short.
            return Ok(torn(ops, offset));
        };
        if xxh3_64(payload) != checksum {
            // Only the last append can be cut short (each one is synced
            // before the next): a bad last record, or one followed by
            // nothing but zeros (a tail the file system never filled).
            if end == rest.len() || rest[end..].iter().all(|byte| *byte == 0) {
                return Ok(torn(ops, offset));
            }
            return Err(corrupt(format!(
                "index log record at byte {} fails its checksum and {} bytes follow it",
                offset as u64 + FILE_HEADER_BYTES,
                rest.len() - end
            )));
        }
        decode_payload(payload, &mut ops)?;
        offset += end;
    }
    Ok(ParsedLog {
        ops,
        valid_bytes: offset as u64,
        torn_bytes: 0,
    })
}

fn decode_payload(payload: &[u8], ops: &mut Vec<LogOp>) -> Result<()> {
    let mut reader = Reader {
        bytes: payload,
        offset: 0,
    };
    let count = reader.u32()?;
    for _ in 0..count {
        ops.push(decode_op(&mut reader)?);
    }
    if reader.offset != payload.len() {
        return Err(corrupt("index log record has trailing bytes"));
    }
    Ok(())
}

fn decode_op(reader: &mut Reader<'_>) -> Result<LogOp> {
    let op = reader.take(1)?[0];
    let names = reader.names()?;
    match op {
        OP_INSERT => {
            let count = reader.u32()? as usize;
            let mut entries = Vec::with_capacity(count.min(reader.remaining() / 17));
            for _ in 0..count {
                let owner = names
                    .get(reader.u32()? as usize)
                    .ok_or_else(|| corrupt("index log entry names no owner"))?;
                let kind = kind_of(reader.take(1)?[0])?;
                entries.push(IndexEntry {
                    owner: owner.clone(),
                    kind,
                    ordinal: reader.u32()?,
                    fingerprint: reader.u64()?,
                });
            }
            Ok(LogOp::Insert(entries))
        }
        OP_REMOVE_OWNERS => Ok(LogOp::RemoveOwners(names)),
        other => Err(corrupt(format!("index log has unknown operation {other}"))),
    }
}

/// The open log file of an index directory; one process appends to it.
#[derive(Debug)]
pub(crate) struct WriteAheadLog {
    path: PathBuf,
    file: File,
    /// Length of the file's valid part: the next record goes here.
    length: u64,
    /// Set when a failed append could not be undone: appends are refused
    /// rather than written after bytes a replay would call corrupt.
    broken: bool,
}

impl WriteAheadLog {
    /// Opens (or creates) the log of `dir`, drops a torn tail, and returns it
    /// with the operations to replay on top of the snapshot.
    pub fn open(dir: &Path) -> Result<(Self, Vec<LogOp>)> {
        fs::create_dir_all(dir)
            .map_err(|error| io_error("failed to create the index directory", error))?;
        let path = dir.join(LOG_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|error| io_error("failed to open the index log", error))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|error| io_error("failed to read the index log", error))?;
        let header = header_bytes();
        if bytes.len() < header.len() {
            // Absent, or its creation was cut short: start it (again).
            if !header.starts_with(&bytes) {
                return Err(corrupt("not an index log (bad header)"));
            }
            let mut log = Self {
                path,
                file,
                length: 0,
                broken: false,
            };
            log.rewrite_header()?;
            sync_dir(dir)?;
            return Ok((log, Vec::new()));
        }
        if bytes[..8] != MAGIC[..] {
            return Err(corrupt("not an index log (bad magic)"));
        }
        if bytes[8..12] != header[8..12] {
            return Err(corrupt("unknown index log format version"));
        }
        let parsed = parse_records(&bytes[header.len()..])?;
        let length = FILE_HEADER_BYTES + parsed.valid_bytes;
        if parsed.torn_bytes > 0 {
            tracing::warn!(
                path = %path.display(),
                torn_bytes = parsed.torn_bytes,
                kept_records = parsed.ops.len(),
                "dropping a torn record at the end of the index log (a write cut by a crash, never acknowledged)"
            );
            file.set_len(length)
                .and_then(|()| file.sync_all())
                .map_err(|error| io_error("failed to truncate the index log", error))?;
        }
        let log = Self {
            path,
            file,
            length,
            broken: false,
        };
        Ok((log, parsed.ops))
    }

    /// Returns the log's length in bytes.
    pub fn len(&self) -> u64 {
        self.length
    }

    /// Appends a framed record and syncs it to disk.
    pub fn append(&mut self, record: &[u8]) -> Result<()> {
        if self.broken {
            return Err(Error::new(
                ErrorKind::Unavailable,
                "the index log failed and could not be repaired; reopen the index",
            ));
        }
        let written = self
            .file
            .seek(SeekFrom::Start(self.length))
            .and_then(|_| self.file.write_all(record))
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.length += record.len() as u64;
                Ok(())
            }
            Err(error) => {
                // Undo a partial append so the next record follows valid ones.
                if self
                    .file
                    .set_len(self.length)
                    .and_then(|()| self.file.sync_all())
                    .is_err()
                {
                    self.broken = true;
                }
                Err(io_error("failed to append to the index log", error))
            }
        }
    }

    /// Empties the log (its operations are in a snapshot now).
    pub fn reset(&mut self) -> Result<()> {
        self.rewrite_header()
    }

    fn rewrite_header(&mut self) -> Result<()> {
        let header = header_bytes();
        let written = self
            .file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| self.file.write_all(&header))
            .and_then(|()| self.file.sync_all());
        match written {
            Ok(()) => {
                self.length = FILE_HEADER_BYTES;
                self.broken = false;
                Ok(())
            }
            Err(error) => {
                self.broken = true;
                Err(io_error(
                    "failed to reset the index log",
                    std::io::Error::new(error.kind(), format!("{}: {error}", self.path.display())),
                ))
            }
        }
    }
}

fn header_bytes() -> [u8; FILE_HEADER_BYTES as usize] {
    let mut header = [0_u8; FILE_HEADER_BYTES as usize];
    header[..8].copy_from_slice(MAGIC);
    header[8..].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|directory| directory.sync_all())
        .map_err(|error| io_error("failed to sync the index directory", error))
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
    fn remaining(&self) -> usize {
        self.bytes.len() - self.offset
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        let end = self
            .offset
            .checked_add(count)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| corrupt("index log record is truncated"))?;
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

    fn names(&mut self) -> Result<Vec<String>> {
        let count = self.u32()? as usize;
        let mut names = Vec::with_capacity(count.min(self.remaining() / 4));
        for _ in 0..count {
            let length = self.u32()? as usize;
            let name = std::str::from_utf8(self.take(length)?)
                .map_err(|_| corrupt("index log owner name is not utf-8"))?;
            names.push(name.to_owned());
        }
        Ok(names)
    }
}
