#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! SND: sending, holding through a wake, streaming, cancelling and the queue; with the HYD, FAIL
//! and INV rules about sending.

use engine_core::api::InteractionState;
use engine_core::{ApiCall, Command, Event, HoldReason, NoticeVariant, RequestId, RunStatus};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{
    AGENT, ENV, RUNTIME_TOKEN, USER, answer, history, record, rpc_url, runtime_ready,
    runtime_terminal, runtime_transient, sse,
};
use spec_tests::turns::{all_ready_on, body, is_confirm, is_resolve, is_send, post_on, texts_sent};

const S1: &str = "s-1";

fn post(h: &mut Harness, text: &str) -> RequestId {
    post_on(h, S1, text)
}

fn all_ready(h: &mut Harness) {
    all_ready_on(h, S1)
}

fn not_sent_events(h: &Harness) -> Vec<(String, String)> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent { text, reason, .. } => Some((text.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

/// SND-1, SND-6, SND-7, OI-18: the message request is `POST {rpc_url}/api/chat` with the runtime
/// bearer and the ADR 060 body: the newest user message alone, `tools`, `runConfig`, `user_uid`,
/// `threadId`, `runtime_session_uid`, the record as `session`, `context`; nothing else.
#[test]
fn snd_1_6_7_the_message_request_and_its_body() {
    let mut h = Harness::talking(S1);
    h.input(engine_core::Input::ViewContext(Some(
        json!({"route": "/q3"}),
    )));
    let id = post(&mut h, "  Total for Q4?  ");
    let sent = h.request(id).request.clone();
    assert_eq!(sent.method.as_str(), "POST");
    assert_eq!(sent.url(), format!("{}/api/chat", rpc_url(S1)));
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {RUNTIME_TOKEN}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        body(&h, id),
        json!({
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Total for Q4?"}]}],
            "tools": {},
            "runConfig": {},
            "user_uid": USER,
            "threadId": S1,
            "runtime_session_uid": S1,
            "session": record(S1, AGENT, ENV, 0),
            "context": {"route": "/q3"},
        })
    );
    // The person never sees the runtime token in the request's printed forms.
    assert!(!format!("{sent:?}").contains(RUNTIME_TOKEN));

    // SND-1: the second turn carries only its own message, not the first or the answer.
    h.stream_head(id)
        .chunk(id, &answer("msg-a", "Q4 totals 5000."))
        .end(id);
    let second = post(&mut h, "And Q1?");
    let b = body(&h, second);
    assert_eq!(b["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(b["messages"][0]["content"][0]["text"], "And Q1?");
    assert_eq!(texts_sent(&h), ["Total for Q4?", "And Q1?"]);
}

/// SND-6, OI-18: `threadId` is the history's thread id; a selected reasoning effort goes in
/// `runConfig`; no `context` without a view context.
#[test]
fn snd_6_thread_id_from_history_and_run_config() {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let mut hist = history(S1);
    hist["session"]["threadId"] = json!("thread-77");
    let hid = h.history_request(S1);
    h.reply(hid, 200, hist);
    h.runtime_ready(S1, 200);
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("high".into()),
    });
    let id = post(&mut h, "Hi");
    let b = body(&h, id);
    assert_eq!(b["threadId"], "thread-77");
    assert_eq!(b["runConfig"], json!({"reasoning_effort": "high"}));
    assert!(b.get("context").is_none());
    assert!(b.get("newChat").is_none());
}

/// SND-2: before readiness is ready nothing is requested for a send; the turn fails with the
/// guard's text, no notify, and the text comes back.
#[test]
fn snd_2_send_guard_refuses_before_ready() {
    let mut h = Harness::selected(S1);
    let resolves = h.count(is_resolve);
    let mark = h.mark();
    h.send("Too early");
    assert!(h.sent_since(mark).is_empty(), "{:?}", h.sent_since(mark));
    assert_eq!(h.count(is_resolve), resolves);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    // RU-16: the guard's text, labelled.
    let text = "Source: Request was never sent. The session is still loading. Wait for it to finish before sending.";
    assert_eq!(s.run_status_detail.as_deref(), Some(text));
    assert!(h.notices().is_empty());
    assert_eq!(
        not_sent_events(&h),
        [("Too early".to_owned(), text.to_owned())]
    );
    // The message stays in the thread, marked as not sent.
    let last = s.thread.last().expect("the message");
    assert_eq!(
        last.parts,
        [engine_core::message::Part::done_text("Too early")]
    );
    assert!(
        matches!(&last.status, engine_core::message::MessageStatus::Failed { error } if error == text)
    );

    // A readiness error gives its own text, labelled as the guard's.
    let id = h.detail_request(S1);
    h.reply(id, 500, json!({"detail": "Database down."}));
    h.send("Still?");
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Source: Request was never sent. Database down.")
    );
    assert_eq!(h.count(is_send), 0);
}

