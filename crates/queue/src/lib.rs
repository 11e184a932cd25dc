//! The task queue that links the pipeline stages: Redis Streams in production, an
//! embedded persistent queue by default. At-least-once delivery with a visibility
//! timeout; handlers are idempotent, so re-delivery never duplicates work.
