//! The production index: segment tables in Redis, shared by every worker.
//! See `design.md` for the layout, the write protocol and the cluster story.
//!
//! Each (kind, table, bucket) is one binary string of fixed-width members
//! (fingerprint bytes not fixed by the key, then the owner id), so a query
//! fetches its `k + 1` buckets with one `MGET` and verifies distances locally;
//! only hits need a second, pipelined read (the owner records, for names and
//! ordinals). Owners are spread over shards by hash; all keys of a shard share
//! a hash tag.

mod codec;
mod connection;
mod scripts;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use async_trait::async_trait;
use xxhash_rust::xxh3::xxh3_64;

use copyhound_core::config::IndexConfig;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry, IndexHit, IndexStats};
use copyhound_core::{Error, ErrorKind, Result};

use crate::layout::{SegmentLayout, hamming};
use codec::{Keys, MemberLayout, OwnerEntries, decode_record, kind_byte};
use connection::{Connection, redis_error};
use scripts::{OwnerState, Plan};

/// Format version recorded in the meta key.
const FORMAT: u32 = 1;
/// Owners per write script (bounds how long one script blocks Redis).
const OWNERS_PER_SCRIPT: usize = 512;
/// Queries per pipeline.
const QUERIES_PER_PIPELINE: usize = 512;
/// Attempts of an optimistic write before giving up (retryable).
const WRITE_ATTEMPTS: usize = 8;

/// Fixed parameters of a Redis index beyond the config: recorded in the meta
/// key at creation and checked on every connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisIndexOptions {
    /// Owner shards (each a hash tag); 1 for a single Redis, more to spread a cluster.
    pub shards: u32,
    /// Bits of a segment used as bucket key (at most the segment length).
    pub bucket_bits: u32,
}

impl RedisIndexOptions {
    /// Returns the defaults for a config: 1 shard on a single Redis, 16 on a cluster; 16-bit buckets.
    pub fn for_config(config: &IndexConfig) -> Self {
        Self {
            shards: if config.cluster { 16 } else { 1 },
            bucket_bits: 16,
        }
    }
}

