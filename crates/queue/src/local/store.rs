//! The redb side of the embedded queue: every operation is one write
//! transaction, so a crash leaves either all or none of it, and the five tables
//! below always agree. Writes go to the database's one writer, which commits
//! the operations waiting together (`copyhound_redb`); reads block, so callers
//! run them on the blocking pool. After an I/O failure (a full disk) the
//! writer reopens the file, and writes answer `Unavailable` until one commits
//! again (`copyhound_redb::SharedDb`).

use std::path::Path;
use std::sync::Arc;

use redb::{
    ReadableDatabase, ReadableTable, ReadableTableMetadata, Table, TableDefinition,
    WriteTransaction,
};
use serde::{Deserialize, Serialize};

use copyhound_core::ports::QueueStats;
use copyhound_core::stages::Stage;
use copyhound_core::{Error, ErrorKind, Result};
use copyhound_redb::{DbHealth, GroupWriter, Opener, SharedDb};

use crate::codec::{Delivery, now_ms};

/// Entries waiting for delivery, by sequence number (FIFO).
const READY: TableDefinition<'static, u64, &'static [u8]> = TableDefinition::new("ready");
/// Delivered, not yet acknowledged, by sequence number.
const IN_FLIGHT: TableDefinition<'static, u64, &'static [u8]> = TableDefinition::new("in_flight");
/// Failed entries waiting for their retry time, by (retry-at ms, sequence number).
const RETRY: TableDefinition<'static, (u64, u64), &'static [u8]> = TableDefinition::new("retry");
/// Dead letters, by sequence number (oldest first).
const DEAD: TableDefinition<'static, u64, &'static [u8]> = TableDefinition::new("dead");
/// Counters.
const META: TableDefinition<'static, &'static str, u64> = TableDefinition::new("meta");
const NEXT_SEQ: &str = "next_seq";

/// A queued task as stored in `ready`, `in_flight` and `retry`.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    /// Format of this record; only 1 exists.
    version: u32,
    /// The task, encoded by `codec::encode_task`.
    task: String,
    /// Deliveries made so far.
    attempts: u32,
    /// The error of the last failed delivery.
    last_error: Option<String>,
    /// When an in-flight delivery becomes visible again (ms since epoch).
    deadline_ms: u64,
}

impl Entry {
    fn new(task: String) -> Self {
        Self {
            version: 1,
            task,
            attempts: 0,
            last_error: None,
            deadline_ms: 0,
        }
    }
}

/// A dead-lettered task as stored in `dead`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct DeadEntry {
    /// Format of this record; only 1 exists.
    pub version: u32,
    /// The task, encoded.
    pub task: String,
    /// Deliveries made.
    pub attempts: u32,
    /// Why it died.
    pub last_error: String,
    /// When it died (ms since epoch).
    pub dead_at_ms: u64,
}

/// One delivery made by [`Store::receive`].
#[derive(Debug)]
pub(crate) struct Delivered {
    pub delivery: Delivery,
    pub task: String,
    pub attempt: u32,
}

/// The queue file and its rules.
#[derive(Debug)]
pub(crate) struct Store {
    database: Arc<SharedDb>,
    writer: GroupWriter,
    max_attempts: u32,
    retry_schedule_ms: Arc<[u64]>,
}

