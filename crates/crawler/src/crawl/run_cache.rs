//! What the pages of one run share: same-site resources a page needs to be
//! read as a reader sees it (style sheets, web fonts). Each is fetched once
//! per run through the fetcher (robots.txt, pacing, body limits), read into
//! its value, and remembered; one that cannot be had or read is remembered as
//! such and not retried. Both bounds (per page, per run) hold whatever a page
//! asks for.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use copyhound_core::ports::{Fetcher, Resource};
use tracing::debug;

use crate::pacer::{HostPacer, fetch_paced};

/// Values by absolute URL; `None` when one could not be had or read.
pub(crate) type Entries<V> = HashMap<String, Option<Arc<V>>>;

/// A run's resources of one kind.
pub(crate) struct RunCache<V: ?Sized> {
    entries: Mutex<Entries<V>>,
    resource: Resource,
    per_page: usize,
    per_run: usize,
}

impl<V: ?Sized> std::fmt::Debug for RunCache<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCache")
            .field("resource", &self.resource)
            .field("entries", &self.lock().len())
            .finish()
    }
}

impl<V: ?Sized> RunCache<V> {
    /// An empty cache of `resource`s, fetching at most `per_page` for one page
    /// and remembering at most `per_run`.
    pub(crate) fn new(resource: Resource, per_page: usize, per_run: usize) -> Self {
        Self {
            entries: Mutex::default(),
            resource,
            per_page,
            per_run,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<V>> {
        self.entries
            .lock()
            .expect("run cache lock is never poisoned: no panics while held")
    }

    /// What is known now (cheap: the values are shared).
    pub(crate) fn snapshot(&self) -> Entries<V> {
        self.lock().clone()
    }

    /// Fetches the `urls` (absolute, same-site) never tried, within the
    /// bounds, reading each body with `read`; returns whether one more value
    /// that `counts` is at hand.
    pub(crate) async fn fetch_missing<F, Fut>(
        &self,
        urls: impl IntoIterator<Item = String>,
        fetcher: &dyn Fetcher,
        pacer: &HostPacer,
        interval: std::time::Duration,
        read: F,
        counts: impl Fn(&V) -> bool,
    ) -> bool
    where
        F: Fn(String, Vec<u8>) -> Fut,
        Fut: Future<Output = Option<Arc<V>>>,
    {
        let wanted: Vec<String> = {
            let entries = self.lock();
            let mut seen = HashSet::new();
            let mut wanted: Vec<String> = urls
                .into_iter()
                .filter(|url| !entries.contains_key(url) && seen.insert(url.clone()))
                .collect();
            let room = self.per_run.saturating_sub(entries.len());
            wanted.truncate(self.per_page.min(room));
            wanted
        };
        let mut added = false;
        for url in wanted {
            let value = match fetch_paced(fetcher, pacer, interval, &url, self.resource).await {
                Ok(fetched) if (200..300).contains(&fetched.status) => {
                    read(url.clone(), fetched.body).await
                }
                Ok(fetched) => {
                    debug!(url=%url, status=fetched.status, resource=?self.resource, "not fetched");
                    None
                }
                Err(error) => {
                    debug!(url=%url, error=%error, resource=?self.resource, "not fetched");
                    None
                }
            };
            added |= value.as_deref().is_some_and(&counts);
            self.lock().insert(url, value);
        }
        added
    }
}