/// The Redis [`FingerprintIndex`].
#[derive(Clone)]
pub struct RedisFingerprintIndex {
    connection: Connection,
    keys: Keys,
    layout: SegmentLayout,
    members: MemberLayout,
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
        let layout = SegmentLayout::new(config.max_distance)?;
        if options.shards == 0
            || !(1..=24).contains(&options.bucket_bits)
            || config.prefix.contains(['{', '}'])
        {
            return Err(Error::new(
                ErrorKind::Config,
                "redis index needs shards >= 1, bucket_bits in 1..=24 and a prefix without braces",
            ));
        }
        let connection = Connection::open(url, config.cluster).await?;
        let index = Self {
            connection,
            keys: Keys::new(&config.prefix),
            members: MemberLayout::new(&layout, options.bucket_bits),
            layout,
            options,
        };
        index.check_meta().await?;
        Ok(index)
    }

    /// Deletes every key of this index (SCAN of the prefix, then DEL), meta
    /// included. Single Redis only: on a cluster, flush the prefix per node.
    pub async fn destroy(&self) -> Result<()> {
        if matches!(self.connection, Connection::Cluster(_)) {
            return Err(Error::invalid(
                "destroying a redis cluster index is not supported; delete its prefix per node",
            ));
        }
        let pattern = format!("{}*", self.keys.prefix());
        let mut cursor = 0_u64;
        loop {
            let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(10_000)
                .query_async(&mut self.connection())
                .await
                .map_err(redis_error("failed to list index keys"))?;
            if !keys.is_empty() {
                redis::cmd("UNLINK")
                    .arg(&keys)
                    .query_async::<u64>(&mut self.connection())
                    .await
                    .map_err(redis_error("failed to delete index keys"))?;
            }
            if next == 0 {
                return Ok(());
            }
            cursor = next;
        }
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

    fn shard_of(&self, owner: &str) -> u32 {
        (xxh3_64(owner.as_bytes()) % u64::from(self.options.shards)) as u32
    }

    /// Writes one shard's owners: `target` maps each owner's current entries to the wanted ones.
    async fn write_shard(
        &self,
        shard: u32,
        names: &[String],
        allocate: bool,
        target: impl Fn(&str, &OwnerEntries) -> OwnerEntries,
    ) -> Result<()> {
        for _attempt in 0..WRITE_ATTEMPTS {
            let owners = self.read_owners(shard, names, allocate).await?;
            let plan = scripts::plan(
                &self.layout,
                &self.members,
                &self.keys,
                shard,
                &owners,
                &target,
            )?;
            if plan.is_empty() || self.apply(shard, &plan).await? {
                return Ok(());
            }
        }
        Err(Error::unavailable(
            "index owner records kept changing during the write; retry",
        ))
    }

    async fn read_owners(
        &self,
        shard: u32,
        names: &[String],
        allocate: bool,
    ) -> Result<Vec<OwnerState>> {
        let mut invocation = scripts::OWNERS.key(self.keys.owners(shard));
        invocation
            .key(self.keys.sequence(shard))
            .arg(self.keys.record_prefix(shard))
            .arg(if allocate { "1" } else { "0" });
        for name in names {
            invocation.arg(name);
        }
        let flat: Vec<(u32, Vec<u8>)> = invocation
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read index owners"))?;
        Ok(names
            .iter()
            .zip(flat)
            .map(|(name, (id, record))| OwnerState {
                name: name.clone(),
                id,
                record,
            })
            .collect())
    }

    async fn apply(&self, shard: u32, plan: &Plan) -> Result<bool> {
        let mut invocation = scripts::APPLY.key(self.keys.owners(shard));
        invocation
            .key(self.keys.count(shard))
            .arg(plan.owners.len())
            .arg(plan.count_delta);
        for (key, expected, wanted) in &plan.owners {
            invocation
                .arg(key)
                .arg(expected.as_slice())
                .arg(wanted.as_slice());
        }
        for (key, (width, removes, adds)) in &plan.buckets {
            invocation
                .arg(key.as_slice())
                .arg(*width)
                .arg(removes.as_slice())
                .arg(adds.as_slice());
        }
        let applied: u32 = invocation
            .invoke_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to write the index"))?;
        Ok(applied == 1)
    }

    /// Fetches and verifies the buckets of `queries` on one shard: per query, (owner id, fingerprint, distance).
    async fn candidates(
        &self,
        shard: u32,
        kind: EntryKind,
        queries: &[u64],
        k: u32,
    ) -> Result<Vec<Vec<(u32, u64, u32)>>> {
        let tables = self.layout.tables_for(k);
        let mut pipeline = redis::pipe();
        for query in queries {
            pipeline.cmd("MGET");
            for table in 0..tables {
                let bucket = self
                    .layout
                    .bucket(table, *query, self.members.bucket_bits(table));
                pipeline.arg(self.keys.bucket(shard, kind, table, bucket));
            }
        }
        let replies: Vec<Vec<Option<Vec<u8>>>> = pipeline
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to query the index"))?;
        let mut results = Vec::with_capacity(queries.len());
        for (query, buckets) in queries.iter().zip(replies) {
            let mut found = Vec::new();
            for (table, value) in buckets.iter().enumerate() {
                let Some(value) = value else { continue };
                let bucket = self
                    .layout
                    .bucket(table, *query, self.members.bucket_bits(table));
                let segment = self.layout.segment(table, *query);
                for member in value.chunks_exact(self.members.width(table)) {
                    let (fingerprint, owner) =
                        self.members
                            .decode(table, self.layout.start(table), bucket, member);
                    let distance = hamming(fingerprint, *query);
                    if distance <= k
                        && self.layout.segment(table, fingerprint) == segment
                        && !self.layout.found_earlier(table, *query, fingerprint)
                    {
                        found.push((owner, fingerprint, distance));
                    }
                }
            }
            found.sort_unstable();
            found.dedup();
            results.push(found);
        }
        Ok(results)
    }

    /// Reads the records of `owner_ids` on one shard: id -> (name, entries).
    async fn records(
        &self,
        shard: u32,
        owner_ids: &HashSet<u32>,
    ) -> Result<HashMap<u32, (String, OwnerEntries)>> {
        let ids: Vec<u32> = owner_ids.iter().copied().collect();
        let prefix = self.keys.record_prefix(shard);
        let mut pipeline = redis::pipe();
        for id in &ids {
            pipeline.cmd("GET").arg(format!("{prefix}{id}"));
        }
        let records: Vec<Option<Vec<u8>>> = pipeline
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read index owners"))?;
        let mut decoded = HashMap::with_capacity(ids.len());
        for (id, record) in ids.into_iter().zip(records) {
            decoded.insert(id, decode_record(record.as_deref().unwrap_or_default())?);
        }
        Ok(decoded)
    }
}

