#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Sending against everything else: interleavings of sends with selection, visibility, the
//! runtime poller, history reads, the queue and its storage. Each test here pinned an engine bug
//! found in review (now fixed).

use engine_core::{Command, Event, HoldReason, RequestId};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{
    AGENT, ENV, answer, history, record, runtime_ready, runtime_transient, sse,
};
use spec_tests::turns::{all_ready_on, body, is_resolve, post_on, texts_sent};

const S1: &str = "s-1";

fn post(h: &mut Harness, text: &str) -> RequestId {
    post_on(h, S1, text)
}

fn all_ready(h: &mut Harness) {
    all_ready_on(h, S1)
}
const S2: &str = "s-2";

/// The first part of an answer: started, text open, one delta; no finish yet.
fn partial_answer(message_id: &str) -> Vec<u8> {
    let full = sse(&[
        json!({"type": "start", "messageId": message_id}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Part"}),
    ]);
    full[..full.len() - "data: [DONE]\n\n".len()].to_vec()
}

fn thread_ids(h: &Harness) -> Vec<String> {
    h.snapshot().thread.iter().map(|m| m.id.clone()).collect()
}

fn user_texts(h: &Harness) -> Vec<String> {
    h.snapshot()
        .thread
        .iter()
        .filter(|m| m.role == engine_core::message::Role::User)
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| serde_json::to_value(p).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect()
}

/// SND-6: a session re-selected while its turn is still resolving posts its turn with the
/// canonical detail payload as `session`, as every turn does, even while the new selection's
/// detail read is still in flight.
#[test]
fn snd_6_reselected_mid_turn_still_carries_the_session_record() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let resolve = h.runtime_request(S1);
    h.requested(Some(S2));
    h.requested(Some(S1));
    // The new selection's detail and history are in flight; the send's access answers ready and
    // the confirmation is remembered, so the message request goes now.
    h.reply(resolve, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    let b = body(&h, id);
    assert_eq!(b["session"], record(S1, AGENT, ENV, 0), "{b:#}");
}

/// SND-15, RTA-2: after a message request with no answer the engine resolves runtime access for
/// the session again; that resolve is the send's own and is not held back while the chat is
/// hidden.
#[test]
fn snd_15_rta_2_recheck_after_no_answer_while_hidden() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.visible(false);
    let resolves = h.count(is_resolve);
    h.fail(id);
    assert_eq!(
        h.count(is_resolve),
        resolves + 1,
        "SND-15: a new resolve-runtime-access for the session\n{}",
        h.transcript()
    );
}

/// RTA-2, SND-9: a send already held keeps following its start while the chat is hidden: the
/// next check goes out after the decision's interval.
#[test]
fn rta_2_snd_9_held_send_keeps_following_its_start_while_hidden() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_transient("starting", Some(2_000)));
    assert!(h.snapshot().is_agent_working, "held");
    h.visible(false);
    let resolves = h.count(is_resolve);
    h.advance(2_000);
    assert!(
        h.count(is_resolve) > resolves,
        "the held send follows its start while hidden\n{}",
        h.transcript()
    );
}

/// RTA-3, RTA-14: a ready decision takes effect only once the Agent confirmed it. A send's
/// resolve that answers ready does not open admission before its own confirmation answers, and
/// a stop during that confirmation leaves no unconfirmed ready decision behind.
#[test]
fn rta_3_14_send_does_not_publish_an_unconfirmed_ready_decision() {
    let mut h = Harness::ready(S1);
    // The session's own check: the Agent is waking (a long interval keeps the poller quiet).
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_transient("waking", Some(30_000)));
    assert!(!h.snapshot().composer_admission);
    h.send("Hello");
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_ready(S1));
    let confirm = h.confirm_request(S1);
    assert!(
        !h.snapshot().composer_admission,
        "admission opened before the confirmation answered"
    );
    h.command(Command::CancelActiveSession);
    assert!(h.was_aborted(confirm));
    let s = h.snapshot();
    assert!(
        !s.composer_admission,
        "a ready decision nobody confirmed admits: {:?}",
        s.active_runtime_interaction
    );
}

