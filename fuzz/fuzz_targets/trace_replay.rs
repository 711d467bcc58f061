//! Fuzz target: `spec_tests::fuzz::trace_replay` (its checks and what they assert are there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| spec_tests::fuzz::trace_replay(data));