/// SND-3, SND-4: every send first resolves runtime access; with a serving confirmation younger
/// than 15 s the message request follows the ready answer directly.
#[test]
fn snd_3_4_resolve_first_then_post_on_remembered_confirmation() {
    let mut h = Harness::talking(S1);
    h.advance(14_000);
    let mark = h.mark();
    h.send("Hello");
    let first: Vec<&str> = h
        .sent_since(mark)
        .iter()
        .map(|s| s.request.path.as_str())
        .collect();
    assert_eq!(
        first,
        [format!(
            "/api/v1/agent-sessions/{S1}/resolve-runtime-access/"
        )]
    );
    assert_eq!(h.count(is_send), 0);
    let id = h.runtime_request(S1);
    let confirms = h.count(is_confirm);
    h.reply(id, 200, runtime_ready(S1));
    assert_eq!(h.count(is_confirm), confirms, "no second confirmation");
    h.message_request(S1);
}

/// SND-5: past the 15 s memory the Agent is confirmed first; the message goes only after a
/// serving answer.
#[test]
fn snd_5_confirm_before_posting() {
    let mut h = Harness::talking(S1);
    h.advance(15_000);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_ready(S1));
    let confirm = h.confirm_request(S1);
    assert_eq!(h.count(is_send), 0);
    h.reply_raw(confirm, 405, None, b"", None);
    h.message_request(S1);
}

/// SND-5, SND-9, RTA-17: a non-serving confirmation holds the send under the engine's waking
/// decision; nothing is posted.
#[test]
fn snd_5_9_non_serving_confirmation_holds_the_send() {
    let mut h = Harness::talking(S1);
    h.advance(15_000);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_ready(S1));
    let confirm = h.confirm_request(S1);
    h.reply_raw(confirm, 503, None, b"", None);
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.map(|i| i.state),
        Some(InteractionState::Waking)
    );
    assert!(s.is_assistant_runtime_starting);
    assert!(s.is_agent_working, "a held send is a running turn");
    h.advance(2_000);
    assert_eq!(h.count(is_send), 0);
}

/// SND-9, SND-10: a transient answer holds the send and publishes the decision; polling follows;
/// once the decision is ready the send runs again and its message goes exactly once.
#[test]
fn snd_9_10_held_send_goes_once_when_ready() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_transient("starting", Some(2_000)));
    assert_eq!(h.count(is_send), 0);
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.map(|i| i.state),
        Some(InteractionState::Starting)
    );
    assert!(s.is_assistant_runtime_starting);
    // Polling follows the start: the next check after the interval.
    let resolves = h.count(is_resolve);
    h.advance(1_999);
    assert_eq!(h.count(is_resolve), resolves);
    h.advance(1);
    assert_eq!(h.count(is_resolve), resolves + 1);
    // A second transient answer keeps it held.
    let poll = h.runtime_request(S1);
    h.reply(poll, 200, runtime_transient("starting", Some(2_000)));
    h.advance(2_000);
    assert_eq!(h.count(is_send), 0);
    // Ready and confirmed: the held send runs again (a new resolve), then posts once.
    all_ready(&mut h);
    assert_eq!(h.count(is_send), 0);
    h.advance(500);
    let again = h.runtime_request(S1);
    h.reply(again, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    h.stream_head(id).chunk(id, &answer("msg-1", "Hi.")).end(id);
    h.advance(60_000);
    assert_eq!(texts_sent(&h), ["Hello"]);
    assert_eq!(h.snapshot().run_status, RunStatus::Complete);
}

/// SND-11, OI-6: a terminal first answer fails the send at once, with the decision's notice, and
/// is not held.
#[test]
fn snd_11_terminal_first_answer_fails_at_once() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_terminal(Some("SR-1")));
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Source: Request was never sent. Ledger Helper could not be updated.")
    );
    assert!(!s.is_agent_working);
    let resolves = h.count(is_resolve);
    h.advance(120_000);
    assert_eq!(h.count(is_resolve), resolves, "not held, nothing polled");
    assert_eq!(h.count(is_send), 0);
    assert_eq!(not_sent_events(&h).len(), 1);
}

