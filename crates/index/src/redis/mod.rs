//! The production index: segment tables in Redis, shared by every worker.
//! See `design.md` for the layout, the write protocol and the cluster story.
//!
//! Each (kind, table, bucket) is one binary string of 5-byte members (a
//! 16-bit filter of the fingerprint, then the owner id), so a query fetches
//! its buckets with one `MGET` and drops most strangers locally; the owners
//! that pass are resolved and verified with a second, pipelined read of their
//! group records, which hold every fingerprint once. Owners are spread over
//! shards by hash, and within a shard over a fixed number of record groups;
//! all keys of a shard share a hash tag.

mod codec;
mod probe;
mod scripts;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt, stream};
use xxhash_rust::xxh3::xxh3_64;

use copyhound_core::config::IndexConfig;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry, IndexHit, IndexStats};
use copyhound_core::{Error, ErrorKind, Result};

use crate::layout::hamming;
use codec::{GroupRecord, Keys, Members, OwnerEntries, kind_byte, view_group};
use copyhound_redis::{Connection, redis_error};
use probe::ProbeLayout;
use scripts::{Geometry, OwnerWrite, Plan};

/// Format version recorded in the meta key.
const FORMAT: u32 = 3;
/// Entries per commit script: bounds how long one script blocks Redis
/// (~0.2 s on the dev machine), while a bulk load still rewrites each bucket
/// about once per script.
const ENTRIES_PER_SCRIPT: usize = 65_536;
/// Owners per commit script.
const OWNERS_PER_SCRIPT: usize = 4_096;
/// Queries per pipeline.
const QUERIES_PER_PIPELINE: usize = 256;
/// Query pipelines in flight at once.
const PIPELINES_IN_FLIGHT: usize = 2;
/// Attempts of an optimistic write before giving up (retryable).
const WRITE_ATTEMPTS: usize = 8;
/// Attempts through `WATCH`/`MULTI` before a write falls back to the commit
/// script (which conflicts only on its own groups, so it cannot starve).
const WATCHED_ATTEMPTS: usize = 3;
/// Keys per `MGET`, `MSET` or `DEL` of a write.
const KEYS_PER_COMMAND: usize = 8_192;

/// Fixed parameters of a Redis index beyond the config: recorded in the meta
/// key at creation and checked on every connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisIndexOptions {
    /// Owner shards (each a hash tag); 1 for a single Redis, more to spread a cluster.
    pub shards: u32,
    /// Bits of a segment used as bucket key (at most the segment length).
    pub bucket_bits: u32,
    /// Owner record groups per shard (a power of two).
    pub groups: u32,
}

impl RedisIndexOptions {
    /// Returns the defaults for a config: 1 shard on a single Redis, 16 on a
    /// cluster; 13-bit buckets; 8192 record groups.
    pub fn for_config(config: &IndexConfig) -> Self {
        Self {
            shards: if config.cluster { 16 } else { 1 },
            bucket_bits: 13,
            groups: 8192,
        }
    }
}

/// The Redis [`FingerprintIndex`].
#[derive(Clone)]
pub struct RedisFingerprintIndex {
    connection: Connection,
    /// A connection of its own for `WATCH`ed writes (single Redis only).
    writer: Option<Arc<tokio::sync::Mutex<Connection>>>,
    keys: Keys,
    layout: ProbeLayout,
    seq_bits: u32,
    options: RedisIndexOptions,
}