/// Returns the kind of a kind byte.
fn kind_of_byte(byte: u8) -> EntryKind {
    match byte {
        0 => EntryKind::Document,
        1 => EntryKind::Passage,
        2 => EntryKind::Dna,
        _ => EntryKind::Anchor,
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
        let mut by_shard: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for owner in by_owner.keys() {
            by_shard
                .entry(self.shard_of(owner))
                .or_default()
                .push((*owner).to_owned());
        }
        let target = |name: &str, current: &OwnerEntries| {
            let mut wanted = current.clone();
            for entry in by_owner.get(name).into_iter().flatten() {
                wanted.insert((kind_byte(entry.kind), entry.ordinal), entry.fingerprint);
            }
            wanted
        };
        for (shard, names) in by_shard {
            for chunk in names.chunks(OWNERS_PER_SCRIPT) {
                self.write_shard(shard, chunk, true, target).await?;
            }
        }
        Ok(())
    }

    async fn remove_owners(&self, owners: &[String]) -> Result<()> {
        let mut by_shard: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for owner in owners {
            by_shard
                .entry(self.shard_of(owner))
                .or_default()
                .push(owner.clone());
        }
        for (shard, names) in by_shard {
            for chunk in names.chunks(OWNERS_PER_SCRIPT) {
                self.write_shard(shard, chunk, false, |_, _| OwnerEntries::new())
                    .await?;
            }
        }
        Ok(())
    }

    async fn query_batch(
        &self,
        kind: EntryKind,
        fingerprints: &[u64],
        max_distance: u32,
    ) -> Result<Vec<Vec<IndexHit>>> {
        self.layout.check_query_distance(max_distance)?;
        let mut results = Vec::with_capacity(fingerprints.len());
        for queries in fingerprints.chunks(QUERIES_PER_PIPELINE) {
            let mut hits: Vec<Vec<IndexHit>> = vec![Vec::new(); queries.len()];
            for shard in 0..self.options.shards {
                let candidates = self.candidates(shard, kind, queries, max_distance).await?;
                let owner_ids: HashSet<u32> = candidates
                    .iter()
                    .flatten()
                    .map(|candidate| candidate.0)
                    .collect();
                if owner_ids.is_empty() {
                    continue;
                }
                let records = self.records(shard, &owner_ids).await?;
                for (slot, list) in hits.iter_mut().zip(candidates) {
                    for (owner_id, fingerprint, distance) in list {
                        // An owner changed between the two reads shows its new state.
                        let Some((owner, entries)) = records.get(&owner_id) else {
                            continue;
                        };
                        let matching = entries.iter().filter(|((kind_of, _), stored)| {
                            *kind_of == kind_byte(kind) && **stored == fingerprint
                        });
                        for ((_, ordinal), _) in matching {
                            let entry = IndexEntry {
                                owner: owner.clone(),
                                kind,
                                ordinal: *ordinal,
                                fingerprint,
                            };
                            slot.push(IndexHit { entry, distance });
                        }
                    }
                }
            }
            results.extend(hits);
        }
        Ok(results)
    }

    async fn stats(&self) -> Result<IndexStats> {
        let mut pipeline = redis::pipe();
        for shard in 0..self.options.shards {
            pipeline.cmd("GET").arg(self.keys.count(shard));
        }
        let counts: Vec<Option<i64>> = pipeline
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read index stats"))?;
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut self.connection())
            .await
            .map_err(redis_error("failed to read redis memory"))?;
        let memory_bytes = info
            .lines()
            .find_map(|line| line.strip_prefix("used_memory:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        let entries = counts.into_iter().flatten().sum::<i64>().max(0) as u64;
        Ok(IndexStats {
            entries,
            memory_bytes,
        })
    }
}