/// SND-11, OI-6, ADR 093 rule 9 (adr-notes 3): a held send whose shared decision settles to a
/// blocked one fails once as "not sent", in the notice's words, with no second attempt: no new
/// resolve-runtime-access of its own and no message request.
#[test]
fn snd_11_held_send_fails_when_the_decision_turns_terminal() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_transient("updating", Some(1_000)));
    h.advance(1_000);
    let poll = h.runtime_request(S1);
    h.reply(poll, 200, runtime_terminal(None));
    let resolves = h.count(is_resolve);
    h.advance(500);
    let s = h.snapshot();
    let text = "Source: Request was never sent. Ledger Helper could not be updated. Your message was not sent; send it again when the agent is ready.";
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(s.run_status_detail.as_deref(), Some(text));
    let failure = s.run_failure.expect("a typed failure");
    assert_eq!(failure.code.as_str(), "runtime_request_not_sent");
    assert_eq!(failure.message, text);
    assert_eq!(
        not_sent_events(&h),
        vec![("Hello".to_owned(), text.to_owned())]
    );
    h.advance(5_000);
    assert_eq!(h.count(is_resolve), resolves, "no second attempt");
    assert_eq!(h.count(is_send), 0);
}

/// SND-12, adr-notes 8: cancelling a held send ends it unsent: the run shows "Run cancelled."
/// (a stop, not a failure), and the text comes back with the held-send words; no message
/// request follows.
#[test]
fn snd_12_cancel_fails_a_held_send() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_transient("waking", Some(2_000)));
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert!(!s.is_agent_working);
    assert_eq!(s.run_status, RunStatus::Idle);
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    assert_eq!(s.run_failure, None);
    let text = "Source: Request was never sent. Ledger Helper is starting. Your message was not sent; send it again when the agent is ready.";
    assert_eq!(
        not_sent_events(&h),
        vec![("Hello".to_owned(), text.to_owned())]
    );
    assert!(h.events().iter().any(|e| matches!(e,
        Event::MessageNotSent { code, .. } if code.as_str() == "runtime_request_not_sent")));
    // The Agent becomes ready: the failed send stays unsent.
    all_ready(&mut h);
    h.advance(2_000);
    all_ready(&mut h);
    h.advance(5_000);
    assert_eq!(h.count(is_send), 0);
}

/// SND-13, OI-4: a hold without a wake deadline ends twelve minutes after it began.
#[test]
fn snd_13_hold_deadline_without_a_wake() {
    let mut h = Harness::talking(S1);
    h.script(|call| match call {
        ApiCall::ResolveRuntimeAccess { .. } => Some((
            10,
            spec_tests::Reply::Json(200, runtime_transient("starting", Some(30_000))),
        )),
        _ => None,
    });
    h.send("Hello");
    // Blocked at 10 ms: the deadline is 720 010 ms, and strict (OI-4): the read at the deadline
    // itself still holds, the next one (500 ms later) ends the hold.
    h.advance(720_010 - h.now_ms());
    assert!(h.snapshot().is_agent_working);
    h.advance(500);
    let s = h.snapshot();
    assert!(!s.is_agent_working);
    assert_eq!(
        s.run_failure.map(|f| f.code.as_str()),
        Some("runtime_request_not_sent")
    );
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some(
            "Source: Request was never sent. Ledger Helper is starting. Your message was not sent; send it again when the agent is ready."
        )
    );
    assert_eq!(h.count(is_send), 0);
}

/// SND-13, OI-4: with a wake in the presence the hold ends 30 s after its deadline.
#[test]
fn snd_13_hold_deadline_follows_the_wake() {
    let mut h = Harness::talking(S1);
    let mut waking = runtime_transient("waking", Some(30_000));
    // The engine's wall clock starts at the Unix epoch (Config::start_unix_ms = 0).
    waking["runtime_presence"]["wake"] = json!({"operation_uid": "op-w", "state": "in_progress",
        "requested_at": "1970-01-01T00:00:00Z", "deadline_at": "1970-01-01T00:01:00Z"});
    h.script(move |call| match call {
        ApiCall::ResolveRuntimeAccess { .. } => {
            Some((0, spec_tests::Reply::Json(200, waking.clone())))
        }
        _ => None,
    });
    h.send("Hello");
    // deadline_at + 30 s = 90 000 ms; overdue only strictly after it (OI-4).
    h.advance(90_000 - h.now_ms());
    assert!(
        h.snapshot().is_agent_working,
        "not yet overdue at the deadline itself"
    );
    h.advance(500);
    assert!(!h.snapshot().is_agent_working);
    assert_eq!(h.count(is_send), 0);
}

