//! The conformance suite on the Redis index, plus Redis-only behaviour:
//! fixed parameters in the meta key, unreachable Redis, sharded owners.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use copyhound_core::ErrorKind;
use copyhound_core::config::{IndexConfig, IndexLayout};
use copyhound_core::ports::{EntryKind, FingerprintIndex, IndexEntry};

use super::{Factory, conformance_suite};
use crate::testsuite::{PrefixCleanup, redis_url_for_test, unique_prefix};
use crate::{RedisFingerprintIndex, RedisIndexOptions};

/// Makes indexes under fresh prefixes and deletes their keys when dropped.
struct RedisFactory {
    url: String,
    options: RedisIndexOptions,
    scripted: bool,
    cleanups: Mutex<Vec<PrefixCleanup>>,
}

impl RedisFactory {
    fn for_test(test: &str, shards: u32) -> Option<Self> {
        Self::with_layout(test, shards, false)
    }

    fn with_layout(test: &str, shards: u32, compact: bool) -> Option<Self> {
        let url = redis_url_for_test(test)?;
        Some(Self {
            url,
            scripted: false,
            options: RedisIndexOptions {
                shards,
                bucket_bits: if compact { 15 } else { 16 },
                // Few groups, so tests share groups between owners.
                groups: 256,
                compact,
            },
            cleanups: Mutex::new(Vec::new()),
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
            cluster: false,
            prefix,
            max_distance,
            layout: if self.options.compact {
                IndexLayout::Compact
            } else {
                IndexLayout::Exact
            },
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
        RedisFactory::with_layout(module_path!(), 2, true).map(|factory| RedisFactory {
            scripted: true,
            ..factory
        })
    );
}

mod compact_single_shard {
    use super::*;
    conformance_suite!(RedisFactory::with_layout(module_path!(), 1, true));
}

mod compact_three_shards {
    use super::*;
    conformance_suite!(RedisFactory::with_layout(module_path!(), 3, true));
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
