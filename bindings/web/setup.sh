#!/bin/sh
# Installs what the package's build needs when it is missing (Rust's wasm32 target,
# wasm-bindgen-cli at the crate's exact version, the npm dev dependencies), then builds the
# package (wasm/, dist/) and the demo page (demo/build/, demo/wasm/). `.ci/run` runs it; so
# can you, once, before `platform-sim --web bindings/web/demo`.
set -eu
cd "$(dirname "$0")"
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
want=$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $want" ]; then
  # Not --locked: its lock file names a webpki-roots the registry here does not have.
  cargo install --quiet wasm-bindgen-cli --version "$want"
fi
npm ci --no-audit --no-fund
npm run --silent build:demo