/// SND-14, SND-15, INV-8: a message request with no answer is never requested again; the
/// confirmation is forgotten and the session checked again (then confirmed again).
#[test]
fn snd_14_15_no_answer_is_never_resent() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    let resolves = h.count(is_resolve);
    h.fail(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(h.count(is_resolve), resolves + 1, "checked again at once");
    let confirms = h.count(is_confirm);
    let check = h.runtime_request(S1);
    h.reply(check, 200, runtime_ready(S1));
    assert_eq!(
        h.count(is_confirm),
        confirms + 1,
        "the confirmation was forgotten"
    );
    h.advance(600_000);
    assert_eq!(texts_sent(&h), ["Hello"]);
    // Not handed back as unsent: it went out.
    assert!(not_sent_events(&h).is_empty());
}

/// SND-16, SND-17, OI-19: cancel stops the local run in the same step, before the cancel
/// request; chunks that arrive afterwards are not applied.
#[test]
fn snd_16_17_cancel_stops_first_then_asks_the_agent() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    let first = sse(&[
        json!({"type": "start", "messageId": "msg-c"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Par"}),
    ]);
    let cut = first.len() - "data: [DONE]\n\n".len();
    h.chunk(id, &first[..cut]);
    assert!(h.snapshot().has_active_chat_stream);
    let mark = h.mark();
    h.command(Command::CancelActiveSession);
    assert!(h.was_aborted(id));
    let s = h.snapshot();
    assert!(!s.has_active_chat_stream && !s.is_agent_working);
    assert_eq!(s.run_status, RunStatus::Idle);
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    let after = h.sent_since(mark).to_vec();
    assert_eq!(after.len(), 1);
    let cancel = &after[0];
    assert_eq!(
        cancel.request.url(),
        format!("{}/api/chat/session/cancel", rpc_url(S1))
    );
    assert_eq!(
        cancel.request.header("authorization"),
        Some(format!("Bearer {RUNTIME_TOKEN}").as_str())
    );
    assert_eq!(cancel.request.header("accept"), Some("application/json"));
    assert_eq!(
        body(&h, cancel.id),
        json!({"runtime_session_uid": S1, "thread_id": S1, "user_uid": USER,
               "reason": "user_requested", "message": "User pressed stop."})
    );
    assert!(s.is_cancelling_session);
    // A late chunk of the stopped answer changes nothing.
    let thread = h.snapshot().thread;
    h.chunk(
        id,
        b"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"tial\"}\n\n",
    );
    assert_eq!(h.snapshot().thread, thread);
    h.reply(cancel.id, 200, json!({"status": "cancelled"}));
    assert!(!h.snapshot().is_cancelling_session);
    assert!(h.notices().is_empty());
}

/// RU-22 (replacing OI-19's "no running work"), SND-17: with a platform session selected, Stop
/// sends the cancel request even when nothing runs: idle, "Run cancelled.",
/// `isCancellingSession`, no notify; the same body as any cancel; after a 2xx "Run cancellation
/// requested." and `isCancellingSession` false.
#[test]
fn ru_22_a_stop_with_nothing_running_still_asks_the_agent() {
    let mut h = Harness::talking(S1);
    let mark = h.mark();
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Idle);
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    assert!(s.is_cancelling_session);
    assert!(!s.is_agent_working && !s.has_active_chat_stream);
    assert!(h.notices().is_empty(), "{:?}", h.notices());
    let after = h.sent_since(mark).to_vec();
    assert_eq!(after.len(), 1, "one request: the cancel");
    assert_eq!(
        after[0].request.url(),
        format!("{}/api/chat/session/cancel", rpc_url(S1))
    );
    assert_eq!(
        body(&h, after[0].id),
        json!({"runtime_session_uid": S1, "thread_id": S1, "user_uid": USER,
               "reason": "user_requested", "message": "User pressed stop."})
    );
    h.reply(after[0].id, 200, json!({"status": "idle"}));
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Idle);
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Run cancellation requested.")
    );
    assert!(!s.is_cancelling_session);
    assert!(h.notices().is_empty());
}

/// RU-24: only with no session selected does Stop send nothing and notify "Unable to stop
/// session" / "There is no running work to stop." (variant error).
#[test]
fn ru_24_a_stop_with_no_session_notifies() {
    let mut h = Harness::new();
    assert_eq!(h.snapshot().current_session_id, None);
    let mark = h.mark();
    h.command(Command::CancelActiveSession);
    assert!(h.sent_since(mark).is_empty());
    let n = h.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Unable to stop session");
    assert_eq!(
        n[0].description.as_deref(),
        Some("There is no running work to stop.")
    );
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(!h.snapshot().is_cancelling_session);
}

