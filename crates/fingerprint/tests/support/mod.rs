//! Shared test helpers.
pub mod devset;
