#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Reference parity (issue 11, point 11) for the queue rows of ADR 087 (adr-notes 2): each row's
//! status, hold reason and hold message; the row on its way; the strip's and the composer's
//! texts; and a queued row that a guard refuses inside its run (SND-2, SND-21, SND-22).

use engine_core::{Command, Event, FailureCode, HoldReason, QueueRowStatus, RunStatus};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::answer;
use spec_tests::turns::{is_resolve, post_on, texts_sent};

const S1: &str = "s-1";

/// The selected session's rows as (text, status, hold reason).
fn rows_of(s: &engine_core::Snapshot) -> Vec<(&str, QueueRowStatus, Option<HoldReason>)> {
    s.message_queue
        .iter()
        .map(|r| (r.text.as_str(), r.status, r.hold_reason))
        .collect()
}

/// adr-notes 2, SND-18, SND-20, SND-22: rows written while the Agent works are `queued`, and the
/// strip and composer say so ("{n} queued · will send when {Agent} finishes", "{Agent} is
/// working. Your message will send when it finishes.", "Add to queue"). The first row on its way
/// is `sending` (as `messageQueueSending`, "Sending queued message 1 of 2"); stopped before it
/// left, it returns to the front, and every row is `held` with reason `stopped` and the strip's
/// "Held after you stopped {Agent}.".
#[test]
fn rows_carry_their_status_and_the_strip_its_texts() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second").send("Third");
    let s = h.snapshot();
    let rows = rows_of(&s);
    assert_eq!(
        rows,
        [
            ("Second", QueueRowStatus::Queued, None),
            ("Third", QueueRowStatus::Queued, None)
        ]
    );
    let texts = &s.message_queue_texts;
    assert_eq!(
        texts.summary.as_deref(),
        Some("2 queued · will send when Ledger Helper finishes")
    );
    assert_eq!(texts.hold, None);
    assert_eq!(
        texts.composer_placeholder.as_deref(),
        Some("Ledger Helper is working. Your message will send when it finishes.")
    );
    assert_eq!(texts.composer_action.as_deref(), Some("Add to queue"));
    let json = serde_json::to_value(&s.message_queue[0]).unwrap();
    assert_eq!(json["status"], "queued");
    assert!(json.get("holdReason").is_none());

    h.chunk(first, &answer("msg-1", "One.")).end(first);
    let s = h.snapshot();
    let sending = s.message_queue_sending.expect("a row on its way");
    assert_eq!(
        (sending.text.as_str(), sending.status),
        ("Second", QueueRowStatus::Sending)
    );
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Sending queued message 1 of 2")
    );
    assert_eq!(
        s.message_queue
            .iter()
            .map(|r| r.text.as_str())
            .collect::<Vec<_>>(),
        ["Third"]
    );

    // Stopped while its access resolves: the row never left and goes back to the front.
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(s.message_queue_sending, None);
    let rows = rows_of(&s);
    assert_eq!(
        rows,
        [
            ("Second", QueueRowStatus::Held, Some(HoldReason::Stopped)),
            ("Third", QueueRowStatus::Held, Some(HoldReason::Stopped))
        ]
    );
    assert_eq!(
        s.message_queue_texts.hold.as_deref(),
        Some("Held after you stopped Ledger Helper.")
    );
    assert_eq!(
        s.message_queue_texts.summary.as_deref(),
        Some("2 queued · will send when Ledger Helper finishes")
    );
    assert_eq!(
        s.message_queue_texts.composer_placeholder, None,
        "not working"
    );
    assert_eq!(texts_sent(&h), ["First"]);
}

