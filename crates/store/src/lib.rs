//! Stores: where CopyHound keeps what it learns (works, sites, pages with their
//! history, fingerprints, matches, reports). Production uses MongoDB; the embedded
//! default keeps the same data in a local transactional file. Both implement the
//! store ports of `copyhound-core` and pass one conformance suite.
