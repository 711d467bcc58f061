#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The conformance suite as one test binary (issue 26, step 1: one link instead of 50). Each
//! module is one section's file, named as before. Binaries of their own: `heap` (its own
//! global allocator), `inv` (it runs itself as a child process), and `faults` and `shells`
//! (they count the process's threads and sockets to prove a shell released them).

mod stream_support;

mod cat;
mod changes;
mod composer;
mod connection;
mod coverage;
mod def;
mod env;
mod explorer;
mod fail;
mod fail_default;
mod fail_sources;
mod fuzz_corpus;
mod hostile;
mod hyd;
mod icons;
mod interplay;
mod local;
mod local_models;
mod models;
mod models_interplay;
mod parity_hydration;
mod parity_models;
mod parity_queue;
mod parity_regressions;
mod parity_run;
mod props;
mod queue_scopes;
mod readme_examples;
mod replay_check;
mod req;
mod rta;
mod rta_malformed;
mod rta_props;
mod sel;
mod send_readiness;
mod shr;
mod simulation;
mod snd;
mod snd_interplay;
mod snd_props;
mod stream_dialect;
mod stream_hostile;
mod stream_rules;
mod stream_runtime;
mod stream_surrogates;
mod stream_vectors;
mod time;
mod trace_fidelity;
mod traces;
