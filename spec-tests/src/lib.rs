//! The conformance harness for `engine-core`: a virtual clock, a scripted platform at the intent
//! level, and a compact transcript for insta snapshots.
//!
//! Tests live in `tests/<section>.rs`, modules of one test binary (`tests/spec.rs`: `cargo test
//! -p spec-tests --test spec <section>::` runs one section); each names the rule IDs it checks. `rules.txt` lists the
//! IDs this project covers, and `tests/coverage.rs` fails when one of them is cited by no test.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::unwrap_used,
    clippy::indexing_slicing
)]
// Test support: failing loudly on a broken expectation is the point.

pub mod endpoints;
pub mod fixtures;
pub mod follow;
pub mod fuzz;
mod golden;
mod harness;
pub mod local;
pub mod long_answer;
pub mod models;
pub mod sim;
mod transcript;
pub mod turns;

pub use harness::{BASE, Harness, ORIGIN, Reply, Sent, canonical_reason, response_head};
pub use transcript::snapshot_diff;
