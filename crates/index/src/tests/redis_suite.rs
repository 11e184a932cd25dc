//! The conformance suite on the Redis index, plus Redis-only behaviour:
//! fixed parameters in the meta key, unreachable Redis, sharded owners.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use copyhound_core::ErrorKind;
use copyhound_core::config::IndexConfig;
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry};

use super::{Factory, conformance_suite};
use crate::testsuite::{
    PrefixCleanup, redis_cluster_url_for_test, redis_url_for_test, unique_prefix,
};
use crate::{RedisFingerprintIndex, RedisIndexOptions};

/// Makes indexes under fresh prefixes and deletes their keys when dropped.
struct RedisFactory {
    url: String,
    cluster: bool,
    options: RedisIndexOptions,
    scripted: bool,
    cleanups: Mutex<Vec<PrefixCleanup>>,
}

impl RedisFactory {
    fn for_test(test: &str, shards: u32) -> Option<Self> {
        Self::with_bits(test, shards, 13)
    }

    /// Buckets keyed by `bucket_bits` of each segment: the rest of a segment
    /// is in the filter, where it must match exactly.
    fn with_bits(test: &str, shards: u32, bucket_bits: u32) -> Option<Self> {
        Some(Self::with_bits_at(
            redis_url_for_test(test)?,
            shards,
            bucket_bits,
        ))
    }

    fn with_bits_at(url: String, shards: u32, bucket_bits: u32) -> Self {
        Self {
            url,
            cluster: false,
            scripted: false,
            options: RedisIndexOptions {
                shards,
                bucket_bits,
                // Few groups, so tests share groups between owners.
                groups: 256,
            },
            cleanups: Mutex::new(Vec::new()),
        }
    }

    /// On the test Redis Cluster, owners over `shards` hash tags.
    fn on_cluster(test: &str, shards: u32, bucket_bits: u32) -> Option<Self> {
        let url = redis_cluster_url_for_test(test)?;
        Some(Self {
            url,
            cluster: true,
            ..Self::with_bits_at(String::new(), shards, bucket_bits)
        })
    }

    fn config(&self, max_distance: u32) -> IndexConfig {
        let prefix = unique_prefix("index");
        self.cleanups.lock().unwrap().push(PrefixCleanup {
            url: self.url.clone(),
            prefix: prefix.clone(),
        });
        IndexConfig {
            url: Some(self.url.clone()),
            cluster: self.cluster,
            prefix,
            max_distance,
        }
    }
}

#[async_trait]
impl Factory for RedisFactory {
    async fn index(&self, max_distance: u32) -> Arc<dyn FingerprintIndex> {
        let config = self.config(max_distance);
        let index = RedisFingerprintIndex::connect_with(&self.url, &config, self.options)
            .await
            .unwrap();
        if self.scripted {
            Arc::new(index.with_scripted_writes())
        } else {
            Arc::new(index)
        }
    }
}

mod single_shard {
    use super::*;
    conformance_suite!(RedisFactory::for_test(module_path!(), 1));
}

mod three_shards {
    use super::*;
    conformance_suite!(RedisFactory::for_test(module_path!(), 3));
}

mod scripted_writes {
    use super::*;
    conformance_suite!(
        RedisFactory::for_test(module_path!(), 2).map(|factory| RedisFactory {
            scripted: true,
            ..factory
        })
    );
}

/// Whole segments as keys: the filter is all bits after the segment.
mod whole_segment_keys {
    use super::*;
    conformance_suite!(RedisFactory::with_bits(module_path!(), 1, 16));
}

/// Short keys: six segment bits in the filter must match exactly.
mod short_keys_three_shards {
    use super::*;
    conformance_suite!(RedisFactory::with_bits(module_path!(), 3, 10));
}

/// A real Redis Cluster: shards spread over its primaries, writes through
/// the commit script, queries fanned out per slot.
mod cluster_sixteen_shards {
    use super::*;
    conformance_suite!(RedisFactory::on_cluster(module_path!(), 16, 13));
}

mod cluster_three_shards_short_keys {
    use super::*;
    conformance_suite!(RedisFactory::on_cluster(module_path!(), 3, 10));
}