/// HYD-11: a history answer that arrives while the session's answer streams is not applied,
/// also when the chat is hidden at that moment.
#[test]
fn hyd_11_history_answer_while_hidden_and_streaming_is_not_applied() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let resolve = h.runtime_request(S1);
    // Away and back while the send resolves: the new selection reads its history.
    h.requested(Some(S2));
    h.requested(Some(S1));
    let hist = h.history_request(S1);
    h.visible(false);
    h.reply(resolve, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    h.stream_head(id).chunk(id, &partial_answer("msg-1"));
    assert!(h.snapshot().has_active_chat_stream);
    h.reply(hist, 200, history(S1));
    let ids = thread_ids(&h);
    assert!(
        ids.iter().all(|m| m != "m-1"),
        "history applied while the answer streams: {ids:?}"
    );
    assert!(
        user_texts(&h).contains(&"Hello".to_owned()),
        "the person's message left the thread: {ids:?}"
    );
}

/// HYD-10, HYD-11, INV-10: a history read that went out before the turn's message request
/// cannot hold that turn; when it answers after the answer finished it does not wipe the turn
/// from the thread.
#[test]
fn hyd_10_11_history_read_before_the_turn_does_not_drop_it() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let resolve = h.runtime_request(S1);
    h.requested(Some(S2));
    h.requested(Some(S1));
    let hist = h.history_request(S1);
    let d = h.detail_request(S1);
    h.reply(d, 200, record(S1, AGENT, ENV, 0));
    h.reply(resolve, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    h.stream_head(id)
        .chunk(id, &answer("msg-1", "Hi there."))
        .end(id);
    assert!(thread_ids(&h).contains(&"msg-1".to_owned()));
    // The history read from before the turn answers only now.
    h.reply(hist, 200, history(S1));
    let ids = thread_ids(&h);
    assert!(
        ids.contains(&"msg-1".to_owned()),
        "the finished answer vanished from the thread: {ids:?}"
    );
}

/// SND-19, SND-25: when the engine's own run moved the session from working to idle, the queue
/// drains at once after the clean finish, even if a detail read during the run reported the
/// session working (that was this engine's own turn).
#[test]
fn snd_19_25_own_run_working_record_does_not_delay_the_drain() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    // Back in view: the detail is read again (HYD-13) and reports the turn this engine runs.
    h.visible(false).visible(true);
    let d = h.detail_request(S1);
    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    h.reply(d, 200, working);
    h.send("Second");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    let resolves = h.count(is_resolve);
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    assert_eq!(
        h.count(is_resolve),
        resolves + 1,
        "SND-19: the queued message leaves after the clean finish\n{}",
        h.transcript()
    );
}

/// SND-16: a stop clears the session's working state in the same step, even when a detail read
/// during the stopped run reported the session working (that was this engine's own run).
#[test]
fn snd_16_stop_clears_working_despite_a_working_record_of_the_own_run() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.visible(false).visible(true);
    let d = h.detail_request(S1);
    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    h.reply(d, 200, working);
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert!(!s.has_active_chat_stream);
    assert!(
        !s.is_agent_working,
        "SND-16: the working state is cleared by the stop"
    );
}

/// SND-24: `enqueueMessage(text)` with no session selected does not swallow the text: like a
/// send with nothing selected, it is handed back (nothing written is lost).
#[test]
fn snd_24_enqueue_with_nothing_selected_hands_the_text_back() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.current(), None);
    h.command(Command::EnqueueMessage {
        text: "Keep me".into(),
    });
    let handed_back = h
        .events()
        .iter()
        .any(|e| matches!(e, Event::MessageNotSent { text, .. } if text == "Keep me"));
    assert!(handed_back, "the text was dropped");
}

