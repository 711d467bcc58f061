#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The stored queue of ADR 087 across people and Environments (ENV-2, INV-10, OI-24; issue 13,
//! found by the simulator). The storage key names the session alone
//! (`main_sequence_ai.message_queue.{uid}`), while each person and Environment has its own work;
//! the copy belongs to the pair that first read or wrote it. A session shown under another
//! Environment (its link kept across a switch) never reads, writes or removes that copy; a
//! message queued for it there is handed back; and what is queued for it when its record turns
//! out to be another Environment's is handed back too.

use engine_core::{Command, Event, FailureCode, HoldReason, Input, StorageRequest};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, ENV2, answer, record};
use spec_tests::turns::post_on;

const S1: &str = "s-1";

fn key() -> String {
    format!("main_sequence_ai.message_queue.{S1}")
}

/// The storage requests about S1's queue from `mark` on, as (operation, texts).
fn queue_writes(h: &Harness, mark: usize) -> Vec<(&'static str, Vec<String>)> {
    h.storage()[mark..]
        .iter()
        .filter_map(|r| match r {
            StorageRequest::LoadQueue { key: k } if *k == key() => Some(("load", Vec::new())),
            StorageRequest::SaveQueue { key: k, rows } if *k == key() => {
                Some(("save", rows.iter().map(|r| r.text.clone()).collect()))
            }
            StorageRequest::RemoveQueue { key: k } if *k == key() => Some(("remove", Vec::new())),
            _ => None,
        })
        .collect()
}

/// The texts handed back with this code, and their reasons.
fn handed_back(h: &Harness, code: FailureCode) -> Vec<(String, String)> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent {
                text,
                reason,
                code: c,
                ..
            } if *c == code => Some((text.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

fn queued_texts(h: &Harness) -> Vec<String> {
    h.snapshot()
        .message_queue
        .iter()
        .map(|r| r.text.clone())
        .collect()
}

/// ADR 087, ENV-2, INV-10: rows queued in the session's own Environment stay stored while the
/// session is shown under another one (no read, write or removal there), a message queued for it
/// there is handed back ("This session's queue is kept for another Environment or person. The
/// message was not queued.", `session_in_another_environment`), and back in its own Environment
/// the rows are still there.
#[test]
fn a_queue_stored_in_its_own_environment_is_left_alone_under_another() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second");
    let mark = h.storage().len();
    h.send("Third");
    assert_eq!(
        queue_writes(&h, mark),
        [("save", vec!["Second".into(), "Third".into()])]
    );

    let mark = h.storage().len();
    h.env(Some(ENV2)).requested(Some(S1));
    assert_eq!(
        h.current().as_deref(),
        Some(S1),
        "shown under the other Environment"
    );
    h.command(Command::EnqueueMessage {
        text: " Elsewhere ".into(),
    });
    h.send("Typed");
    assert_eq!(
        handed_back(&h, FailureCode::SessionInAnotherEnvironment),
        [
            (
                "Elsewhere".to_owned(),
                "This session's queue is kept for another Environment or person. The message was not queued.".to_owned()
            )
        ],
        "the queued text comes back; a typed one is not queued (the session is not ready)"
    );
    assert!(queued_texts(&h).is_empty());
    // Its record is the other Environment's: the session cannot be opened here (OI-24).
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some(
            "The session referenced by this link is unavailable. The session belongs to Organization Environment env-1, not env-2."
        )
    );
    assert_eq!(
        queue_writes(&h, mark),
        [],
        "nothing read, written or removed"
    );

    h.env(Some(ENV)).requested(Some(S1));
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(queued_texts(&h), ["Second", "Third"]);
    assert_eq!(
        h.snapshot().message_queue[0].hold_reason,
        Some(HoldReason::Away)
    );
    assert_eq!(queue_writes(&h, mark), [], "read once per engine (ADR 087)");
}

/// OI-24, ADR 087: a session requested under an Environment that owns nothing of it takes its
/// stored copy there; when its record turns out to be another Environment's, what was queued
/// for it is handed back with the reason of the failed read and `session_in_another_environment`,
/// and the copy is removed, so that its own Environment can take it.
#[test]
fn rows_queued_for_a_session_of_another_environment_are_handed_back() {
    let mut h = Harness::visible_in_env();
    h.env(Some(ENV2)).requested(Some(S1));
    let mark = 0;
    assert_eq!(queue_writes(&h, mark), [("load", vec![])]);
    h.input(Input::StoredQueueLoaded {
        key: key(),
        rows: None,
    });
    h.command(Command::EnqueueMessage {
        text: "Later".into(),
    });
    assert_eq!(queued_texts(&h), ["Later"]);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    assert_eq!(
        handed_back(&h, FailureCode::SessionInAnotherEnvironment),
        [(
            "Later".to_owned(),
            "The session belongs to Organization Environment env-1, not env-2.".to_owned()
        )]
    );
    assert_eq!(
        queue_writes(&h, mark),
        [
            ("load", vec![]),
            ("save", vec!["Later".into()]),
            ("remove", vec![])
        ]
    );

    // Its own Environment now queues and stores as usual.
    let mark = h.storage().len();
    // The host's link changes with the Environment (a request kept unchanged is consumed).
    h.env(Some(ENV)).requested(None).requested(Some(S1));
    assert_eq!(h.current().as_deref(), Some(S1));
    h.command(Command::EnqueueMessage {
        text: "Mine".into(),
    });
    assert_eq!(queued_texts(&h), ["Mine"]);
    assert_eq!(queue_writes(&h, mark), [("save", vec!["Mine".into()])]);
    assert!(
        handed_back(&h, FailureCode::SessionInAnotherEnvironment).len() == 1,
        "nothing more handed back"
    );
}

/// ADR 087, OI-20, INV-10: a queued row on its way when the Environment changes goes back to
/// its own queue, and that queue is stored before its pair is parked (a reload would otherwise
/// lose it: storage said the queue was empty while the row was sending).
#[test]
fn a_row_on_its_way_is_stored_again_before_its_environment_is_left() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second");
    h.chunk(first, &answer("msg-1", "One.")).end(first);
    // "Second" is on its way: its turn waits for the runtime's access.
    assert_eq!(
        h.snapshot().message_queue_sending.map(|r| r.text),
        Some("Second".to_owned())
    );
    let mark = h.storage().len();
    h.env(Some(ENV2));
    assert_eq!(queue_writes(&h, mark), [("save", vec!["Second".into()])]);
    h.env(Some(ENV)).requested(Some(S1));
    assert_eq!(queued_texts(&h), ["Second"]);
}
