//! Slots of the embedded queue. One process owns the queue file, so its slots
//! live in memory: a restart frees them all, as the holders died with it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Leased slots by group, then by holder (lease end); reserved turns by key.
#[derive(Debug, Default)]
pub struct Slots {
    groups: Mutex<HashMap<String, HashMap<String, Instant>>>,
    turns: Mutex<HashMap<String, Instant>>,
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

    /// Reserves the turn of `key` after the last one reserved, `interval`
    /// apart, and returns the wait for it. Keys whose turns have passed are
    /// dropped, so the map holds only hosts being paced now.
    pub fn reserve_turn(&self, key: &str, interval: Duration) -> Duration {
        let now = Instant::now();
        let mut turns = self
            .turns
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if turns.len() > 4096 {
            turns.retain(|_, next| *next > now);
        }
        let turn = turns.get(key).copied().unwrap_or(now).max(now);
        turns.insert(key.to_string(), turn + interval);
        turn - now
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
