#!/usr/bin/env bash
# The benches' figures that a reshaping of engine-core must keep (issue 26, point 4), as
# instruction counts (callgrind's `Collected`: they repeat exactly, unlike times on a shared
# machine) of fixed cases, and the ready engine's bytes. Prints one line per figure:
#
#     bash tools/bench-figures.sh            # about 15 minutes on 2 vCPUs, most of it building
#
# Compare two commits' outputs line by line; docs/benchmarks.md ("Kept through issue 26") has
# the figures of record and the ratios built from them.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

command -v valgrind >/dev/null || { echo "bench-figures: valgrind is needed" >&2; exit 1; }
target=${CARGO_TARGET_DIR:-target}
cargo bench -q -p engine-core --bench answer_stream --no-run
cargo bench -q -p spec-tests --bench engine_drive --bench replay --no-run

bin() { ls -t "$target"/release/deps/"$1"-* | grep -v '\.d$' | head -1; }

# ir LABEL VAR=VALUE BINARY TOGGLE...: the instructions inside the toggled functions.
ir() {
  local label=$1 setting=$2 binary=$3
  shift 3
  local toggles=()
  for t in "$@"; do toggles+=(--toggle-collect="$t"); done
  local out
  out=$(env "$setting" valgrind --tool=callgrind --callgrind-out-file=/dev/null "${toggles[@]}" \
    "$binary" 2>&1 >/dev/null | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' | tail -1)
  if [ -z "$out" ] || [ "$out" = 0 ]; then
    echo "bench-figures: no instructions counted for $label" >&2
    exit 1
  fi
  printf '%-34s %15s\n' "$label" "$out"
}

stream=$(bin answer_stream)
for shape in agent agent-runtime tokens-100k long-tool; do
  for side in engine floor; do
    ir "decode $side:$shape" "ANSWER_STREAM_ONLY=$side:$shape" "$stream" '*run_engine*' '*run_floor*'
  done
done

drive=$(bin engine_drive)
for case in changes:0 changes:400 snapshot:0 snapshot:400; do
  ir "engine drive $case (3 runs)" "ENGINE_DRIVE_ONLY=$case" "$drive" 'engine_drive::run'
done

replay=$(bin replay)
for mode in engine bare check; do
  ir "replay $mode:10000" "REPLAY_ONLY=$mode:10000" "$replay" '*run_once*' '*run_engine*'
done

cargo test -q -p spec-tests --release --test heap -- --nocapture | grep '^HEAP'
