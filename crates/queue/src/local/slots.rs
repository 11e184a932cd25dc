//! Slots of the embedded queue. One process owns the queue file, so its slots
//! live in memory: a restart frees them all, as the holders died with it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Leased slots by group, then by holder (lease end).
#[derive(Debug, Default)]
pub struct Slots {
    groups: Mutex<HashMap<String, HashMap<String, Instant>>>,
}

impl Slots {
    /// Takes or renews `holder`'s slot of `group` when fewer than `limit` are held.
    pub fn acquire(&self, group: &str, holder: &str, limit: u32, lease: Duration) -> bool {
        let now = Instant::now();
        let mut groups = self
            .groups
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let held = groups.entry(group.to_string()).or_default();
        held.retain(|_, until| *until > now);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        if held.contains_key(holder) || held.len() < limit {
            held.insert(holder.to_string(), now + lease);
            true
        } else {
            false
        }
    }

    /// Frees `holder`'s slot of `group`.
    pub fn release(&self, group: &str, holder: &str) {
        let mut groups = self
            .groups
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(held) = groups.get_mut(group) {
            held.remove(holder);
            if held.is_empty() {
                groups.remove(group);
            }
        }
    }
}
