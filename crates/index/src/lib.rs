//! The near-duplicate index: which stored 64-bit fingerprints lie within Hamming
//! distance k of a query. Production shares one Redis segment index between all
//! workers; the embedded default keeps an in-memory index snapshotted to disk. Both
//! implement `FingerprintIndex` from `copyhound-core` and answer exactly.