/// Neighbours whose differing bits all lie in table 0's filter (bits 16..28
/// from the top, after the key at every bucket width tested) are found at
/// exactly their distance: the filter may only drop what is beyond `k`.
#[tokio::test]
async fn neighbours_differing_only_in_the_filter_are_found() {
    let test = "neighbours_differing_only_in_the_filter_are_found";
    for bucket_bits in [10, 13, 16] {
        let Some(factory) = RedisFactory::with_bits(test, 1, bucket_bits) else {
            return;
        };
        let index = factory.index(3).await;
        let stored = [0x0123_4567_89ab_cdef_u64, 0xfedc_ba98_7654_3210, 0];
        let entries: Vec<IndexEntry> = stored
            .iter()
            .enumerate()
            .map(|(n, fingerprint)| IndexEntry {
                owner: format!("p:{n}"),
                kind: EntryKind::Passage,
                ordinal: 0,
                fingerprint: *fingerprint,
            })
            .collect();
        index.insert(&entries).await.unwrap();
        let bits: Vec<u64> = (16..29).map(|bit| 1_u64 << (63 - bit)).collect();
        for (n, fingerprint) in stored.iter().enumerate() {
            for (a, first) in bits.iter().enumerate() {
                for (b, second) in bits.iter().enumerate().skip(a + 1) {
                    for third in bits.iter().skip(b + 1) {
                        for (mask, distance) in [(first ^ second ^ third, 3), (first ^ second, 2)] {
                            let hits = index
                                .query(EntryKind::Passage, fingerprint ^ mask, 3)
                                .await
                                .unwrap();
                            let found: Vec<(&str, u32)> = hits
                                .iter()
                                .map(|hit| (hit.entry.owner.as_str(), hit.distance))
                                .collect();
                            assert_eq!(
                                found,
                                [(format!("p:{n}").as_str(), distance)],
                                "bucket_bits={bucket_bits} mask={mask:x}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// `destroy` empties the index on every primary, meta included: an index of
/// other parameters may then take the prefix.
#[tokio::test]
async fn destroy_deletes_every_key_on_a_cluster() {
    let Some(factory) = RedisFactory::on_cluster("destroy_deletes_every_key_on_a_cluster", 16, 13)
    else {
        return;
    };
    let config = factory.config(3);
    let index = RedisFingerprintIndex::connect_with(&factory.url, &config, factory.options)
        .await
        .unwrap();
    let entries: Vec<IndexEntry> = (0..64_u64)
        .map(|n| IndexEntry {
            owner: format!("p:{n}"),
            kind: EntryKind::Passage,
            ordinal: 0,
            fingerprint: n.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        })
        .collect();
    index.insert(&entries).await.unwrap();
    assert_eq!(index.stats().await.unwrap().entries, 64);
    index.destroy().await.unwrap();
    let other = RedisIndexOptions {
        shards: 3,
        ..factory.options
    };
    let fresh = RedisFingerprintIndex::connect_with(&factory.url, &config, other)
        .await
        .unwrap();
    assert_eq!(fresh.stats().await.unwrap().entries, 0);
    let hits = fresh
        .query(EntryKind::Passage, entries[5].fingerprint, 3)
        .await
        .unwrap();
    assert!(hits.is_empty(), "{hits:?}");
}

#[tokio::test]
async fn mismatched_parameters_are_refused() {
    let Some(factory) = RedisFactory::for_test("mismatched_parameters_are_refused", 1) else {
        return;
    };
    let config = factory.config(3);
    let index = RedisFingerprintIndex::connect_with(&factory.url, &config, factory.options)
        .await
        .unwrap();
    index
        .insert(&[IndexEntry {
            owner: "p:a".into(),
            kind: EntryKind::Document,
            ordinal: 0,
            fingerprint: 1,
        }])
        .await
        .unwrap();
    let again = RedisFingerprintIndex::connect_with(&factory.url, &config, factory.options)
        .await
        .unwrap();
    assert_eq!(
        again.query(EntryKind::Document, 1, 3).await.unwrap().len(),
        1
    );
    let other_distance = IndexConfig {
        max_distance: 4,
        ..config.clone()
    };
    let error = RedisFingerprintIndex::connect_with(&factory.url, &other_distance, factory.options)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(error.message().contains("max_distance=3"), "{error}");
    let other_shards = RedisIndexOptions {
        shards: 2,
        ..factory.options
    };
    let error = RedisFingerprintIndex::connect_with(&factory.url, &config, other_shards)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
}

#[tokio::test]
async fn unreachable_redis_is_retryable() {
    let config = IndexConfig {
        url: Some("redis://127.0.0.1:1".into()),
        ..IndexConfig::default()
    };
    let error = RedisFingerprintIndex::connect(&config).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable);
    assert!(error.is_retryable());
    let bad_url = IndexConfig {
        url: Some("http://nope".into()),
        ..IndexConfig::default()
    };
    assert_eq!(
        RedisFingerprintIndex::connect(&bad_url)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Config
    );
}

/// A Redis server of one test's own, so the test may kill every client of it.
struct OwnRedis {
    port: u16,
    child: std::process::Child,
}

impl OwnRedis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is installed (deploy/dev/services.sh installs it)");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "redis did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Self { port, child }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Inserts while another client keeps killing the index's connections: every
/// failure is retryable, and retrying each batch until it succeeds leaves
/// exactly the inserted entries (no partial or doubled batch), on both write
/// paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_cut_by_killed_connections_converge() {
    use crate::testsuite::{flip_bits, linear_scan, random_entries, seeded, sort_hits};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::Duration;

    if redis_url_for_test("writes_cut_by_killed_connections_converge").is_none() {
        return;
    }
    let redis = OwnRedis::start();
    let url = redis.url();
    let mut rng = seeded(11);
    for scripted in [false, true] {
        let config = IndexConfig {
            url: Some(url.clone()),
            cluster: false,
            prefix: unique_prefix("killed"),
            max_distance: 3,
        };
        let options = RedisIndexOptions {
            groups: 256,
            ..RedisIndexOptions::for_config(&config)
        };
        let index = RedisFingerprintIndex::connect_with(&url, &config, options)
            .await
            .unwrap();
        let index = if scripted {
            index.with_scripted_writes()
        } else {
            index
        };
        let entries = random_entries(&mut rng, EntryKind::Passage, 12_000, 16);

        let stop = Arc::new(AtomicBool::new(false));
        let killed = Arc::new(AtomicU64::new(0));
        let killer = {
            let (stop, killed, url) = (stop.clone(), killed.clone(), url.clone());
            tokio::spawn(async move {
                let client = redis::Client::open(url).unwrap();
                let mut connection = client.get_multiplexed_async_connection().await.unwrap();
                let mut delay = 20;
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    delay = 20 + (delay * 7 + 13) % 60;
                    let count: u64 = redis::cmd("CLIENT")
                        .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
                        .query_async(&mut connection)
                        .await
                        .unwrap();
                    killed.fetch_add(count, Ordering::Relaxed);
                }
            })
        };
        let mut failures = 0;
        for batch in entries.chunks(1_000) {
            loop {
                match index.insert(batch).await {
                    Ok(()) => break,
                    Err(error) => {
                        assert!(error.is_retryable(), "{error}");
                        failures += 1;
                        assert!(failures < 2_000, "no progress: {error}");
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        killer.await.unwrap();
        assert!(
            killed.load(Ordering::Relaxed) > 0,
            "the killer killed nothing"
        );
        eprintln!(
            "scripted={scripted}: {} connections killed, {failures} inserts retried",
            killed.load(Ordering::Relaxed)
        );

        // The connections reconnect on their next command.
        let mut stats = index.stats().await;
        for _ in 0..20 {
            if stats.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            stats = index.stats().await;
        }
        assert_eq!(
            stats.unwrap().entries,
            entries.len() as u64,
            "scripted={scripted}"
        );
        for entry in entries.iter().step_by(40) {
            let query = flip_bits(&mut rng, entry.fingerprint, 2);
            let mut hits = index.query(EntryKind::Passage, query, 3).await.unwrap();
            sort_hits(&mut hits);
            assert_eq!(hits, linear_scan(&entries, EntryKind::Passage, query, 3));
        }
    }
}
