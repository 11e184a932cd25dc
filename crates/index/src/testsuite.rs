//! Helpers for tests of this crate and of crates that use it: finding the test
//! Redis, unique key prefixes and their clean-up, seeded fingerprints with
//! planted neighbours, and a linear-scan oracle.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use copyhound_core::ports::{EntryKind, IndexEntry, IndexHit};
use copyhound_core::test_services;

use crate::layout::hamming;

/// Returns the test Redis URL (see [`copyhound_core::test_services`]).
pub fn redis_url_for_test(test: &str) -> Option<String> {
    test_services::service_url(test_services::REDIS_URL, test)
}

/// Returns a Redis key prefix no other test run uses.
pub fn unique_prefix(component: &str) -> String {
    format!(
        "copyhound:test:{component}:{:016x}:",
        rand::rng().next_u64()
    )
}

/// Returns the test Redis Cluster URL (one node), or `None` after a skip note.
pub fn redis_cluster_url_for_test(test: &str) -> Option<String> {
    test_services::service_url(test_services::REDIS_CLUSTER_URL, test)
}

/// Deletes every key under `prefix` (SCAN + DEL on every primary of a cluster,
/// or on the one server) with blocking connections; errors are printed, not
/// raised, so it can run from `Drop`.
#[cfg(feature = "redis")]
pub fn delete_prefix(url: &str, prefix: &str) {
    let deleted = primaries(url).and_then(|nodes| {
        nodes
            .iter()
            .try_for_each(|node| delete_prefix_on(node, prefix))
    });
    if let Err(error) = deleted {
        eprintln!("failed to delete test keys under {prefix:?}: {error}");
    }
}

/// The URLs of the primaries behind `url`: itself unless it is a cluster node.
#[cfg(feature = "redis")]
fn primaries(url: &str) -> redis::RedisResult<Vec<String>> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    let info: String = redis::cmd("INFO").arg("cluster").query(&mut connection)?;
    if !copyhound_redis::cluster_enabled(&info) {
        return Ok(vec![url.to_owned()]);
    }
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut connection)?;
    Ok(copyhound_redis::parse_primaries(&nodes)
        .into_iter()
        .map(|(host, port)| format!("redis://{host}:{port}"))
        .collect())
}

/// SCAN + DEL of `prefix` on one server, one key per `DEL` (keys of one
/// cluster node may sit in different slots).
#[cfg(feature = "redis")]
fn delete_prefix_on(url: &str, prefix: &str) -> redis::RedisResult<()> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    let pattern = format!("{prefix}*");
    let mut cursor = 0_u64;
    loop {
        let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query(&mut connection)?;
        if !keys.is_empty() {
            let mut pipeline = redis::pipe();
            for key in &keys {
                pipeline.cmd("DEL").arg(key).ignore();
            }
            pipeline.query::<()>(&mut connection)?;
        }
        if next == 0 {
            return Ok(());
        }
        cursor = next;
    }
}

/// Deletes the keys under a prefix when dropped, even when the test panicked.
#[cfg(feature = "redis")]
#[derive(Debug)]
pub struct PrefixCleanup {
    /// The Redis URL.
    pub url: String,
    /// The prefix to delete.
    pub prefix: String,
}

#[cfg(feature = "redis")]
impl Drop for PrefixCleanup {
    fn drop(&mut self) {
        delete_prefix(&self.url, &self.prefix);
    }
}

/// Returns a seeded generator.
pub fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Returns `fingerprint` with exactly `distance` distinct bits flipped.
pub fn flip_bits(rng: &mut impl Rng, fingerprint: u64, distance: u32) -> u64 {
    let mut flipped = fingerprint;
    while hamming(flipped, fingerprint) < distance {
        flipped ^= 1 << rng.random_range(0..64);
        if hamming(flipped, fingerprint) > distance {
            flipped = fingerprint;
        }
    }
    flipped
}

/// Returns `count` entries of `kind` with random fingerprints; `per_owner`
/// consecutive entries share an owner `o<n>` and get ordinals 0, 1, ...
pub fn random_entries(
    rng: &mut impl Rng,
    kind: EntryKind,
    count: usize,
    per_owner: usize,
) -> Vec<IndexEntry> {
    let per_owner = per_owner.max(1);
    (0..count)
        .map(|index| IndexEntry {
            owner: format!("p:o{:08}", index / per_owner),
            kind,
            ordinal: (index % per_owner) as u32,
            fingerprint: rng.next_u64(),
        })
        .collect()
}

/// Returns the hits of a linear scan: the oracle both indexes must agree with.
pub fn linear_scan(
    entries: &[IndexEntry],
    kind: EntryKind,
    query: u64,
    max_distance: u32,
) -> Vec<IndexHit> {
    let mut hits: Vec<IndexHit> = entries
        .iter()
        .filter(|entry| entry.kind == kind)
        .filter_map(|entry| {
            let distance = hamming(entry.fingerprint, query);
            (distance <= max_distance).then(|| IndexHit {
                entry: entry.clone(),
                distance,
            })
        })
        .collect();
    sort_hits(&mut hits);
    hits
}

/// Sorts hits by (owner, ordinal) so results compare regardless of order.
pub fn sort_hits(hits: &mut [IndexHit]) {
    hits.sort_by(|left, right| {
        (&left.entry.owner, left.entry.ordinal, left.distance).cmp(&(
            &right.entry.owner,
            right.entry.ordinal,
            right.distance,
        ))
    });
}
