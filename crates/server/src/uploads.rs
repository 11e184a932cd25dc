//! The bounded pool that parses uploads. Parsing a TXT or EPUB file is CPU work
//! of up to a second or so within the budgets of [`copyhound_intake::formats::limits`];
//! run inline it would hold an async worker thread, and two uploads would stall
//! every other request, `/health` included. So parsing runs on the blocking
//! thread pool, at most `workers` at once; up to [`QUEUE_PER_WORKER`] more per
//! worker wait their turn, and past that an upload is refused at once with 503
//! `unavailable` and `Retry-After` instead of queueing without bound.

use std::sync::Arc;

use copyhound_core::config::ServerConfig;
use copyhound_core::{Error, ErrorKind, Result};
use tokio::sync::Semaphore;

/// Uploads that may wait for a parser, per parser.
pub const QUEUE_PER_WORKER: usize = 4;

/// Runs upload parsers off the async runtime, at most `workers` at a time.
#[derive(Clone, Debug)]
pub struct UploadPool {
    /// One permit per parser.
    running: Arc<Semaphore>,
    /// One permit per parser or waiting upload.
    admitted: Arc<Semaphore>,
    workers: usize,
}

impl UploadPool {
    /// Returns a pool of `workers` parsers (at least one).
    pub fn new(workers: usize) -> Self {
        let workers = workers.max(1);
        Self {
            running: Arc::new(Semaphore::new(workers)),
            admitted: Arc::new(Semaphore::new(workers * (1 + QUEUE_PER_WORKER))),
            workers,
        }
    }

    /// Returns the pool `server.upload_workers` asks for; 0 means half the cores (at least one).
    pub fn from_config(config: &ServerConfig) -> Self {
        let workers = match config.upload_workers {
            0 => std::thread::available_parallelism().map_or(1, |cores| cores.get() / 2),
            workers => usize::try_from(workers).unwrap_or(usize::MAX),
        };
        Self::new(workers)
    }

    /// Returns the number of parsers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Runs `parse` on the blocking pool once a parser is free. Refuses with
    /// `Unavailable` when every parser is busy and the queue is full. A request
    /// dropped while its parse runs keeps the parser until the parse ends, so
    /// abandoned uploads cannot exceed the bound either.
    pub async fn run<T, F>(&self, parse: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        let admission = self.admitted.clone().try_acquire_owned().map_err(|_| {
            Error::new(
                ErrorKind::Unavailable,
                format!(
                    "upload parsing is at capacity ({} parsing, {} waiting); retry later",
                    self.workers,
                    self.workers * QUEUE_PER_WORKER
                ),
            )
        })?;
        let permit = self
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::internal("the upload pool is closed"))?;
        let task = tokio::task::spawn_blocking(move || {
            let _held = (admission, permit);
            parse()
        });
        task.await.map_err(|error| {
            Error::with_source(ErrorKind::Internal, "upload parser failed", error)
        })?
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_full_pool_refuses_and_frees_its_permits_after_each_parse() {
        let pool = UploadPool::new(1);
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let mut waiting = Vec::new();
        for _ in 0..=QUEUE_PER_WORKER {
            let pool = pool.clone();
            let release_rx = release_rx.clone();
            waiting.push(tokio::spawn(async move {
                pool.run(move || {
                    let receiver = release_rx.lock().expect("lock");
                    receiver.recv().expect("released");
                    Ok(1)
                })
                .await
            }));
        }
        // Let every task take its admission before the next one asks.
        while pool.admitted.available_permits() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let refused = pool.run(|| Ok(0)).await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Unavailable);
        assert!(refused.message().contains("at capacity"), "{refused}");
        for _ in 0..=QUEUE_PER_WORKER {
            release_tx.send(()).unwrap();
        }
        for task in waiting {
            assert_eq!(task.await.unwrap().unwrap(), 1);
        }
        assert_eq!(pool.run(|| Ok(2)).await.unwrap(), 2);
        assert_eq!(pool.admitted.available_permits(), 1 + QUEUE_PER_WORKER);
    }

    #[tokio::test]
    async fn parse_errors_and_panics_come_back_as_errors() {
        let pool = UploadPool::new(2);
        let error = pool
            .run(|| Err::<(), _>(Error::invalid("bad file")))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        let panicked = pool
            .run(|| -> Result<()> { panic!("parser bug") })
            .await
            .unwrap_err();
        assert_eq!(panicked.kind(), ErrorKind::Internal);
        assert_eq!(pool.running.available_permits(), 2);
    }
}