/// SND-19, SND-21, SND-22: a clean finish of a session re-selected while its answer streamed
/// drains the queue once the session is ready again; the queued message is not refused by the
/// send guard while the history is read after the stream, and the queue is not held.
#[test]
fn snd_19_drain_waits_for_the_history_read_after_the_stream() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.requested(Some(S2));
    h.requested(Some(S1));
    let d = h.detail_request(S1);
    h.reply(d, 200, record(S1, AGENT, ENV, 0));
    h.send("Second");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    assert_eq!(
        h.snapshot().message_queue_hold,
        None,
        "a clean finish must not hold the queue"
    );
    h.answer_history(S1);
    all_ready(&mut h);
    assert_eq!(texts_sent(&h), ["First", "Second"]);
}

/// SND-24: the queue holds at most ten messages; a row that goes back to the front after its
/// send could not start does not push it past ten.
#[test]
fn snd_24_put_back_never_exceeds_ten_rows() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    for i in 0..10 {
        h.send(&format!("q{i}"));
    }
    assert_eq!(h.snapshot().message_queue.len(), 10);
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    // q0 is on its way (resolving); the person writes again while the Agent works.
    let r = h.runtime_request(S1);
    h.send("late");
    // q0's access fails before its message request: it goes back to the front.
    h.reply(r, 500, json!({"detail": "Down."}));
    let s = h.snapshot();
    assert!(
        s.message_queue.len() <= 10,
        "{} rows wait: {:?}",
        s.message_queue.len(),
        s.message_queue.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
}

/// OI-20, SND-20: "Sending queued message {n} of {N}" counts the rows of the current burst; a
/// burst whose last row failed does not carry its count into the next one.
#[test]
fn snd_20_burst_count_restarts_after_a_failed_last_row() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("A");
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    let r = h.runtime_request(S1);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Sending queued message 1 of 1")
    );
    h.reply(r, 200, runtime_ready(S1));
    let a = h.message_request(S1);
    let failing = sse(&[
        json!({"type": "start", "messageId": "m-a"}),
        json!({"type": "error", "errorText": "Model overloaded."}),
    ]);
    h.stream_head(a).chunk(a, &failing).end(a);
    assert!(h.snapshot().message_queue.is_empty());
    // A new burst: a typed turn, one row queued behind it, a clean finish.
    let t = post(&mut h, "Typed");
    h.stream_head(t);
    h.send("B");
    h.chunk(t, &answer("msg-t", "Two.")).end(t);
    h.runtime_request(S1);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Sending queued message 1 of 1")
    );
}

/// SND-22: a stop of the session on screen holds its waiting queue as `stopped` (sanity check of
/// the hold reasons the review relies on).
#[test]
fn snd_22_stop_while_held_send_holds_the_queue_stopped() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_transient("waking", Some(2_000)));
    h.send("Next");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(
        s.message_queue_hold.map(|x| x.reason),
        Some(HoldReason::Stopped)
    );
    assert!(!s.is_agent_working);
    h.advance(60_000);
    all_ready(&mut h);
    assert!(texts_sent(&h).is_empty());
}

/// SND-18, SND-24: the queue is kept in the host's session storage as ADR 087 describes (OI-20:
/// storage of the queue follows ADR 087), so a reload does not lose what the person queued. The
/// check is shape-agnostic: some storage write carries the queued text.
#[test]
fn snd_18_queued_rows_reach_the_storage_port() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Queued while working");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    let written = serde_json::to_string(h.storage()).unwrap();
    assert!(
        written.contains("Queued while working"),
        "no storage write holds the queued row: {written}"
    );
}

/// SND-19: a run that finishes cleanly while the chat is hidden leaves its drain armed; the
/// first queued message goes once the chat is visible again (verified behaviour).
#[test]
fn snd_19_clean_finish_while_hidden_drains_when_shown() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Second");
    h.visible(false);
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    h.advance(5_000);
    assert_eq!(texts_sent(&h), ["First"], "nothing leaves while hidden");
    assert_eq!(h.snapshot().message_queue_hold, None);
    h.visible(true);
    all_ready(&mut h);
    assert_eq!(texts_sent(&h), ["First", "Second"]);
}

