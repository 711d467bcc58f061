#!/bin/sh
# Builds the package in place: the engine to WebAssembly (wasm/), its glue (wasm-bindgen, the
# CLI at the crate's exact version), the module optimized again (binaryen's wasm-opt), and the
# TypeScript (dist/). Needs the wasm32 target, wasm-bindgen-cli and the package's dev
# dependencies (`npm ci`); .ci/run installs them.
set -eu
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
want=$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | sed 's/^wasm-bindgen //') || true
if [ "$have" != "$want" ]; then
  echo "build.sh: wasm-bindgen $want is needed (found: ${have:-none}):" >&2
  echo "  cargo install wasm-bindgen-cli --version $want" >&2
  exit 1
fi
cargo build --manifest-path Cargo.toml --target wasm32-unknown-unknown --profile wasm
rm -rf wasm dist
wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir wasm \
  "$target_dir/wasm32-unknown-unknown/wasm/agent_engine_web.wasm"
# Binaryen (the npm package `binaryen`, pinned): -O3 without inlining functions into their one
# caller (`-ocimfs 0`, which only made the module larger), with the features rustc built for
# (.cargo/config.toml): about a tenth faster on the bench's answers, a few KB smaller
# (docs/benchmarks.md).
node_modules/.bin/wasm-opt -O3 -ocimfs 0 \
  --enable-bulk-memory --enable-multivalue --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-reference-types --enable-sign-ext --enable-simd \
  wasm/agent_engine_web_bg.wasm -o wasm/agent_engine_web_bg.wasm
node tools/gen-snapshot.mjs --check
npx tsc -p tsconfig.json
