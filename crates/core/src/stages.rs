//! Where a page's time goes: wall and CPU time per pipeline stage.
//!
//! Benchmarks time each part alone; the whole pipeline was slower than their
//! sum suggested, so every stage a page passes through is timed where it runs,
//! with the CPU time of the thread that ran it (for async stages, summed over
//! the polls), not only the wall clock that waiting inflates. Totals are kept
//! process-wide in atomics (`copyhound eval` prints them per page) and exported
//! as Prometheus counters (`copyhound_stage_calls_total`,
//! `copyhound_stage_wall_microseconds_total` and
//! `copyhound_stage_cpu_microseconds_total`, by `stage`). Only leaf stages are timed, so the
//! stages never count a nanosecond twice.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A stage of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// HTTP fetches of pages.
    Fetch,
    /// Bytes to text: charset decoding, CSS, content block, watermarks.
    Extract,
    /// Normalization and every fingerprint of a page or chapter.
    Fingerprint,
    /// Index lookups of a page's fingerprints and the votes over their hits.
    Candidates,
    /// Index inserts and removals.
    IndexWrite,
    /// Reading candidate chapters and preparing them for the verifier (a
    /// prepared chapter is kept between pages).
    ChapterLoad,
    /// The verifier: the page normalized, seeds, chains, spans.
    Verify,
    /// Page, fingerprint and match writes.
    StoreWrite,
    /// Store reads of the embedded store (its blocking work, whoever asked).
    StoreRead,
    /// Queue operations: enqueue, lease, acknowledge.
    Queue,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 10] = [
        Stage::Fetch,
        Stage::Extract,
        Stage::Fingerprint,
        Stage::Candidates,
        Stage::IndexWrite,
        Stage::ChapterLoad,
        Stage::Verify,
        Stage::StoreWrite,
        Stage::StoreRead,
        Stage::Queue,
    ];

    /// The stage's label in metrics and reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Fetch => "fetch",
            Stage::Extract => "extract",
            Stage::Fingerprint => "fingerprint",
            Stage::Candidates => "candidates",
            Stage::IndexWrite => "index_write",
            Stage::ChapterLoad => "chapter_load",
            Stage::Verify => "verify",
            Stage::StoreWrite => "store_write",
            Stage::StoreRead => "store_read",
            Stage::Queue => "queue",
        }
    }
}

struct Totals {
    calls: AtomicU64,
    wall_ns: AtomicU64,
    cpu_ns: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Totals = Totals {
    calls: AtomicU64::new(0),
    wall_ns: AtomicU64::new(0),
    cpu_ns: AtomicU64::new(0),
};
static TOTALS: [Totals; Stage::ALL.len()] = [ZERO; Stage::ALL.len()];

/// What one stage took so far in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTime {
    /// Times the stage ran.
    pub calls: u64,
    /// Wall time.
    pub wall: Duration,
    /// CPU time of the threads that ran it.
    pub cpu: Duration,
}

impl StageTime {
    /// The time between `earlier` and `self` (both read from [`snapshot`]).
    pub fn since(self, earlier: StageTime) -> StageTime {
        StageTime {
            calls: self.calls.saturating_sub(earlier.calls),
            wall: self.wall.saturating_sub(earlier.wall),
            cpu: self.cpu.saturating_sub(earlier.cpu),
        }
    }
}

/// Every stage's totals, in [`Stage::ALL`] order.
pub fn snapshot() -> Vec<(Stage, StageTime)> {
    Stage::ALL
        .iter()
        .map(|&stage| {
            let totals = &TOTALS[stage as usize];
            (
                stage,
                StageTime {
                    calls: totals.calls.load(Ordering::Relaxed),
                    wall: Duration::from_nanos(totals.wall_ns.load(Ordering::Relaxed)),
                    cpu: Duration::from_nanos(totals.cpu_ns.load(Ordering::Relaxed)),
                },
            )
        })
        .collect()
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    clock(rustix::time::ClockId::ThreadCPUTime)
}