impl Store {
    /// Opens (or creates) `queue.redb` in `dir`. Deliveries left in flight by a
    /// previous process become visible at once: the file lock guarantees that
    /// process is gone.
    pub fn open(dir: &Path, max_attempts: u32, retry_schedule_ms: Vec<u64>) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|error| {
            Error::with_source(
                ErrorKind::Unavailable,
                format!("failed to create queue dir {}", dir.display()),
                error,
            )
        })?;
        let path = dir.join("queue.redb");
        let file = path.clone();
        Self::open_on(
            &path,
            Box::new(move || redb::Database::create(&file)),
            max_attempts,
            retry_schedule_ms,
        )
    }

    /// Opens the queue file at `path` through `open`, which opens it again
    /// after an I/O failure (tests: a disk that fills on demand).
    pub fn open_on(
        path: &Path,
        open: Opener,
        max_attempts: u32,
        retry_schedule_ms: Vec<u64>,
    ) -> Result<Self> {
        let database = SharedDb::open_with("queue", path, open).map_err(|error| match error {
            redb::DatabaseError::DatabaseAlreadyOpen => Error::unavailable(format!(
                "queue file {} is open in another process or queue instance",
                path.display()
            )),
            other => Error::with_source(
                ErrorKind::Unavailable,
                format!("failed to open queue file {}", path.display()),
                other,
            ),
        })?;
        let writer = GroupWriter::start(Arc::clone(&database), storage, Stage::Queue)?;
        let store = Self {
            database,
            writer,
            max_attempts: max_attempts.max(1),
            retry_schedule_ms: retry_schedule_ms.into(),
        };
        // Blocking: the caller opens the queue on the blocking pool.
        store
            .writer
            .write_blocking(|txn| Tables::open(txn)?.expire_all_in_flight())?;
        Ok(store)
    }

    /// Returns whether writes commit, or why they fail (a full disk).
    pub fn health(&self) -> DbHealth {
        self.database.health()
    }

    /// Appends tasks (already encoded) to the ready list.
    pub async fn enqueue(&self, tasks: Vec<String>) -> Result<()> {
        self.write(move |tables| {
            for task in &tasks {
                let seq = tables.next_seq()?;
                tables
                    .ready
                    .insert(seq, encode(&Entry::new(task.clone()))?.as_slice())
                    .map_err(storage)?;
            }
            Ok(())
        })
        .await
    }

    /// Promotes due retries, re-delivers expired deliveries, then delivers ready ones.
    pub async fn receive(&self, max: usize, visibility_ms: u64) -> Result<Vec<Delivered>> {
        let now = now_ms();
        let max_attempts = self.max_attempts;
        self.write(move |tables| {
            tables.promote_due_retries(now)?;
            let mut delivered = tables.reclaim_expired(now, max, visibility_ms, max_attempts)?;
            while delivered.len() < max {
                let Some((seq, entry)) = pop_first(&mut tables.ready)? else {
                    break;
                };
                delivered.push(tables.deliver(seq, entry, now + visibility_ms)?);
            }
            Ok(delivered)
        })
        .await
    }

    /// Removes deliveries; unknown ones are ignored. Lazily durable: an
    /// acknowledgement lost in a crash only delivers its task again.
    pub async fn acknowledge(&self, deliveries: Vec<Delivery>) -> Result<()> {
        self.write_lazy(move |tables| {
            for delivery in &deliveries {
                tables
                    .in_flight
                    .remove(parse_seq(delivery)?)
                    .map_err(storage)?;
            }
            Ok(())
        })
        .await
    }

    /// Schedules a retry or dead-letters; returns false for a stale delivery.
    pub async fn fail(&self, delivery: Delivery, error: String) -> Result<bool> {
        let now = now_ms();
        let max_attempts = self.max_attempts;
        let schedule = Arc::clone(&self.retry_schedule_ms);
        self.write(move |tables| {
            let seq = parse_seq(&delivery)?;
            let Some(mut entry) = held_entry(&tables.in_flight, seq, &delivery)? else {
                return Ok(false);
            };
            tables.in_flight.remove(seq).map_err(storage)?;
            if entry.attempts >= max_attempts {
                tables.bury(entry, error.clone(), now)?;
                return Ok(true);
            }
            let index = usize::try_from(entry.attempts.saturating_sub(1)).unwrap_or(usize::MAX);
            let delay_ms = schedule
                .get(index)
                .or(schedule.last())
                .copied()
                .unwrap_or(0);
            entry.last_error = Some(error.clone());
            entry.deadline_ms = 0;
            tables
                .retry
                .insert((now + delay_ms, seq), encode(&entry)?.as_slice())
                .map_err(storage)?;
            Ok(true)
        })
        .await
    }

    /// Puts a held delivery back for `delay_ms` without counting the attempt;
    /// returns false for a stale delivery.
    pub async fn defer(&self, delivery: Delivery, delay_ms: u64) -> Result<bool> {
        let now = now_ms();
        self.write(move |tables| {
            let seq = parse_seq(&delivery)?;
            let Some(mut entry) = held_entry(&tables.in_flight, seq, &delivery)? else {
                return Ok(false);
            };
            tables.in_flight.remove(seq).map_err(storage)?;
            entry.attempts = entry.attempts.saturating_sub(1);
            entry.deadline_ms = 0;
            tables
                .retry
                .insert(
                    (now.saturating_add(delay_ms), seq),
                    encode(&entry)?.as_slice(),
                )
                .map_err(storage)?;
            Ok(true)
        })
        .await
    }

    /// Pushes a held delivery's deadline; returns false for a stale delivery.
    pub async fn extend(&self, delivery: Delivery, visibility_ms: u64) -> Result<bool> {
        let now = now_ms();
        self.write(move |tables| {
            let seq = parse_seq(&delivery)?;
            let Some(mut entry) = held_entry(&tables.in_flight, seq, &delivery)? else {
                return Ok(false);
            };
            entry.deadline_ms = now + visibility_ms;
            tables
                .in_flight
                .insert(seq, encode(&entry)?.as_slice())
                .map_err(storage)?;
            Ok(true)
        })
        .await
    }

    /// Returns the table sizes.
    pub fn stats(&self) -> Result<QueueStats> {
        let database = self.database.get()?;
        let txn = database.begin_read().map_err(storage)?;
        let len = |definition: TableDefinition<'static, u64, &'static [u8]>| -> Result<u64> {
            txn.open_table(definition)
                .map_err(storage)?
                .len()
                .map_err(storage)
        };
        let (ready, in_flight, dead) = (len(READY)?, len(IN_FLIGHT)?, len(DEAD)?);
        let retrying = txn
            .open_table(RETRY)
            .map_err(storage)?
            .len()
            .map_err(storage)?;
        Ok(QueueStats {
            depth: ready + retrying,
            in_flight,
            retrying,
            dead,
        })
    }

    /// Returns up to `limit` tasks waiting for delivery, oldest first, without
    /// delivering them.
    pub fn ready(&self, limit: usize) -> Result<Vec<String>> {
        let database = self.database.get()?;
        let txn = database.begin_read().map_err(storage)?;
        let ready = txn.open_table(READY).map_err(storage)?;
        let mut out = Vec::new();
        for item in ready.iter().map_err(storage)?.take(limit) {
            let (_, value) = item.map_err(storage)?;
            let entry: Entry = decode(value.value())?;
            out.push(entry.task);
        }
        Ok(out)
    }

    /// Returns up to `limit` dead letters, oldest first.
    pub fn dead_letters(&self, limit: usize) -> Result<Vec<DeadEntry>> {
        let database = self.database.get()?;
        let txn = database.begin_read().map_err(storage)?;
        let dead = txn.open_table(DEAD).map_err(storage)?;
        let mut out = Vec::new();
        for item in dead.iter().map_err(storage)?.take(limit) {
            let (_, value) = item.map_err(storage)?;
            out.push(decode(value.value())?);
        }
        Ok(out)
    }

    /// Moves up to `limit` dead letters back to the ready list, attempts reset.
    pub async fn retry_dead(&self, limit: usize) -> Result<u64> {
        self.write(move |tables| {
            let mut moved = 0;
            while moved < limit {
                let Some((_, dead)) = pop_first::<DeadEntry>(&mut tables.dead)? else {
                    break;
                };
                let seq = tables.next_seq()?;
                tables
                    .ready
                    .insert(seq, encode(&Entry::new(dead.task))?.as_slice())
                    .map_err(storage)?;
                moved += 1;
            }
            Ok(u64::try_from(moved).unwrap_or(u64::MAX))
        })
        .await
    }

    /// Runs `operation` on the tables in one write transaction, committed
    /// durably with the operations waiting beside it; it may run again.
    async fn write<T: Send + 'static>(
        &self,
        operation: impl Fn(&mut Tables<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.writer
            .write(move |txn| operation(&mut Tables::open(txn)?))
            .await
    }

    /// [`Self::write`] whose loss in a crash is harmless (see `GroupWriter::write_lazy`).
    async fn write_lazy<T: Send + 'static>(
        &self,
        operation: impl Fn(&mut Tables<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.writer
            .write_lazy(move |txn| operation(&mut Tables::open(txn)?))
            .await
    }
}

