#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Issue 15: the C header is generated (cbindgen) and checked in; this test regenerates it and
//! fails when the checked-in copy differs, so it cannot drift from the code. `AE_BLESS=1`
//! writes the new header instead.

use std::path::Path;

#[test]
fn the_checked_in_header_is_the_generated_one() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bindings = cbindgen::generate(dir).expect("cbindgen reads the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = dir.join("include/agent_engine.h");
    if std::env::var_os("AE_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/agent_engine.h is not what cbindgen generates; run \
         AE_BLESS=1 cargo test -p engine-ffi --test header and review the diff"
    );
}