/// CPU time of the whole process (every thread).
pub fn process_cpu() -> Duration {
    clock(rustix::time::ClockId::ProcessCPUTime)
}

fn clock(id: rustix::time::ClockId) -> Duration {
    let t = rustix::time::clock_gettime(id);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

fn add(stage: Stage, calls: u64, wall: Duration, cpu: Duration) {
    let totals = &TOTALS[stage as usize];
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    totals.calls.fetch_add(calls, Ordering::Relaxed);
    totals.wall_ns.fetch_add(nanos(wall), Ordering::Relaxed);
    totals.cpu_ns.fetch_add(nanos(cpu), Ordering::Relaxed);
    metrics::counter!("copyhound_stage_calls_total", "stage" => stage.name()).increment(calls);
    metrics::counter!("copyhound_stage_wall_microseconds_total", "stage" => stage.name())
        .increment(nanos(wall) / 1_000);
    metrics::counter!("copyhound_stage_cpu_microseconds_total", "stage" => stage.name())
        .increment(nanos(cpu) / 1_000);
}

/// Runs `work` as `stage`.
pub fn time<T>(stage: Stage, work: impl FnOnce() -> T) -> T {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let out = work();
    add(stage, 1, wall.elapsed(), thread_cpu().saturating_sub(cpu));
    out
}

/// Charges the CPU time of `work` to `stage`, without a call or wall time:
/// for an embedded backend's blocking work on behalf of an async call that
/// [`time_async`] already counts (its polls never see the blocking thread).
pub fn charge<T>(stage: Stage, work: impl FnOnce() -> T) -> T {
    let cpu = thread_cpu();
    let out = work();
    add(stage, 0, Duration::ZERO, thread_cpu().saturating_sub(cpu));
    out
}

/// Runs `work` as `stage`: wall time from first poll to completion, CPU time
/// summed over its polls (whichever threads ran them).
pub async fn time_async<F: Future>(stage: Stage, work: F) -> F::Output {
    Timed {
        stage,
        work: Box::pin(work),
        started: None,
        cpu: Duration::ZERO,
    }
    .await
}

struct Timed<F> {
    stage: Stage,
    work: Pin<Box<F>>,
    started: Option<Instant>,
    cpu: Duration,
}

impl<F: Future> Future for Timed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(Instant::now);
        let cpu = thread_cpu();
        let polled = this.work.as_mut().poll(cx);
        this.cpu += thread_cpu().saturating_sub(cpu);
        if polled.is_ready() {
            add(this.stage, 1, started.elapsed(), this.cpu);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(for_at_least: Duration) -> u64 {
        let started = Instant::now();
        let mut x = 0u64;
        while started.elapsed() < for_at_least {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        x
    }

    #[tokio::test]
    async fn stages_count_calls_wall_and_cpu_and_waiting_costs_no_cpu() {
        let before = snapshot();
        let at = |stage: Stage| Stage::ALL.iter().position(|&s| s == stage).unwrap_or(0);
        time(Stage::Verify, || spin(Duration::from_millis(20)));
        time_async(Stage::Queue, async {
            tokio::time::sleep(Duration::from_millis(30)).await;
        })
        .await;
        let after = snapshot();
        let verify = after[at(Stage::Verify)]
            .1
            .since(before[at(Stage::Verify)].1);
        let queue = after[at(Stage::Queue)].1.since(before[at(Stage::Queue)].1);
        // Other tests may run stages concurrently: lower bounds only.
        assert!(verify.calls >= 1);
        assert!(verify.wall >= Duration::from_millis(20));
        assert!(verify.cpu >= Duration::from_millis(5), "{verify:?}");
        assert!(queue.calls >= 1);
        assert!(queue.wall >= Duration::from_millis(30), "{queue:?}");
        // Sleeping is wall time, not CPU time.
        assert!(queue.cpu < queue.wall, "{queue:?}");
        assert!(process_cpu() >= verify.cpu);
    }
}
