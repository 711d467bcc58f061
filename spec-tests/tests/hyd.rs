#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
use engine_core::*;
use spec_tests::Harness;
use spec_tests::fixtures::*;

#[test]
fn explore() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 1), record("s-2", AGENT, ENV, 2)]);
    h.hydrate("s-2", AGENT);
    let id = h.insights_request("s-2");
    h.reply(id, 200, insights("s-2"));
    h.visible(false);
    h.visible(true);
    h.requested(Some("undefined"));
    h.requested(Some("a/b?c#d%"));
    println!("{}", h.transcript());
    println!("{:#?}", h.snapshot());
}
