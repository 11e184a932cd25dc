//! Resolves the configuration into concrete backends: the only place that
//! names them. No URL means the embedded default under `data_dir`; the scheme of
//! a URL names the engine (`mongodb://`, `mongodb+srv://` for the stores,
//! `redis://`, `rediss://` for the index and the queue).

use std::sync::Arc;

use anyhow::Context;
use copyhound_core::config::{Backend, Config, mask_url};
use copyhound_core::ports::{FingerprintIndex, Ports, TaskQueue};
use copyhound_index::{MemoryFingerprintIndex, RedisFingerprintIndex};
use copyhound_queue::{LocalTaskQueue, RedisTaskQueue};
use copyhound_store::{StoreLimits, Stores};

/// Opens the stores `store.url` names, or the embedded store under
/// `data_dir/store`. Applies no migration ([`Backends::open`] does, when
/// `store.migrate_on_start`).
pub async fn open_stores(config: &Config) -> anyhow::Result<Stores> {
    let limits = StoreLimits::from_config(&config.store);
    let stores = match config.store_backend() {
        Backend::Embedded(dir) => Stores::local_with(&dir, limits)
            .with_context(|| format!("cannot open the store in {}", dir.display()))?,
        Backend::Remote(url)
            if url.starts_with("mongodb://") || url.starts_with("mongodb+srv://") =>
        {
            let stores = Stores::mongo_with(&url, &config.store.database, limits)
                .await
                .with_context(|| format!("cannot open the MongoDB store at {}", mask_url(&url)))?;
            // The driver connects lazily; ask now, so a server that is not
            // there is one short sentence, not a topology dump later.
            let answer =
                tokio::time::timeout(STORE_ANSWER_WITHIN, stores.check_connectivity()).await;
            let reason = match answer {
                Ok(Ok(())) => None,
                Ok(Err(error)) => Some(first_line(&error.to_string())),
                Err(_) => Some(format!(
                    "no answer within {} s",
                    STORE_ANSWER_WITHIN.as_secs()
                )),
            };
            if let Some(reason) = reason {
                anyhow::bail!(
                    "MongoDB at {} does not answer ({reason}); is it running and reachable? \
                     `copyhound health` checks every backend",
                    mask_url(&url)
                );
            }
            stores
        }
        Backend::Remote(url) => anyhow::bail!(
            "store.url {:?}: unknown scheme (mongodb:// or mongodb+srv://)",
            mask_url(&url)
        ),
    };
    Ok(stores)
}

/// Opens the index `index.url` names, or the in-memory index whose log and
/// snapshot live under `data_dir/index`. The second value is the in-memory
/// index itself when embedded (for its snapshot).
pub async fn open_index(
    config: &Config,
) -> anyhow::Result<(
    Arc<dyn FingerprintIndex>,
    Option<Arc<MemoryFingerprintIndex>>,
)> {
    match config.index_backend() {
        Backend::Embedded(dir) => {
            let memory = Arc::new(
                MemoryFingerprintIndex::open(&dir, config.index.max_distance)
                    .await
                    .with_context(|| format!("cannot open the index in {}", dir.display()))?,
            );
            Ok((memory.clone(), Some(memory)))
        }
        Backend::Remote(url) => {
            check_redis_scheme("index.url", &url)?;
            let redis = RedisFingerprintIndex::connect(&config.index)
                .await
                .context("cannot open the Redis index")?;
            Ok((Arc::new(redis), None))
        }
    }
}

/// Opens the queue `queue.url` names, or the embedded queue under `data_dir/queue`.
pub async fn open_queue(config: &Config) -> anyhow::Result<Arc<dyn TaskQueue>> {
    match config.queue_backend() {
        Backend::Embedded(dir) => Ok(Arc::new(
            LocalTaskQueue::open(&dir, &config.queue)
                .await
                .with_context(|| format!("cannot open the task queue in {}", dir.display()))?,
        )),
        Backend::Remote(url) => {
            check_redis_scheme("queue.url", &url)?;
            Ok(Arc::new(
                RedisTaskQueue::connect(&url, &config.queue)
                    .await
                    .context("cannot open the Redis task queue")?,
            ))
        }
    }
}

/// How long opening the stores waits for MongoDB to answer.
const STORE_ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// The start of a driver error, cut before its diagnostics dump.
fn first_line(message: &str) -> String {
    let head = message
        .split([';', '\n'])
        .next()
        .unwrap_or(message)
        .split(". Topology")
        .next()
        .unwrap_or(message);
    let mut cut: String = head.chars().take(160).collect();
    if head.chars().count() > 160 {
        cut.push('…');
    }
    cut
}