/// SND-17, SND-23, OI-19: a refused cancel is repeated once after a fresh resolve; a failure sets
/// the run status and `sessionNotice`, without a notify.
#[test]
fn snd_17_23_cancel_refused_then_failed() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 401, json!({"detail": "Expired."}));
    let again = h.runtime_request(S1);
    h.reply(again, 200, runtime_ready(S1));
    let cancel2 = h.cancel_request(S1);
    assert_ne!(cancel, cancel2);
    h.reply(cancel2, 403, json!({"detail": "Still no."}));
    let s = h.snapshot();
    // RU-17, RU-19, RU-23: the full text, unlabelled.
    let text = "Agent session cancellation request failed. Status: HTTP 403 Forbidden. Call: POST https://rt.test/agents/s-1/api/chat/session/cancel. Server response: Still no.";
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(s.run_status_detail.as_deref(), Some(text));
    assert_eq!(s.session_notice.as_deref(), Some(text));
    assert!(h.notices().is_empty());
    assert_eq!(h.count(|c| matches!(c, ApiCall::CancelRun { .. })), 2);
}

/// SND-17, OI-19: the cancel is given up after 10 s.
#[test]
fn snd_17_cancel_gives_up_after_ten_seconds() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = h.cancel_request(S1);
    h.advance(9_999);
    assert!(h.snapshot().is_cancelling_session);
    h.advance(1);
    assert!(h.was_aborted(cancel));
    let s = h.snapshot();
    assert!(!s.is_cancelling_session);
    assert_eq!(
        s.session_notice.as_deref(),
        Some("Session cancellation request failed.")
    );
}

/// SND-18, SND-19, SND-20, OI-20: messages written while the Agent works wait; after a clean
/// finish the first goes as its own turn, the next only after that turn finished.
#[test]
fn snd_18_19_20_queue_drains_one_turn_at_a_time() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    let resolves = h.count(is_resolve);
    h.send("Second").send("Third");
    assert_eq!(
        h.count(is_resolve),
        resolves,
        "nothing requested while the Agent works"
    );
    let s = h.snapshot();
    let queued: Vec<&str> = s.message_queue.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(queued, ["Second", "Third"]);
    assert_eq!(s.queued_message_count_by_session_id.get(S1), Some(&2));
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    // The first queued message leaves as its own turn.
    let second = h.runtime_request(S1);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Sending queued message 1 of 2")
    );
    h.reply(second, 200, runtime_ready(S1));
    let id2 = h.message_request(S1);
    assert_eq!(texts_sent(&h), ["First", "Second"]);
    h.advance(1_000);
    assert_eq!(h.count(is_send), 2, "the third waits for the second turn");
    h.stream_head(id2)
        .chunk(id2, &answer("msg-2", "Two."))
        .end(id2);
    h.advance(100);
    let third = h.runtime_request(S1);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Sending queued message 2 of 2")
    );
    h.reply(third, 200, runtime_ready(S1));
    h.message_request(S1);
    assert_eq!(texts_sent(&h), ["First", "Second", "Third"]);
    assert!(h.snapshot().message_queue.is_empty());
}

/// SND-21: a queued message passes the same gates: its transient decision holds it.
#[test]
fn snd_21_queued_message_is_held_through_a_wake() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Second");
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_transient("starting", Some(2_000)));
    assert!(h.snapshot().is_assistant_runtime_starting);
    h.advance(1_500);
    assert_eq!(texts_sent(&h), ["First"]);
}

/// SND-22, OI-20: after a failed run the queue is held and sends nothing, not even after a later
/// clean run; `sendNextQueuedMessage()` releases it.
#[test]
fn snd_22_failed_run_holds_the_queue() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Second");
    let failing = sse(&[
        json!({"type": "start", "messageId": "m"}),
        json!({"type": "error", "errorText": "Model overloaded."}),
    ]);
    h.chunk(id, &failing).end(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Source: Receiving the Agent's reply. Model overloaded.")
    );
    let hold = s.message_queue_hold.expect("held");
    assert_eq!(hold.reason, HoldReason::Failed);
    h.advance(30_000);
    assert_eq!(texts_sent(&h), ["First"]);
    // A typed message while idle goes out directly; the held row still waits after it.
    h.send("Typed");
    all_ready(&mut h);
    let id2 = h.message_request(S1);
    h.stream_head(id2).chunk(id2, &answer("m2", "Ok.")).end(id2);
    h.advance(5_000);
    assert_eq!(texts_sent(&h), ["First", "Typed"]);
    h.command(Command::SendNextQueuedMessage);
    all_ready(&mut h);
    h.message_request(S1);
    assert_eq!(texts_sent(&h), ["First", "Typed", "Second"]);
}

/// SND-22, OI-20: stopping the run of the session on screen holds its queue as `stopped`.
#[test]
fn snd_22_stop_holds_the_queue() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Second");
    h.command(Command::CancelActiveSession);
    let hold = h.snapshot().message_queue_hold.expect("held");
    assert_eq!(hold.reason, HoldReason::Stopped);
    h.advance(30_000);
    assert_eq!(texts_sent(&h), ["First"]);
}

