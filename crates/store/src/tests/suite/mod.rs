//! The checks every backend must pass. Each takes a fresh, empty [`Stores`]
//! (migrations not applied: most checks call `prepare` first).

use copyhound_core::ports::{MatchFilter, PageRequest};

use crate::Stores;

pub(crate) fn first(limit: u32) -> PageRequest {
    PageRequest { after: None, limit }
}

pub(crate) fn filter(publisher: &str) -> MatchFilter {
    MatchFilter {
        publisher_id: publisher.parse().unwrap(),
        work_id: None,
        chapter_id: None,
        site_id: None,
        statuses: Vec::new(),
        min_score: None,
        seen_since: None,
        seen_before: None,
        order: Default::default(),
    }
}

/// Collects every page of a listing as `(items, pages read)`, asserting each
/// page holds at most `limit` items.
macro_rules! collect_all {
    ($limit:expr, |$request:ident| $call:expr) => {{
        let mut $request = first($limit);
        let mut items = Vec::new();
        let mut pages = 0;
        loop {
            let page = $call.await.unwrap();
            assert!(page.items.len() <= $limit as usize);
            pages += 1;
            items.extend(page.items);
            match page.next {
                Some(next) => $request.after = Some(next),
                None => break (items, pages),
            }
        }
    }};
}

pub(crate) async fn prepare(stores: &Stores) {
    crate::migrate_up(stores).await.unwrap();
}

mod matches;
mod pages;
mod records;

pub(crate) use matches::*;
pub(crate) use pages::*;
pub(crate) use records::*;
