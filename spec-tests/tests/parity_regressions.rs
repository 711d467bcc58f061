#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Regressions found by a review of the reference-parity work (issue 11): each pins a bug that
//! the parity changes brought or exposed, with the rule it breaks.

use engine_core::{Command, Event, RunStatus};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, USER, answer, history, record};
use spec_tests::turns::{all_ready_on, another_writer_at_work, post_on, texts_sent};

const S1: &str = "s-1";

/// INV-10, ENV-2, OI-20: a queued row on its way (resolving) when the person changes: after
/// coming back, the row is in S1's queue or handed back. Nothing written may be lost.
#[test]
fn inv_10_scope_change_keeps_a_queued_row_on_its_way() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "First");
    h.stream_head(first);
    h.send("Second");
    h.chunk(first, &answer("msg-1", "One.")).end(first);
    assert_eq!(
        h.snapshot().message_queue_sending.map(|r| r.text),
        Some("Second".to_owned())
    );
    // Another person signs in, then the first one comes back.
    h.person("user-2");
    h.person(USER);
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    assert_eq!(h.current().as_deref(), Some(S1));
    let queued: Vec<String> = h
        .snapshot()
        .message_queue
        .iter()
        .map(|r| r.text.clone())
        .collect();
    let handed = h
        .events()
        .iter()
        .any(|e| matches!(e, Event::MessageNotSent { text, .. } if text == "Second"));
    assert!(
        queued == ["Second"] || handed,
        "\"Second\" is lost: queue {queued:?}, handed back {handed}"
    );
}

/// SND-18, SND-25, adr-notes 6 (`clearThread()`): while another writer works and a message
/// waits, clearing the thread does not release the row into the other run (the record still
/// says `working`).
#[test]
fn snd_25_clear_thread_does_not_release_the_queue_into_another_writers_run() {
    let mut h = another_writer_at_work(S1);
    assert!(h.snapshot().is_agent_working);
    h.send("Wait for it");
    h.advance(1);
    h.command(Command::ClearThread);
    h.advance(1);
    all_ready_on(&mut h, S1);
    assert!(
        h.snapshot().is_agent_working,
        "the other writer still works"
    );
    assert_eq!(
        texts_sent(&h),
        Vec::<String>::new(),
        "sent into the other writer's run"
    );
}

/// HYD-10, HYD-11, adr-notes 8: a turn that failed while its session was re-selected keeps its
/// failure when the history held back during the stream loads afterwards.
#[test]
fn hyd_11_history_after_a_failed_turn_keeps_the_failure() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.requested(Some("s-2"));
    h.requested(Some(S1));
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    h.broken(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert!(s.run_failure.is_some());
    // The held-back history read goes out now and answers.
    h.reply(h.history_request(S1), 200, history(S1));
    let s = h.snapshot();
    assert_eq!(
        (
            s.run_status,
            s.run_status_detail.as_deref(),
            s.run_failure.is_some()
        ),
        (
            RunStatus::Error,
            Some("Source: Request was never sent. connection reset"),
            true
        ),
        "the failure of the turn just run is gone"
    );
}

/// HYD-11, SND-25, adr-notes 8: with a clean finish, a history still `running` at the platform
/// and the record read during our own turn (`working`) do not make the finished run look live.
#[test]
fn hyd_11_history_running_after_our_own_turn() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.requested(Some("s-2"));
    h.requested(Some(S1));
    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    h.answer_detail(S1, working);
    h.chunk(id, &answer("msg-1", "Done.")).end(id);
    assert_eq!(h.snapshot().run_status, RunStatus::Complete);
    let mut hist = history(S1);
    hist["session"]["status"] = json!("running");
    h.reply(h.history_request(S1), 200, hist);
    h.advance(60_000);
    let s = h.snapshot();
    assert!(!s.is_agent_working);
    assert_eq!(
        (s.run_status, s.run_status_detail.as_deref()),
        (RunStatus::Complete, Some("Run completed.")),
    );
}

/// SND-25: a failed other-writer poll (a 500 on the detail re-read) is not "the writer
/// finished": the row keeps waiting, and is not released into a guard refusal.
#[test]
fn snd_25_failed_writer_poll_does_not_release_the_queue() {
    let mut h = another_writer_at_work(S1);
    h.send("Wait for it");
    h.advance(10_000);
    let d = h.detail_request(S1);
    h.reply(d, 500, json!({"detail": "Detail store down."}));
    h.advance(1);
    let handed: Vec<String> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent { text, code, .. } => Some(format!("{text} [{code}]")),
            _ => None,
        })
        .collect();
    let s = h.snapshot();
    assert_eq!(
        (s.message_queue.len(), handed),
        (1, Vec::<String>::new()),
        "the waiting row was released by a failed poll"
    );
}

/// adr-notes 6 (`agentId`), HYD-10: after re-selecting a session mid-stream, frames that keep
/// naming the same Agent report it again (agentId is null on the new selection until one does).
#[test]
fn adr6_agent_id_after_reselecting_mid_stream() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    let frame = |v: serde_json::Value| format!("data: {v}\n\n").into_bytes();
    h.chunk(
        id,
        &frame(json!({"type": "start", "messageId": "m", "agent_id": "ag-1"})),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("ag-1"));
    h.requested(Some("s-2"));
    h.requested(Some(S1));
    assert_eq!(h.snapshot().agent_id, None);
    h.chunk(
        id,
        &frame(json!({"type": "start-step", "agent_id": "ag-1"})),
    );
    assert_eq!(
        h.snapshot().agent_id.as_deref(),
        Some("ag-1"),
        "a frame named the Agent"
    );
}
