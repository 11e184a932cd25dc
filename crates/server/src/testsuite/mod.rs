//! Helpers for tests of this crate and of crates that serve its console: a
//! headless Chromium driven over the DevTools protocol.

pub mod browser;