fn check_redis_scheme(key: &str, url: &str) -> anyhow::Result<()> {
    if url.starts_with("redis://") || url.starts_with("rediss://") {
        return Ok(());
    }
    anyhow::bail!(
        "{key} {:?}: unknown scheme (redis:// or rediss://)",
        mask_url(url)
    )
}

/// Every backend of a node.
#[derive(Debug, Clone)]
pub struct Backends {
    /// The stores.
    pub stores: Stores,
    /// The segment index.
    pub index: Arc<dyn FingerprintIndex>,
    /// The in-memory index when embedded: durable through its write-ahead
    /// log; a snapshot on exit only makes the next start faster.
    pub memory_index: Option<Arc<MemoryFingerprintIndex>>,
    /// The task queue.
    pub queue: Arc<dyn TaskQueue>,
    /// The lock on the embedded data directory, held while any embedded
    /// backend is open.
    pub data_lock: Option<Arc<DataDirLock>>,
}

impl Backends {
    /// Opens the backends the configuration names, applying migrations if configured.
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!("cannot create data directory {}", config.data_dir.display())
        })?;
        let data_lock = if config.uses_embedded_backends() {
            Some(Arc::new(DataDirLock::acquire(&config.data_dir)?))
        } else {
            None
        };
        let stores = open_stores(config).await?;
        if config.store.migrate_on_start {
            copyhound_store::migrate_up(&stores)
                .await
                .context("cannot apply the store migrations")?;
        }
        let (index, memory_index) = open_index(config).await?;
        let queue = open_queue(config).await?;
        Ok(Self {
            stores,
            index,
            memory_index,
            queue,
            data_lock,
        })
    }

    /// Returns the ports every stage takes.
    pub fn ports(&self) -> Ports {
        self.stores.ports(self.index.clone(), self.queue.clone())
    }

    /// Re-enqueues what a killed process may have left without its task (works
    /// whose chapters are still pending: the registration outbox). Every node
    /// that runs workers or serves the API calls it once at start.
    pub async fn recover(&self) -> anyhow::Result<()> {
        copyhound_matcher::requeue_pending_works(
            self.stores.publishers.as_ref(),
            self.stores.works.as_ref(),
            self.queue.as_ref(),
        )
        .await
        .context("cannot re-enqueue the fingerprinting of pending works")?;
        Ok(())
    }

    /// Folds what the embedded index keeps in memory into its snapshot (every
    /// acknowledged write is already in its log; this shortens the next start).
    pub async fn persist(&self) -> anyhow::Result<()> {
        if let Some(memory) = &self.memory_index {
            memory
                .snapshot()
                .await
                .context("cannot write the index snapshot")?;
        }
        Ok(())
    }
}

/// The embedded default is one process's: its files (redb store and queue,
/// the index log) must never be opened twice. The lock file names the holder,
/// so a second command can say who holds it and what to do instead.
#[derive(Debug)]
pub struct DataDirLock {
    file: std::fs::File,
}

/// Name of the lock file in the data directory.
const LOCK_FILE: &str = "copyhound.lock";

impl DataDirLock {
    /// Takes the lock of `dir`, or fails with a message naming the holder.
    pub fn acquire(dir: &std::path::Path) -> anyhow::Result<Self> {
        use std::io::{Read, Seek, Write};
        let path = dir.join(LOCK_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                anyhow::bail!(
                    "the embedded data directory {} is in use by another copyhound process \
                     ({}): stop it first, use the API of a running `copyhound serve` \
                     instead, or configure MongoDB and Redis (store.url, index.url, \
                     queue.url) to run several processes",
                    dir.display(),
                    if holder.is_empty() { "unknown" } else { holder }
                );
            }
            Err(std::fs::TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let command: Vec<String> = std::env::args().take(3).collect();
        file.set_len(0)?;
        file.seek(std::io::SeekFrom::Start(0))?;
        write!(file, "pid {}: {}", std::process::id(), command.join(" "))?;
        file.flush()?;
        Ok(Self { file })
    }

    /// Records where the holder serves its API, for the message others get.
    pub fn note_listen(&self, address: &str) {
        use std::io::Write;
        let mut file = &self.file;
        let _ = write!(file, ", serving http://{address}");
        let _ = file.flush();
    }
}