/// SND-23: a 401 or 403 to the message request resolves access again and repeats it once with
/// the new token; a second one is a plain failure.
#[test]
fn snd_23_refused_message_request_is_repeated_once() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.reply(id, 401, json!({"detail": "Token expired."}));
    let again = h.runtime_request(S1);
    let mut fresh = runtime_ready(S1);
    fresh["token"] = json!("rt-token-fresh");
    h.reply(again, 200, fresh);
    let id2 = h.message_request(S1);
    assert_eq!(
        h.request(id2).request.header("authorization"),
        Some("Bearer rt-token-fresh")
    );
    h.reply(id2, 403, json!({"detail": "Forbidden."}));
    let s = h.snapshot();
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some(
            "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 403 Forbidden. Call: POST https://rt.test/agents/s-1/api/chat. Server response: Forbidden."
        )
    );
    h.advance(60_000);
    assert_eq!(texts_sent(&h), ["Hello", "Hello"]);
}

/// SND-24, OI-20: ten rows at most; the eleventh is refused with the "queue is full" notify; an
/// empty text is refused silently.
#[test]
fn snd_24_queue_limit_and_empty_text() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    for i in 0..10 {
        h.send(&format!("q{i}"));
    }
    assert!(h.notices().is_empty());
    h.send("eleventh");
    h.send("   ");
    let s = h.snapshot();
    assert_eq!(s.message_queue.len(), 10);
    assert!(s.message_queue.iter().all(|r| r.text != "eleventh"));
    let n = h.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "The queue is full");
    assert_eq!(
        n[0].description.as_deref(),
        Some("Send or remove a message first.")
    );
    assert_eq!(n[0].variant, engine_core::NoticeVariant::Info);
    // The refused text comes back to the host; the empty one is dropped silently.
    assert_eq!(
        not_sent_events(&h),
        [(
            "eleventh".to_owned(),
            "The queue is full. Send or remove a message first.".to_owned()
        )]
    );
}

/// SND-25, SND-18: while another writer works (the record reports working) a message waits; the
/// detail is read every 10 s, and once it reports idle the queue drains without a history read.
#[test]
fn snd_25_other_writer_then_drain() {
    let mut h = Harness::selected(S1);
    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    h.answer_detail(S1, working.clone());
    let id = h.history_request(S1);
    h.reply(id, 200, spec_tests::fixtures::running_history(S1));
    let ins = h.insights_request(S1);
    h.reply(ins, 200, spec_tests::fixtures::insights(S1));
    h.runtime_ready(S1, 200);
    assert!(h.snapshot().is_agent_working);
    h.send("Wait for it");
    assert_eq!(h.snapshot().message_queue.len(), 1);
    let details = h.count(|c| matches!(c, ApiCall::GetSessionDetail { .. }));
    h.advance(9_999);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::GetSessionDetail { .. })),
        details
    );
    h.advance(1);
    let d = h.detail_request(S1);
    h.reply(d, 200, working);
    assert_eq!(h.count(is_resolve), 1, "still waiting");
    h.advance(10_000);
    let histories = h.count(|c| matches!(c, ApiCall::GetSessionHistory { .. }));
    let d = h.detail_request(S1);
    h.reply(d, 200, record(S1, AGENT, ENV, 0));
    all_ready(&mut h);
    h.message_request(S1);
    assert_eq!(texts_sent(&h), ["Wait for it"]);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::GetSessionHistory { .. })),
        histories
    );
}

/// HYD-10: while its answer streams, re-selecting a session reads no history; the read goes out
/// once the answer is over.
#[test]
fn hyd_10_no_history_request_while_streaming() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    h.requested(Some("s-2"));
    assert_eq!(h.current().as_deref(), Some("s-2"));
    let histories =
        h.count(|c| matches!(c, ApiCall::GetSessionHistory { session_uid } if session_uid == S1));
    h.requested(Some(S1));
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::GetSessionHistory { session_uid } if session_uid == S1)),
        histories
    );
    // The streaming answer is still shown for the session.
    h.chunk(id, &answer("msg-1", "Streaming on."));
    let thread = h.snapshot().thread;
    assert!(thread.iter().any(|m| m.id == "msg-1"));
    h.end(id);
    h.history_request(S1);
}