/// SND-10, SND-18, SND-19: a message written while a send is held waits in the queue; once the
/// held send went out and finished cleanly, the queued one follows, each requested once
/// (verified behaviour).
#[test]
fn snd_10_18_second_send_while_held_waits_then_drains() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_transient("starting", Some(1_000)));
    h.send("Then this");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    h.advance(1_000);
    all_ready(&mut h);
    h.advance(500);
    all_ready(&mut h);
    let id = h.message_request(S1);
    assert_eq!(texts_sent(&h), ["Hello"]);
    h.stream_head(id).chunk(id, &answer("msg-1", "Hi.")).end(id);
    all_ready(&mut h);
    let id2 = h.message_request(S1);
    h.stream_head(id2)
        .chunk(id2, &answer("msg-2", "Ok."))
        .end(id2);
    h.advance(60_000);
    all_ready(&mut h);
    assert_eq!(texts_sent(&h), ["Hello", "Then this"]);
    assert!(!h.snapshot().is_agent_working);
}

/// SHR-12, OI-4: once the wake is 30 s past its deadline the surface may say "This is taking
/// longer than expected." (`isRuntimeWakeOverdue`), on time (a timer), without changing the
/// notice or admission.
#[test]
fn shr_12_wake_overdue_on_time_without_changing_admission() {
    let mut h = Harness::ready(S1);
    let mut waking = runtime_transient("waking", Some(25_000));
    // The harness's wall clock starts at the Unix epoch.
    waking["runtime_presence"]["wake"] = json!({"operation_uid": "op-w", "state": "in_progress",
        "requested_at": "1970-01-01T00:00:00Z", "deadline_at": "1970-01-01T00:01:00Z"});
    h.script(move |call| match call {
        engine_core::ApiCall::ResolveRuntimeAccess { .. } => {
            Some((0, spec_tests::Reply::Json(200, waking.clone())))
        }
        _ => None,
    });
    let r = h.runtime_request(S1);
    let mut first = runtime_transient("waking", Some(25_000));
    first["runtime_presence"]["wake"] = json!({"operation_uid": "op-w", "state": "in_progress",
        "requested_at": "1970-01-01T00:00:00Z", "deadline_at": "1970-01-01T00:01:00Z"});
    h.reply(r, 200, first);
    let before = h.snapshot();
    assert!(!before.is_runtime_wake_overdue);
    h.advance(89_999 - h.now_ms());
    assert!(!h.snapshot().is_runtime_wake_overdue);
    // Polls fall at 25, 50, 75 and 100 s: only the engine's own timer marks 90 s.
    h.advance(1);
    let after = h.snapshot();
    assert!(after.is_runtime_wake_overdue);
    assert_eq!(
        after.active_runtime_interaction,
        before.active_runtime_interaction
    );
    assert_eq!(after.composer_admission, before.composer_admission);
}

/// S1 talking with its first turn's message request out (no head yet), then S2 loaded and
/// talking with its own message request out, and S1 shown again. Returns both requests.
fn two_turns_out(h: &mut Harness) -> (RequestId, RequestId) {
    let first = post(h, "First");
    h.requested(Some(S2));
    h.hydrate(S2, AGENT);
    h.runtime_ready(S2, 200);
    let second = post_on(h, S2, "Second");
    h.requested(Some(S1));
    (first, second)
}

/// INV-10, SND-7: runs are per session; the head of another session's answer does not start
/// this session's answer (cargo-mutants: the `posting` guard replaced by `true` survived).
#[test]
fn inv_10_another_sessions_head_does_not_start_this_answer() {
    let mut h = Harness::talking(S1);
    let (first, second) = two_turns_out(&mut h);
    let before = h.snapshot();
    assert_eq!(before.current_session_id.as_deref(), Some(S1));
    assert_eq!(
        before.run_status_detail.as_deref(),
        Some("Working on your request.")
    );
    h.stream_head(second);
    let s = h.snapshot();
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Working on your request.")
    );
    assert!(!h.was_aborted(first));
    // S1's own head starts its answer.
    h.stream_head(first);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Thinking...")
    );
}

