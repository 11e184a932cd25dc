//! A recording queue and the bundle of fakes a router is built on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use copyhound_core::Result;
use copyhound_core::config::ServerConfig;
use copyhound_core::model::Task;
use copyhound_core::ports::{AckId, DeadTask, QueueStats, ReceivedTask, TaskQueue};
use copyhound_crawler::site::SitePolicy;

use super::MemoryStore;
use crate::AppState;

/// A queue that only records what was enqueued.
#[derive(Debug, Default)]
pub struct MemoryQueue {
    tasks: Mutex<Vec<Task>>,
}

impl MemoryQueue {
    /// Returns every task enqueued so far.
    pub fn enqueued(&self) -> Vec<Task> {
        self.tasks
            .lock()
            .expect("queue lock is never poisoned")
            .clone()
    }
}

#[async_trait]
impl TaskQueue for MemoryQueue {
    async fn check_connectivity(&self) -> Result<()> {
        Ok(())
    }
    async fn enqueue(&self, tasks: Vec<Task>) -> Result<()> {
        self.tasks
            .lock()
            .expect("queue lock is never poisoned")
            .extend(tasks);
        Ok(())
    }
    async fn receive(&self, _max: usize, _visibility: Duration) -> Result<Vec<ReceivedTask>> {
        Ok(Vec::new())
    }
    async fn acknowledge(&self, _ack_ids: &[AckId]) -> Result<()> {
        Ok(())
    }
    async fn fail(&self, _ack_id: &AckId, _error: &str) -> Result<()> {
        Ok(())
    }
    async fn extend(&self, _ack_id: &AckId, _visibility: Duration) -> Result<()> {
        Ok(())
    }
    async fn stats(&self) -> Result<QueueStats> {
        let depth = self
            .tasks
            .lock()
            .expect("queue lock is never poisoned")
            .len() as u64;
        Ok(QueueStats {
            depth,
            ..QueueStats::default()
        })
    }
    async fn dead_letters(&self, _limit: usize) -> Result<Vec<DeadTask>> {
        Ok(Vec::new())
    }
    async fn retry_dead(&self, _limit: usize) -> Result<u64> {
        Ok(0)
    }
}

/// A state on fresh in-memory fakes, with the fakes for inspection.
#[derive(Clone, Debug)]
pub struct MemoryBackends {
    /// The state to build a router from.
    pub state: AppState,
    /// The store behind every store port.
    pub store: Arc<MemoryStore>,
    /// The queue.
    pub queue: Arc<MemoryQueue>,
}

impl MemoryBackends {
    /// Returns fresh fakes with `config`.
    pub fn new(config: ServerConfig) -> Self {
        let store = Arc::new(MemoryStore::default());
        let queue = Arc::new(MemoryQueue::default());
        let state = AppState {
            publishers: store.clone(),
            works: store.clone(),
            sites: store.clone(),
            pages: store.clone(),
            matches: store.clone(),
            fingerprints: store.clone(),
            reports: store.clone(),
            queue: queue.clone(),
            index: None,
            config,
            // The fakes serve loopback tests: sites on 127.0.0.1 are registered.
            site_policy: SitePolicy {
                allow_private_addresses: true,
            },
        };
        Self {
            state,
            store,
            queue,
        }
    }
}