/// The tables of one write transaction.
struct Tables<'txn> {
    ready: Table<'txn, u64, &'static [u8]>,
    in_flight: Table<'txn, u64, &'static [u8]>,
    retry: Table<'txn, (u64, u64), &'static [u8]>,
    dead: Table<'txn, u64, &'static [u8]>,
    meta: Table<'txn, &'static str, u64>,
}

impl<'txn> Tables<'txn> {
    fn open(txn: &'txn WriteTransaction) -> Result<Self> {
        Ok(Self {
            ready: txn.open_table(READY).map_err(storage)?,
            in_flight: txn.open_table(IN_FLIGHT).map_err(storage)?,
            retry: txn.open_table(RETRY).map_err(storage)?,
            dead: txn.open_table(DEAD).map_err(storage)?,
            meta: txn.open_table(META).map_err(storage)?,
        })
    }

    fn next_seq(&mut self) -> Result<u64> {
        let seq = self
            .meta
            .get(NEXT_SEQ)
            .map_err(storage)?
            .map(|guard| guard.value())
            .unwrap_or(1);
        self.meta.insert(NEXT_SEQ, seq + 1).map_err(storage)?;
        Ok(seq)
    }

    fn expire_all_in_flight(&mut self) -> Result<()> {
        let mut held = Vec::new();
        for item in self.in_flight.iter().map_err(storage)? {
            let (seq, value) = item.map_err(storage)?;
            held.push((seq.value(), decode::<Entry>(value.value())?));
        }
        for (seq, mut entry) in held {
            entry.deadline_ms = 0;
            self.in_flight
                .insert(seq, encode(&entry)?.as_slice())
                .map_err(storage)?;
        }
        Ok(())
    }

