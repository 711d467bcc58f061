//! Fuzz target: `spec_tests::fuzz::answer_stream_split` (its checks and what they assert are there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| spec_tests::fuzz::answer_stream_split(data));