/// SND-15, INV-10: after a message request with no answer the session resolves access again;
/// another session's resolve answer does not end that recheck (cargo-mutants: the
/// `rechecking` guard replaced by `true` survived).
#[test]
fn snd_15_another_sessions_resolve_does_not_end_a_recheck() {
    let mut h = Harness::talking(S1);
    let first = post(&mut h, "First");
    h.fail(first);
    let recheck = h.runtime_request(S1);
    h.requested(Some(S2));
    h.hydrate(S2, AGENT);
    h.runtime_ready(S2, 200);
    // S2's own send resolves access: its answer goes to every run.
    h.send("Second");
    let s2_resolve = h.runtime_request(S2);
    h.reply(s2_resolve, 200, runtime_ready(S2));
    assert!(
        !h.was_aborted(recheck),
        "S1's recheck was taken over by S2's answer"
    );
    assert!(h.pending(|c| matches!(c, engine_core::ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == S1)).is_some());
}

/// INV-10, SND-7: another session's streamed chunks do not go into this session's answer
/// (cargo-mutants: the `streaming` guard replaced by `true` survived).
#[test]
fn inv_10_another_sessions_chunks_stay_out_of_this_answer() {
    let mut h = Harness::talking(S1);
    let (first, second) = two_turns_out(&mut h);
    h.stream_head(first).stream_head(second);
    h.chunk(second, &answer("msg-2", "Meant for S2."));
    let shown = serde_json::to_string(&h.snapshot().thread).unwrap();
    assert!(!shown.contains("Meant for S2."), "{shown}");
    h.chunk(first, &answer("msg-1", "Meant for S1."));
    let shown = serde_json::to_string(&h.snapshot().thread).unwrap();
    assert!(shown.contains("Meant for S1."), "{shown}");
}

/// RU-42, RU-43: a `waking` decision whose wake's deadline passed over 30 s ago is overdue
/// ("This is taking longer than expected."); an old wake lends nothing to a later check: a
/// `checking` decision (retry 2 000 ms) whose presence failed ("The agent did not start in
/// time.") with a wake `expired` 39 minutes past its deadline is not overdue.
#[test]
fn ru_42_43_an_overdue_wake_and_an_old_one() {
    let wake = |state: &str, deadline: &str| {
        json!({"operation_uid": "op-w", "state": state,
            "requested_at": "1970-01-01T00:00:00Z", "deadline_at": deadline})
    };
    // The harness's wall clock starts at the Unix epoch: the wake's deadline is then, and the
    // test moves 60 s past it (RU-42's case).
    let mut h = Harness::ready(S1);
    let r = h.runtime_request(S1);
    let mut waking = runtime_transient("waking", Some(25_000));
    waking["runtime_presence"]["wake"] = wake("in_progress", "1970-01-01T00:00:00Z");
    h.reply(r, 200, waking);
    h.advance(60_000);
    assert!(h.snapshot().is_runtime_wake_overdue);

    let mut h = Harness::ready(S1);
    h.advance(40 * 60_000);
    let r = h.runtime_request(S1);
    let mut checking = runtime_transient("checking", Some(2_000));
    checking["runtime_presence"]["phase"] = json!("failed");
    checking["runtime_presence"]["detail"] = json!("The agent did not start in time.");
    checking["runtime_presence"]["wake"] = wake("expired", "1970-01-01T00:01:00Z");
    h.reply(r, 200, checking);
    let s = h.snapshot();
    assert!(s.is_assistant_runtime_starting, "a check is under way");
    assert!(
        !s.is_runtime_wake_overdue,
        "an expired wake is no overdue one"
    );
    h.advance(1_000);
    assert!(!h.snapshot().is_runtime_wake_overdue);
}
