#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
use spec_tests::Harness;
use spec_tests::fixtures::*;

#[test]
fn explore() {
    let mut h = Harness::visible_in_env();
    h.default_session(Some(AGENT));
    h.shows_default(true);
    let id = h.get_or_create_request();
    h.answer_list(&[record("s-1", AGENT, ENV, 3)]);
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    h.launch(AGENT2, 1);
    println!("{}", h.transcript());
    println!("{:?}", h.request(id).request);
    panic!();
}