/// ADR 087 (adr-notes 2), SND-2, SND-21, SND-22: a queued row that the send guard refuses
/// inside its run is spent like a typed message: that turn fails (its text handed back with
/// the guard's code, no request for it), and the remaining rows are held `failed`, with no hold
/// message and the strip's "Held because the last answer failed.".
#[test]
fn a_row_refused_by_the_guard_is_spent_and_the_rest_held_failed() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second").send("Third");
    // A detail refetch fails meanwhile: the session is no longer ready.
    h.command(Command::RefreshSessionDetail);
    let detail = h.detail_request(S1);
    h.reply(detail, 500, json!({"detail": "Detail store down."}));
    let resolves = h.count(is_resolve);
    h.chunk(first, &answer("msg-1", "One.")).end(first);
    h.advance(1_000);

    assert_eq!(
        h.count(is_resolve),
        resolves,
        "no request for the refused row"
    );
    assert_eq!(texts_sent(&h), ["First"]);
    let handed: Vec<(String, FailureCode)> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent { text, code, .. } => Some((text.clone(), *code)),
            _ => None,
        })
        .collect();
    assert_eq!(
        handed,
        [("Second".to_owned(), FailureCode::SessionNotReady)]
    );
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(
        s.run_failure.map(|f| f.code),
        Some(FailureCode::SessionNotReady)
    );
    let rows: Vec<(&str, QueueRowStatus, Option<HoldReason>, Option<String>)> = s
        .message_queue
        .iter()
        .map(|r| {
            (
                r.text.as_str(),
                r.status,
                r.hold_reason,
                r.hold_message.clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [(
            "Third",
            QueueRowStatus::Held,
            Some(HoldReason::Failed),
            None
        )]
    );
    assert_eq!(
        s.message_queue_texts.hold.as_deref(),
        Some("Held because the last answer failed.")
    );
}

/// ADR 087 (adr-notes 2): rows read back from storage are held `away` with the message "Held
/// while you were away.", which is also the strip's hold line.
#[test]
fn rows_read_back_from_storage_are_held_away() {
    let mut h = Harness::talking(S1);
    let key = format!("main_sequence_ai.message_queue.{S1}");
    h.input(engine_core::Input::StoredQueueLoaded {
        key,
        rows: Some(json!([{"id": "q-1", "text": "Later", "createdAt": "2026-10-02T08:00:00Z"}])),
    });
    let s = h.snapshot();
    let row = &s.message_queue[0];
    assert_eq!(row.status, QueueRowStatus::Held);
    assert_eq!(row.hold_reason, Some(HoldReason::Away));
    assert_eq!(
        row.hold_message.as_deref(),
        Some("Held while you were away.")
    );
    assert_eq!(
        s.message_queue_texts.hold.as_deref(),
        Some("Held while you were away.")
    );
    assert_eq!(
        s.message_queue_texts.summary.as_deref(),
        Some("1 queued · will send when Ledger Helper finishes")
    );
    // Nothing leaves a held queue on its own.
    h.advance(30_000);
    assert!(texts_sent(&h).is_empty());
}

/// RU-40: `editQueuedMessage(id)` removes the row and hands its text back
/// (`QueuedMessageReturned`); an unknown id changes nothing and hands nothing back (the
/// reference's null); `removeQueuedMessage(id)` removes the row; `clearMessageQueue()` also
/// removes the stored key.
#[test]
fn ru_40_editing_the_queue() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second").send("Third").send("Fourth");
    let ids: Vec<String> = h
        .snapshot()
        .message_queue
        .iter()
        .map(|r| r.id.clone())
        .collect();
    let texts = |h: &Harness| -> Vec<String> {
        h.snapshot()
            .message_queue
            .iter()
            .map(|r| r.text.clone())
            .collect()
    };
    let returned = |h: &Harness| -> Vec<String> {
        h.events()
            .iter()
            .filter_map(|e| match e {
                Event::QueuedMessageReturned { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    };
    let storage_before = h.storage().len();
    h.command(Command::EditQueuedMessage {
        id: "queued-unknown".into(),
    });
    h.command(Command::RemoveQueuedMessage {
        id: "queued-unknown".into(),
    });
    assert_eq!(texts(&h), ["Second", "Third", "Fourth"]);
    assert!(returned(&h).is_empty());
    assert_eq!(h.storage().len(), storage_before, "nothing stored anew");

    h.command(Command::EditQueuedMessage { id: ids[1].clone() });
    assert_eq!(returned(&h), ["Third"]);
    assert_eq!(texts(&h), ["Second", "Fourth"]);
    h.command(Command::RemoveQueuedMessage { id: ids[0].clone() });
    assert_eq!(texts(&h), ["Fourth"]);
    assert_eq!(returned(&h), ["Third"], "a removed row is not handed back");
    let mark = h.storage().len();
    h.command(Command::ClearMessageQueue);
    assert!(texts(&h).is_empty());
    let after: Vec<String> = h.storage()[mark..]
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    assert!(
        h.storage()[mark..].iter().any(|r| matches!(r,
            engine_core::StorageRequest::RemoveQueue { key } if key == "main_sequence_ai.message_queue.s-1")),
        "{after:?}"
    );
}