    fn promote_due_retries(&mut self, now: u64) -> Result<()> {
        loop {
            let due = match self.retry.first().map_err(storage)? {
                Some((key, _)) => key.value().0 <= now,
                None => false,
            };
            if !due {
                return Ok(());
            }
            let Some((_, value)) = self.retry.pop_first().map_err(storage)? else {
                return Ok(());
            };
            let entry: Entry = decode(value.value())?;
            drop(value);
            let seq = self.next_seq()?;
            self.ready
                .insert(seq, encode(&entry)?.as_slice())
                .map_err(storage)?;
        }
    }

    fn reclaim_expired(
        &mut self,
        now: u64,
        max: usize,
        visibility_ms: u64,
        max_attempts: u32,
    ) -> Result<Vec<Delivered>> {
        let mut expired = Vec::new();
        for item in self.in_flight.iter().map_err(storage)? {
            let (seq, value) = item.map_err(storage)?;
            let entry: Entry = decode(value.value())?;
            if entry.deadline_ms <= now {
                expired.push((seq.value(), entry));
            }
            if expired.len() >= max {
                break;
            }
        }
        let mut delivered = Vec::new();
        for (seq, entry) in expired {
            if entry.attempts >= max_attempts {
                self.in_flight.remove(seq).map_err(storage)?;
                let reason = format!("visibility timeout expired on delivery {}", entry.attempts);
                self.bury(entry, reason, now)?;
                continue;
            }
            delivered.push(self.deliver(seq, entry, now + visibility_ms)?);
        }
        Ok(delivered)
    }

    fn deliver(&mut self, seq: u64, mut entry: Entry, deadline_ms: u64) -> Result<Delivered> {
        entry.attempts += 1;
        entry.deadline_ms = deadline_ms;
        self.in_flight
            .insert(seq, encode(&entry)?.as_slice())
            .map_err(storage)?;
        let delivery = Delivery {
            entry: seq.to_string(),
            delivery: u64::from(entry.attempts),
        };
        Ok(Delivered {
            delivery,
            attempt: entry.attempts,
            task: entry.task,
        })
    }

    fn bury(&mut self, entry: Entry, last_error: String, now: u64) -> Result<()> {
        let seq = self.next_seq()?;
        let dead = DeadEntry {
            version: 1,
            task: entry.task,
            attempts: entry.attempts,
            last_error,
            dead_at_ms: now,
        };
        self.dead
            .insert(seq, encode(&dead)?.as_slice())
            .map_err(storage)?;
        Ok(())
    }
}

fn pop_first<T: for<'de> Deserialize<'de>>(
    table: &mut Table<'_, u64, &'static [u8]>,
) -> Result<Option<(u64, T)>> {
    let Some((key, value)) = table.pop_first().map_err(storage)? else {
        return Ok(None);
    };
    Ok(Some((key.value(), decode(value.value())?)))
}

/// Returns the in-flight entry if `delivery` is still its current delivery.
fn held_entry(
    in_flight: &Table<'_, u64, &'static [u8]>,
    seq: u64,
    delivery: &Delivery,
) -> Result<Option<Entry>> {
    let Some(value) = in_flight.get(seq).map_err(storage)? else {
        return Ok(None);
    };
    let entry: Entry = decode(value.value())?;
    Ok((u64::from(entry.attempts) == delivery.delivery).then_some(entry))
}

fn parse_seq(delivery: &Delivery) -> Result<u64> {
    delivery.entry.parse().map_err(|_| {
        Error::invalid(format!(
            "ack id entry `{}` is not a local queue entry",
            delivery.entry
        ))
    })
}

fn encode<T: Serialize>(record: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(record).map_err(|error| {
        Error::with_source(ErrorKind::Internal, "failed to encode queue record", error)
    })
}

fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|error| {
        Error::with_source(
            ErrorKind::Corrupt,
            "stored queue record cannot be decoded",
            error,
        )
    })
}

/// Translates every redb error, once: the file is the backend, so IO trouble is
/// `Unavailable` (retryable) like a Redis outage.
fn storage(error: impl Into<redb::Error>) -> Error {
    let error: redb::Error = error.into();
    Error::with_source(ErrorKind::Unavailable, "local queue storage failed", error)
}
