#!/usr/bin/env bash
# The crossing into Python counted in instructions (issue 15): each case of boundary.py run once
# under callgrind, minus the same run stopped before the answer streams, against the Rust
# baseline (engine-ffi's boundary bench, collected inside its `stream`). Repeatable: the same
# counts for the same binaries whatever else the machine is doing.
#
#   cargo bench -p engine-ffi --bench boundary --no-run
#   pip install ./bindings/python && bash bindings/python/bench/callgrind.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=bindings/python/bench
bench=$(ls -t target/release/deps/boundary-* | grep -v '\.d$' | head -1)
python=${PYTHON:-python}
collected() { grep -o 'Collected : [0-9]*' | grep -o '[0-9]*$'; }
rust() {
  BOUNDARY_ONLY=rust:$1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    --toggle-collect='*boundary*stream*' "$bench" 2>&1 | collected
}
py() {
  PYTHONHASHSEED=0 BOUNDARY_CASE=$1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$python" "$here/boundary.py" 2>&1 | collected
}
for mode in slices events; do
  base=$(rust "$mode")
  setup=$(py "feed:$mode:setup")
  echo "$mode: rust $base instructions"
  for case in merged-1 merged-4 merged-16 feed typed; do
    total=$(py "$case:$mode")
    awk -v c="$case" -v n=$((total - setup)) -v r="$base" \
      'BEGIN { printf "  %-10s %11d  %.3fx\n", c, n, n / r }'
  done
done