/// HYD-11: a history answer that arrives while the session's answer streams is not applied.
#[test]
fn hyd_11_history_answer_during_streaming_is_dropped() {
    let mut h = Harness::talking(S1);
    h.advance(15_000);
    h.send("Hello");
    // Away and back while the send resolves: the history of the new selection goes out.
    h.requested(Some("s-2"));
    h.requested(Some(S1));
    let hist = h.history_request(S1);
    let r = h.runtime_request(S1);
    // The selection's own check may be the newest resolve; answer every open one ready.
    h.reply(r, 200, runtime_ready(S1));
    while let Some(r) = h.pending(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. })) {
        h.reply(r, 200, runtime_ready(S1));
    }
    while let Some(c) = h.pending(is_confirm) {
        h.reply_raw(c, 200, None, b"", None);
    }
    let id = h.message_request(S1);
    h.stream_head(id);
    h.reply(hist, 200, history(S1));
    let thread = h.snapshot().thread;
    assert!(
        thread.iter().all(|m| m.id != "m-1"),
        "history not applied: {thread:?}"
    );
    h.chunk(id, &answer("msg-1", "Done.")).end(id);
    // Read again after the answer.
    h.history_request(S1);
}

/// INV-7: every message request follows a serving confirmation to the same chat URL less than
/// 15 s earlier.
#[test]
fn inv_7_post_follows_a_young_serving_confirmation() {
    let mut h = Harness::talking(S1);
    for i in 0..4 {
        h.advance(7_000);
        let id = post_or_confirm(&mut h, &format!("m{i}"));
        h.stream_head(id)
            .chunk(id, &answer(&format!("a{i}"), "ok"))
            .end(id);
    }
    let sent = h.sent().to_vec();
    for (i, s) in sent.iter().enumerate() {
        if !is_send(&s.call) {
            continue;
        }
        let ok = sent[..i].iter().any(|c| {
            is_confirm(&c.call)
                && c.request.base == s.request.base
                && s.at_ms.saturating_sub(c.at_ms) < 15_000
        });
        assert!(ok, "POST at {} ms without a young confirmation", s.at_ms);
    }
}

fn post_or_confirm(h: &mut Harness, text: &str) -> RequestId {
    h.send(text);
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_ready(S1));
    if let Some(c) = h.pending(is_confirm) {
        h.reply_raw(c, 200, None, b"", None);
    }
    h.message_request(S1)
}

/// The request sequence as shapes: method, target, path with ids replaced, header names, and
/// the body's keys (recursively for `messages`), with the session's own ids masked.
fn shapes(h: &Harness, uid: &str) -> Vec<String> {
    h.sent()
        .iter()
        .filter(|s| !matches!(s.call, ApiCall::ListSessions { .. }))
        .map(|s| {
            let r = &s.request;
            let path = r.url().replace(&rpc_url(uid), "{rpc}").replace(uid, "{id}");
            let headers: Vec<&str> = r.headers.iter().map(|h| h.name()).collect();
            let keys = r
                .body
                .as_ref()
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
                .unwrap_or_default();
            format!(
                "{} {:?} {path} {headers:?} {keys:?}",
                r.method.as_str(),
                r.target
            )
        })
        .collect()
}

fn flow(uid: &str, agent: &str, name: &str, agent_type: &str) -> Harness {
    let mut h = Harness::visible_in_env();
    let mut rec = record(uid, agent, ENV, 0);
    rec["agent_name"] = json!(name);
    rec["agent_type"] = json!(agent_type);
    rec["engine_name"] = json!(agent_type);
    h.answer_list(std::slice::from_ref(&rec));
    h.answer_detail(uid, rec);
    h.answer_history(uid);
    let ins = h.insights_request(uid);
    h.reply(ins, 200, spec_tests::fixtures::insights(uid));
    h.runtime_ready(uid, 200);
    h.send("Hello");
    let r = h.runtime_request(uid);
    h.reply(r, 200, runtime_ready(uid));
    let id = h.message_request(uid);
    h.stream_head(id).chunk(id, &answer("m", "Hi.")).end(id);
    h
}

/// SND-8, INV-1: Agents that differ only in identity, name or type go through the same request
/// kinds, from selection to a streamed answer: methods, paths, headers and body layout.
#[test]
fn snd_8_inv_1_one_contract_for_every_agent() {
    let a = flow("s-1", AGENT, "Ledger Helper", "tau");
    let b = flow("s-9", "agent-zz", "Code Reviewer", "coding_agent");
    let (sa, sb) = (shapes(&a, "s-1"), shapes(&b, "s-9"));
    assert!(
        sa.iter()
            .any(|s| s.starts_with("POST AgentRuntime {rpc}/api/chat")),
        "{sa:#?}"
    );
    assert_eq!(sa, sb);
    assert_eq!(a.snapshot().run_status, b.snapshot().run_status);
}

