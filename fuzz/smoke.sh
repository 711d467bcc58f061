#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 20), starting from its seeds: fuzz/seeds/,
# the answer vectors and the recorded traces (with the prefix byte each target reads). A crash
# leaves its input in fuzz/artifacts/<target>/ and fails the run; copy it into
# fuzz/regressions/<target>/ to keep it (tests/fuzz_corpus.rs replays those on stable).
# Prints each target's executions and coverage.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-20}"
./build.sh --quiet
bin=target/x86_64-unknown-linux-gnu/release
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
targets=(answer_stream_split payload_readers trace_replay engine_inputs)
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "artifacts/$t"
  if [ -d "seeds/$t" ]; then cp seeds/"$t"/* "$work/$t/"; fi
done
for f in ../spec-tests/vectors/ui-stream/*.sse ../spec-tests/vectors/assistant-stream/*.sse; do
  { printf '\000'; cat "$f"; } > "$work/answer_stream_split/$(basename "$f")"
done
for f in ../spec-tests/traces/*.jsonl; do
  for m in 0 1 2; do
    { printf "\\00$m"; cat "$f"; } > "$work/trace_replay/$m-$(basename "$f")"
  done
done
for t in "${targets[@]}"; do
  log="$work/$t.log"
  # The engine target reads at most a few thousand decisions; longer inputs only cost time.
  max_len=65536
  if [ "$t" = engine_inputs ]; then max_len=4096; fi
  if ! "$bin/$t" -max_total_time="$secs" -max_len="$max_len" -artifact_prefix="artifacts/$t/" \
      -print_final_stats=1 "$work/$t" > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $t failed; its input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$' || echo '?')
  echo "fuzz: $t: $runs inputs in ${secs} s, coverage $cov edges, no crash"
done