impl fmt::Debug for RedisFingerprintIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisFingerprintIndex")
            .field("meta", &self.keys.meta())
            .field("max_distance", &self.layout.max_distance())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl RedisFingerprintIndex {
    /// Connects with the config's URL, prefix, cluster flag and max distance.
    pub async fn connect(config: &IndexConfig) -> Result<Self> {
        let url = config.url.as_deref().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                "index.url is required for the redis index",
            )
        })?;
        Self::connect_with(url, config, RedisIndexOptions::for_config(config)).await
    }

    /// Connects to `url` and records (or checks) the index parameters; a
    /// mismatch with what Redis holds is a `Config` error.
    pub async fn connect_with(
        url: &str,
        config: &IndexConfig,
        options: RedisIndexOptions,
    ) -> Result<Self> {
        let layout = ProbeLayout::new(config.max_distance, options.bucket_bits)?;
        let group_bits = options.groups.trailing_zeros();
        if options.shards == 0
            || !(8..=24).contains(&options.bucket_bits)
            || !options.groups.is_power_of_two()
            || group_bits + 8 > Members::ID_BITS
            || config.prefix.contains(['{', '}'])
        {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "redis index needs shards >= 1, bucket_bits in 8..=24, groups a power of two \
                     up to 2^{} and a prefix without braces",
                    Members::ID_BITS - 8
                ),
            ));
        }
        let connection = Connection::open(url, config.cluster, "index").await?;
        let writer = if connection.is_cluster() {
            None
        } else {
            let writer = Connection::open_single(url, "index").await?;
            Some(Arc::new(tokio::sync::Mutex::new(writer)))
        };
        let index = Self {
            connection,
            writer,
            keys: Keys::new(&config.prefix, options.bucket_bits),
            seq_bits: Members::ID_BITS - group_bits,
            layout,
            options,
        };
        index.check_meta().await?;
        Ok(index)
    }

    /// Writes through the commit script only, as on a cluster (tests use it
    /// to run the conformance suite over that path on a single Redis).
    #[doc(hidden)]
    pub fn with_scripted_writes(mut self) -> Self {
        self.writer = None;
        self
    }

    /// Deletes every key of this index (SCAN of the prefix on every primary,
    /// then UNLINK), meta included.
    pub async fn destroy(&self) -> Result<()> {
        self.connection()
            .delete_prefix(self.keys.prefix())
            .await
            .map(drop)
    }

    fn connection(&self) -> Connection {
        self.connection.clone()
    }

    async fn check_meta(&self) -> Result<()> {
        let wanted = [
            ("format", FORMAT),
            ("max_distance", self.layout.max_distance()),
            ("shards", self.options.shards),
            ("bucket_bits", self.options.bucket_bits),
            ("groups", self.options.groups),
        ];
        let mut pipeline = redis::pipe();
        for (field, value) in wanted {
            pipeline
                .cmd("HSETNX")
                .arg(self.keys.meta())
                .arg(field)
                .arg(value)
                .ignore();
        }
        pipeline.cmd("HGETALL").arg(self.keys.meta());
        let (stored,): (HashMap<String, String>,) = pipeline
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read index meta"))?;
        for (field, value) in wanted {
            let found = stored.get(field).map(String::as_str).unwrap_or("");
            if found != value.to_string() {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "redis index {} was created with {field}={found}, configured {value}: \
                         use another prefix or rebuild the index",
                        self.keys.meta()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Returns (shard, group) of an owner.
    fn place(&self, owner: &str) -> (u32, u32) {
        let hash = xxh3_64(owner.as_bytes());
        (
            (hash % u64::from(self.options.shards)) as u32,
            ((hash >> 32) % u64::from(self.options.groups)) as u32,
        )
    }

    fn geometry(&self) -> Geometry<'_> {
        Geometry {
            layout: &self.layout,
            keys: &self.keys,
            seq_bits: self.seq_bits,
        }
    }

    /// Writes one shard's owners: `target` maps each owner's current entries to the wanted ones.
    async fn write_shard(
        &self,
        shard: u32,
        owners: &[OwnerWrite<'_>],
        target: impl Fn(&str, &OwnerEntries) -> OwnerEntries,
    ) -> Result<()> {
        let mut groups: Vec<u32> = owners.iter().map(|owner| owner.group).collect();
        groups.sort_unstable();
        groups.dedup();
        for attempt in 0..WRITE_ATTEMPTS {
            if let Some(writer) = self.writer.as_ref().filter(|_| attempt < WATCHED_ATTEMPTS) {
                let mut writer = writer.lock().await;
                if self
                    .write_watched(&mut writer, shard, owners, &groups, &target)
                    .await?
                {
                    return Ok(());
                }
                continue;
            }
            let mut records = self
                .read_groups(&mut self.connection(), shard, &groups)
                .await?;
            let plan = scripts::plan(self.geometry(), shard, owners, &mut records, &target)?;
            if plan.is_empty() || self.commit(shard, &plan).await? {
                return Ok(());
            }
        }
        Err(Error::unavailable(
            "index owner records kept changing during the write; retry",
        ))
    }

    /// One optimistic write through `WATCH`/`MULTI`: the group records and
    /// buckets are read natively and the new values computed here, which costs
    /// Redis less than half of the commit script (Lua's reply conversion and
    /// string building dominate there). Only the shard's write counter is
    /// watched (Redis 7.0's `WATCH` is quadratic in the keys one client
    /// watches); every write bumps it. Returns false when another write of the
    /// shard committed in between (nothing was written).
    async fn write_watched(
        &self,
        writer: &mut Connection,
        shard: u32,
        owners: &[OwnerWrite<'_>],
        groups: &[u32],
        target: impl Fn(&str, &OwnerEntries) -> OwnerEntries,
    ) -> Result<bool> {
        let mut watch = redis::pipe();
        watch.cmd("UNWATCH").ignore();
        watch.cmd("WATCH").arg(self.keys.writes(shard)).ignore();
        watch
            .query_async::<()>(writer)
            .await
            .map_err(redis_error("failed to write the index"))?;
        let mut records = self.read_groups(writer, shard, groups).await?;
        let plan = scripts::plan(self.geometry(), shard, owners, &mut records, &target)?;
        if plan.is_empty() {
            redis::cmd("UNWATCH")
                .query_async::<()>(writer)
                .await
                .map_err(redis_error("failed to write the index"))?;
            return Ok(true);
        }
        let bucket_keys: Vec<&[u8]> = plan.buckets.iter().map(|edit| edit.0.as_slice()).collect();
        let current = read_values(writer, &bucket_keys).await?;
        let mut transaction = redis::pipe();
        transaction.atomic();
        for (key, _, record) in &plan.groups {
            transaction
                .cmd("SET")
                .arg(key.as_slice())
                .arg(record)
                .ignore();
        }
        let mut sets = Vec::new();
        let mut deletes = Vec::new();
        for ((key, removes, adds), value) in plan.buckets.iter().zip(current) {
            let value = scripts::edit_bucket(value, removes, adds, Members::WIDTH);
            if value.is_empty() {
                deletes.push(key.as_slice());
            } else {
                sets.push((key.as_slice(), value));
            }
        }
        for chunk in sets.chunks(KEYS_PER_COMMAND) {
            let mut command = redis::cmd("MSET");
            for (key, value) in chunk {
                command.arg(*key).arg(value.as_slice());
            }
            transaction.add_command(command).ignore();
        }
        for chunk in deletes.chunks(KEYS_PER_COMMAND) {
            transaction.cmd("DEL").arg(chunk).ignore();
        }
        transaction
            .cmd("INCR")
            .arg(self.keys.writes(shard))
            .ignore();
        transaction
            .cmd("INCRBY")
            .arg(self.keys.count(shard))
            .arg(plan.count_delta);
        let applied: Option<(i64,)> = transaction
            .query_async(writer)
            .await
            .map_err(redis_error("failed to write the index"))?;
        Ok(applied.is_some())
    }

    /// Reads group records over `connection`: group -> (bytes read, decoded).
    async fn read_groups(
        &self,
        connection: &mut Connection,
        shard: u32,
        groups: &[u32],
    ) -> Result<BTreeMap<u32, (Vec<u8>, GroupRecord)>> {
        let keys: Vec<Vec<u8>> = groups
            .iter()
            .map(|group| self.keys.group(shard, *group))
            .collect();
        let values = read_values(connection, &keys).await?;
        let mut records = BTreeMap::new();
        for (group, value) in groups.iter().zip(values) {
            let bytes = value.unwrap_or_default();
            let record = GroupRecord::decode(&bytes)?;
            records.insert(*group, (bytes, record));
        }
        Ok(records)
    }

    async fn commit(&self, shard: u32, plan: &Plan) -> Result<bool> {
        let mut invocation = scripts::COMMIT.key(self.keys.count(shard));
        invocation
            .key(self.keys.writes(shard))
            .arg(plan.groups.len())
            .arg(plan.count_delta)
            .arg(Members::WIDTH);
        for (key, version, record) in &plan.groups {
            invocation
                .arg(key.as_slice())
                .arg(version.as_slice())
                .arg(record.as_slice());
        }
        for (key, removes, adds) in &plan.buckets {
            invocation
                .arg(key.as_slice())
                .arg(removes.as_slice())
                .arg(adds.as_slice());
        }
        let applied: u32 = invocation
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to write the index"))?;
        Ok(applied == 1)
    }

    /// Splits owners by shard and into script-sized chunks, and writes each.
    async fn write(
        &self,
        owners: Vec<(&str, usize)>,
        target: impl Fn(&str, &OwnerEntries) -> OwnerEntries,
    ) -> Result<()> {
        let mut by_shard: BTreeMap<u32, Vec<(OwnerWrite<'_>, usize)>> = BTreeMap::new();
        for (name, weight) in owners {
            let (shard, group) = self.place(name);
            by_shard
                .entry(shard)
                .or_default()
                .push((OwnerWrite { name, group }, weight));
        }
        for (shard, owners) in by_shard {
            let mut chunk = Vec::new();
            let mut weight = 0;
            for (owner, entries) in owners {
                if !chunk.is_empty()
                    && (weight + entries > ENTRIES_PER_SCRIPT || chunk.len() >= OWNERS_PER_SCRIPT)
                {
                    self.write_shard(shard, &chunk, &target).await?;
                    chunk.clear();
                    weight = 0;
                }
                chunk.push(owner);
                weight += entries;
            }
            if !chunk.is_empty() {
                self.write_shard(shard, &chunk, &target).await?;
            }
        }
        Ok(())
    }

    /// Reads the buckets of `queries` on one shard: per query, the (owner id,
    /// table) pairs whose filters pass, sorted and without repeats.
    async fn candidates(
        &self,
        shard: u32,
        kind: EntryKind,
        queries: &[u64],
        k: u32,
    ) -> Result<Vec<Vec<(u32, u8)>>> {
        let tables = self.layout.tables_for(k);
        let prefix = self.keys.bucket_prefix(shard);
        let mut key = prefix.clone();
        let mut pipeline = redis::pipe();
        for query in queries {
            pipeline.cmd("MGET");
            for table in 0..tables {
                key.truncate(prefix.len());
                self.keys
                    .bucket_suffix(&mut key, kind, table, self.layout.bucket(table, *query));
                pipeline.arg(key.as_slice());
            }
        }
        let replies: Vec<Vec<Option<Vec<u8>>>> = pipeline
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to query the index"))?;
        let limits: Vec<u32> = (0..tables)
            .map(|table| self.layout.filter_limit(table, k))
            .collect();
        let mut results = Vec::with_capacity(queries.len());
        for (query, buckets) in queries.iter().zip(replies) {
            let mut found = Vec::new();
            for (table, value) in buckets.iter().enumerate() {
                let Some(value) = value else {
                    continue;
                };
                let own = self.layout.filter(table, *query);
                for member in value.chunks_exact(Members::WIDTH) {
                    let (filter, owner) = Members::decode(member);
                    if self.layout.may_match(table, own, filter, limits[table]) {
                        found.push((owner, table as u8));
                    }
                }
            }
            found.sort_unstable();
            found.dedup();
            results.push(found);
        }
        Ok(results)
    }

    /// Answers one pipeline's worth of queries (all shards).
    async fn query_chunk(
        &self,
        kind: EntryKind,
        queries: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>> {
        let mut hits: Vec<Vec<IndexHit>> = vec![Vec::new(); queries.len()];
        let geometry = self.geometry();
        for shard in 0..self.options.shards {
            let candidates = self.candidates(shard, kind, queries, max_distance).await?;
            let mut groups: Vec<u32> = candidates
                .iter()
                .flatten()
                .map(|(owner, _)| geometry.split_id(*owner).0)
                .collect();
            if groups.is_empty() {
                continue;
            }
            groups.sort_unstable();
            groups.dedup();
            let keys: Vec<Vec<u8>> = groups
                .iter()
                .map(|group| self.keys.group(shard, *group))
                .collect();
            let records = read_values(&mut self.connection(), &keys).await?;
            let views = records
                .iter()
                .map(|bytes| view_group(bytes.as_deref().unwrap_or_default()).map(|view| view.1))
                .collect::<Result<Vec<_>>>()?;
            let owner = |id: u32| {
                let (group, seq) = geometry.split_id(id);
                let owners = &views[groups.binary_search(&group).ok()?];
                let position = owners.binary_search_by_key(&seq, |owner| owner.seq).ok()?;
                Some(owners[position])
            };
            // The records are the truth: an owner changed between the two
            // reads shows its new entries, and a member whose owner no longer
            // lists a matching fingerprint yields nothing.
            for ((slot, list), query) in hits.iter_mut().zip(candidates).zip(queries) {
                for (owner_id, table) in list {
                    let Some(owner) = owner(owner_id) else {
                        continue;
                    };
                    for (ordinal, fingerprint) in owner.entries(kind_byte(kind)) {
                        if self.layout.reports(
                            usize::from(table),
                            *query,
                            fingerprint,
                            max_distance,
                        ) {
                            slot.push(IndexHit {
                                entry: IndexEntry {
                                    owner: owner.name.to_owned(),
                                    kind,
                                    ordinal,
                                    fingerprint,
                                },
                                distance: hamming(fingerprint, *query),
                            });
                        }
                    }
                }
            }
        }
        Ok(hits)
    }
}

#[async_trait]
impl FingerprintIndex for RedisFingerprintIndex {
    async fn check_connectivity(&self) -> Result<()> {
        redis::cmd("PING")
            .query_async::<String>(&mut self.connection())
            .await
            .map_err(redis_error("index redis does not answer"))?;
        Ok(())
    }

    fn max_distance(&self) -> u32 {
        self.layout.max_distance()
    }

    async fn insert(&self, entries: &[IndexEntry]) -> Result<()> {
        let mut by_owner: BTreeMap<&str, Vec<&IndexEntry>> = BTreeMap::new();
        for entry in entries {
            if entry.owner.len() > usize::from(u16::MAX) {
                return Err(Error::invalid(
                    "index owner keys are limited to 65535 bytes",
                ));
            }
            by_owner
                .entry(entry.owner.as_str())
                .or_default()
                .push(entry);
        }
        let owners = by_owner
            .iter()
            .map(|(name, entries)| (*name, entries.len()))
            .collect();
        let target = |name: &str, current: &OwnerEntries| {
            let mut wanted = current.clone();
            for entry in by_owner.get(name).into_iter().flatten() {
                wanted.insert((kind_byte(entry.kind), entry.ordinal), entry.fingerprint);
            }
            wanted
        };
        self.write(owners, target).await
    }

    async fn remove_owners(&self, owners: &[String]) -> Result<()> {
        let mut names: Vec<&str> = owners.iter().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        // Weighted as 8 entries each: their sizes are known only once read.
        let owners = names.into_iter().map(|name| (name, 8)).collect();
        self.write(owners, |_, _| OwnerEntries::new()).await
    }

    async fn query_batch(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>> {
        self.layout.check_query_distance(max_distance)?;
        // Two pipelines in flight: Redis serves one while this side decodes the other.
        let chunks: Vec<Vec<Vec<IndexHit>>> =
            stream::iter((0..fingerprints.len()).step_by(QUERIES_PER_PIPELINE))
                .map(|start| {
                    let end = (start + QUERIES_PER_PIPELINE).min(fingerprints.len());
                    self.query_chunk(kind, &fingerprints[start..end], max_distance)
                })
                .buffered(PIPELINES_IN_FLIGHT)
                .try_collect()
                .await?;
        Ok(chunks.into_iter().flatten().collect())
    }

    async fn stats(&self) -> Result<IndexStats> {
        // One counter per shard, each in its own slot: one read per shard on
        // a cluster, one pipeline on a single Redis.
        let mut counts: Vec<Option<i64>> = Vec::new();
        let per_pipeline = if self.connection.is_cluster() {
            1
        } else {
            self.options.shards
        };
        let shards: Vec<u32> = (0..self.options.shards).collect();
        for chunk in shards.chunks(per_pipeline as usize) {
            let mut pipeline = redis::pipe();
            for shard in chunk {
                pipeline.cmd("GET").arg(self.keys.count(*shard));
            }
            let read: Vec<Option<i64>> = pipeline
                .query_async(&mut self.connection())
                .await
                .map_err(redis_error("failed to read index stats"))?;
            counts.extend(read);
        }
        let memory_bytes = self.connection().info_sum("memory", "used_memory").await?;
        let entries = counts.into_iter().flatten().sum::<i64>().max(0) as u64;
        Ok(IndexStats {
            entries,
            memory_bytes,
        })
    }
}

/// Reads `keys` (absent: `None`): one pipeline of `MGET`s, so Redis serves a
/// chunk while the previous one is decoded here.
async fn read_values<K: AsRef<[u8]>>(
    writer: &mut Connection,
    keys: &[K],
) -> Result<Vec<Option<Vec<u8>>>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipeline = redis::pipe();
    for chunk in keys.chunks(KEYS_PER_COMMAND) {
        let mut command = redis::cmd("MGET");
        for key in chunk {
            command.arg(key.as_ref());
        }
        pipeline.add_command(command);
    }
    let chunks: Vec<Vec<Option<Vec<u8>>>> = pipeline
        .query_async(writer)
        .await
        .map_err(redis_error("failed to read the index for a write"))?;
    Ok(chunks.into_iter().flatten().collect())
}