/// RTA-8: while the decision is transient no message request is emitted, and when it turns
/// ready the engine sends nothing on its own (the draft belongs to the host).
#[test]
fn rta_8_nothing_is_sent_on_the_persons_behalf() {
    let mut h = Harness::ready(S1);
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_transient("waking", Some(1_000)));
    assert!(!h.snapshot().composer_admission);
    h.advance(1_000);
    all_ready(&mut h);
    assert!(h.snapshot().composer_admission);
    h.advance(120_000);
    all_ready(&mut h);
    assert_eq!(h.count(is_send), 0);
    assert!(h.snapshot().message_queue.is_empty());
}

/// SND-22, OI-20: moving to another session while messages wait holds them (`away`); coming
/// back does not release them, `sendNextQueuedMessage()` does.
#[test]
fn snd_22_moving_away_holds_the_queue() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    h.send("Second");
    h.requested(Some("s-2"));
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    h.requested(Some(S1));
    let s = h.snapshot();
    assert_eq!(
        s.message_queue_hold.map(|x| x.reason),
        Some(HoldReason::Away)
    );
    h.hydrate(S1, AGENT);
    h.advance(20_000);
    all_ready(&mut h);
    assert_eq!(texts_sent(&h), ["First"]);
    h.command(Command::SendNextQueuedMessage);
    all_ready(&mut h);
    h.message_request(S1);
    assert_eq!(texts_sent(&h), ["First", "Second"]);
}

/// SND-24, OI-20: the queue's own commands: edit hands the text back, reorder clamps, remove and
/// clear drop rows; nothing is sent by them.
#[test]
fn snd_24_queue_commands() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "First");
    h.stream_head(id);
    for t in ["a", "b", "c"] {
        h.send(t);
    }
    let ids: Vec<String> = h
        .snapshot()
        .message_queue
        .iter()
        .map(|r| r.id.clone())
        .collect();
    h.command(Command::ReorderQueuedMessage {
        id: ids[2].clone(),
        to_index: 0,
    });
    h.command(Command::ReorderQueuedMessage {
        id: ids[0].clone(),
        to_index: 99,
    });
    let texts = |h: &Harness| -> Vec<String> {
        h.snapshot()
            .message_queue
            .iter()
            .map(|r| r.text.clone())
            .collect()
    };
    assert_eq!(texts(&h), ["c", "b", "a"]);
    h.command(Command::EditQueuedMessage { id: ids[1].clone() });
    assert!(h.events().iter().any(|e| matches!(e,
        Event::QueuedMessageReturned { id, text, .. } if *id == ids[1] && text == "b")));
    assert_eq!(texts(&h), ["c", "a"]);
    h.command(Command::RemoveQueuedMessage { id: ids[2].clone() });
    assert_eq!(texts(&h), ["a"]);
    h.command(Command::ClearMessageQueue);
    assert!(texts(&h).is_empty());
    assert!(h.snapshot().queued_message_count_by_session_id.is_empty());
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    h.advance(20_000);
    assert_eq!(texts_sent(&h), ["First"]);
}

/// SND-7: the whole send, transcribed: access, the message request, the streamed answer
/// as events, and the snapshot fields that follow it.
#[test]
fn snd_transcript_send_and_stream() {
    let mut h = Harness::talking(S1);
    let mark = h.transcript().lines().count();
    let id = post(&mut h, "How did Q3 go?");
    h.stream_head(id);
    let body = answer("msg-7", "Q3 revenue rose 4%.");
    let (a, b) = body.split_at(60);
    h.chunk(id, a).chunk(id, b).end(id);
    let transcript = h.transcript();
    let tail: Vec<&str> = transcript.lines().skip(mark).collect();
    insta::assert_snapshot!(tail.join("\n"));
}

/// SND-14, SND-23: an error answer whose body breaks off is still an answer: a 409 fails the
/// turn with its status (no re-check, as for no answer), and a 401 gets its one repeat.
#[test]
fn snd_14_23_broken_error_body_is_an_answer() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.head(id, 409);
    let resolves = h.count(is_resolve);
    h.broken(id);
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some(
            "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 409 Conflict. Call: POST https://rt.test/agents/s-1/api/chat. Server response: Chat stream failed with status 409."
        )
    );
    assert_eq!(
        h.count(is_resolve),
        resolves,
        "an answer: no SND-15 re-check"
    );
    let id = post(&mut h, "Again");
    h.head(id, 401);
    h.broken(id);
    let r = h.runtime_request(S1);
    h.reply(r, 200, runtime_ready(S1));
    h.message_request(S1);
    assert_eq!(texts_sent(&h), ["Hello", "Again", "Again"]);
}
