//! The comparison workers: a fingerprinted page becomes candidate chapters (from
//! the index), candidates are verified precisely, and the ones that clear the
//! evidence thresholds become matches with spans and side-by-side excerpts.
