//! The conformance suite on the in-memory index.

use std::sync::Arc;

use async_trait::async_trait;

use copyhound_core::ports::FingerprintIndex;

use super::{Factory, conformance_suite};
use crate::MemoryFingerprintIndex;

struct MemoryFactory;

#[async_trait]
impl Factory for MemoryFactory {
    async fn index(&self, max_distance: u32) -> Arc<dyn FingerprintIndex> {
        Arc::new(MemoryFingerprintIndex::new(max_distance).unwrap())
    }
}

conformance_suite!(Some(MemoryFactory));
