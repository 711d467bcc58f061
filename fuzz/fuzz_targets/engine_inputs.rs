//! Fuzz target: `spec_tests::fuzz::engine_inputs` (its checks and what they assert are there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spec_tests::fuzz::engine_inputs(data);
});
