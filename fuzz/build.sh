#!/usr/bin/env bash
# Builds the fuzz targets with nightly and the flags `cargo fuzz build -s none` uses (coverage
# instrumentation for libFuzzer, debug assertions and overflow checks; no sanitizer: the
# workspace forbids unsafe code), without needing cargo-fuzz installed. Binaries land in
# fuzz/target/x86_64-unknown-linux-gnu/release/<target>.
set -euo pipefail
cd "$(dirname "$0")"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
cargo +nightly build --release --target x86_64-unknown-linux-gnu --bins "$@"
