#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Reference parity (issue 11) for a turn's life: the run status step by step (adr-notes 6 "run
//! status", adr-notes 8 "Run status details"), the stop (adr-notes 8, OI-19, SND-16, SND-17),
//! typed send failures (a stable code beside every failure text), and `clearThread()`
//! (adr-notes 6). Each test names the adr-notes section and the rule IDs it checks.

use engine_core::message::{MessageStatus, Part, PartState, ToolState};
use engine_core::{ApiCall, Command, Config, Event, FailureCode, RunStatus, Snapshot};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{
    AGENT, ENV, USER, history, insights, record, runtime_ready, runtime_terminal,
    runtime_unavailable,
};
use spec_tests::turns::{body, is_send, post_on};

const S1: &str = "s-1";

fn post(h: &mut Harness, text: &str) -> engine_core::RequestId {
    post_on(h, S1, text)
}

fn status(s: &Snapshot) -> (RunStatus, Option<&str>) {
    (s.run_status, s.run_status_detail.as_deref())
}

fn events_since(h: &Harness, from: usize) -> Vec<Event> {
    h.events()[from..].to_vec()
}

fn chunk_of(h: &mut Harness, id: engine_core::RequestId, chunk: Value) {
    h.chunk(id, format!("data: {chunk}\n\n").as_bytes());
}

/// The failures reported so far, as (code, text, sent).
fn run_failures(h: &Harness) -> Vec<(FailureCode, String, bool)> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::RunFailed { failure, sent, .. } => {
                Some((failure.code, failure.message.clone(), *sent))
            }
            _ => None,
        })
        .collect()
}

/// The texts handed back so far, as (text, code).
fn handed_back(h: &Harness) -> Vec<(String, FailureCode)> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent { text, code, .. } => Some((text.clone(), *code)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Point 1: the run status, step by step
// ---------------------------------------------------------------------------------------------

/// adr-notes 6 (run status), adr-notes 8 (Run status details), SND-3, SND-7: `queued` "Working
/// on your request." until the answer's head arrives (not while access resolves or the message
/// request waits), then `queued` "Thinking..."; `thinking` while reasoning streams, with the
/// reasoning as `thinkingSummary`; `responding` "Writing a response..." while text streams; a
/// tool status line while a tool runs ("Using MCP tool {name}" for the Main Sequence MCP,
/// "Running {tool}" otherwise; RU-7: from the AI SDK's `tool-input-available`, not its
/// `tool-input-start` or `-delta`), then "Thinking..." when its output comes (RU-12); `complete`
/// "Run completed." after a clean finish. `hasVisibleAssistantOutput` is false until the answer
/// shows something.
#[test]
fn run_status_follows_the_answer_step_by_step() {
    let mut h = Harness::talking(S1);
    h.send("Plan Q4");
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Queued, Some("Working on your request."))
    );
    assert!(!s.has_visible_assistant_output);
    assert_eq!(s.thinking_summary, None);
    let resolve = h.runtime_request(S1);
    h.reply(resolve, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    // The message request is out, its head has not come: still "Working on your request.".
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Queued, Some("Working on your request."))
    );
    h.stream_head(id);
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Queued, Some("Thinking..."))
    );
    assert!(!h.snapshot().has_visible_assistant_output);

    chunk_of(&mut h, id, json!({"type": "start", "messageId": "msg-1"}));
    chunk_of(&mut h, id, json!({"type": "reasoning-start", "id": "r-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "reasoning-delta", "id": "r-1", "delta": "  Weighing the ledger.  "}),
    );
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Thinking, Some("Thinking...")));
    assert_eq!(s.thinking_summary.as_deref(), Some("Weighing the ledger."));
    assert!(s.has_visible_assistant_output);
    // A blank reasoning delta keeps the summary.
    chunk_of(
        &mut h,
        id,
        json!({"type": "reasoning-delta", "id": "r-1", "delta": "  "}),
    );
    assert_eq!(
        h.snapshot().thinking_summary.as_deref(),
        Some("Weighing the ledger.")
    );

    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-start", "toolCallId": "c-1", "toolName": "mainsequence__list_files"}),
    );
    // RU-7: the AI SDK's input start and deltas set no line.
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-delta", "toolCallId": "c-1", "inputTextDelta": "{\"path\":\"/\"}"}),
    );
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Thinking, Some("Thinking...")));
    assert_eq!(s.thinking_summary.as_deref(), Some("Weighing the ledger."));
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-available", "toolCallId": "c-1", "toolName": "mainsequence__list_files", "input": {"path": "/"}}),
    );
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Thinking, Some("Using MCP tool list_files"))
    );
    assert_eq!(
        s.thinking_summary.as_deref(),
        Some("Using MCP tool list_files")
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-output-available", "toolCallId": "c-1", "output": {"files": 2}}),
    );
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Thinking, Some("Thinking...")));
    assert_eq!(s.thinking_summary, None);

    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-available", "toolCallId": "c-2", "toolName": "bash", "input": {"cmd": "ls"}}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Thinking, Some("Running bash"))
    );

    chunk_of(&mut h, id, json!({"type": "text-start", "id": "t-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "t-1", "delta": "Q4 plan."}),
    );
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Responding, Some("Writing a response..."))
    );
    assert_eq!(s.thinking_summary, None);
    chunk_of(&mut h, id, json!({"type": "text-end", "id": "t-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "finish", "finishReason": "stop"}),
    );
    h.end(id);
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Complete, Some("Run completed.")));
    assert_eq!(s.run_failure, None);
    assert!(s.has_visible_assistant_output);
    assert!(run_failures(&h).is_empty());
}

/// adr-notes 6 (run status: `thinkingSummary`), issue 28: the frames of one piece of the body
/// are handed on joined (one `reasoningDelta` for a run of them), but the summary is still the
/// last reasoning frame's text that was not blank, trimmed, as if each frame had come alone;
/// a text frame after it in the same piece clears it, as it does alone.
#[test]
fn the_thinking_summary_is_the_last_reasoning_frame_of_a_piece() {
    let frames = |chunks: &[Value]| -> Vec<u8> {
        chunks
            .iter()
            .flat_map(|c| format!("data: {c}\n\n").into_bytes())
            .collect()
    };
    let mut h = Harness::talking(S1);
    h.send("Plan Q4");
    let resolve = h.runtime_request(S1);
    h.reply(resolve, 200, runtime_ready(S1));
    let id = h.message_request(S1);
    h.stream_head(id);
    let mark = h.events().len();
    h.chunk(
        id,
        &frames(&[
            json!({"type": "reasoning-start", "id": "r-1"}),
            json!({"type": "reasoning-delta", "id": "r-1", "delta": "Checking "}),
            json!({"type": "reasoning-delta", "id": "r-1", "delta": " the ledger. "}),
            json!({"type": "reasoning-delta", "id": "r-1", "delta": "  "}),
            json!({"type": "reasoning-start", "id": "r-2"}),
            json!({"type": "reasoning-delta", "id": "r-2", "delta": " \n"}),
        ]),
    );
    assert_eq!(
        h.snapshot().thinking_summary.as_deref(),
        Some("the ledger.")
    );
    // One delta per part for the piece: the frames' texts joined.
    let reasoning: Vec<String> = h.events()[mark..]
        .iter()
        .filter_map(|e| match e {
            Event::Answer {
                delta: engine_core::stream::StreamDelta::ReasoningDelta { delta, .. },
                ..
            } => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, ["Checking  the ledger.   ", " \n"]);
    h.chunk(
        id,
        &frames(&[
            json!({"type": "reasoning-delta", "id": "r-2", "delta": "Then the totals."}),
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "Done."}),
        ]),
    );
    let s = h.snapshot();
    assert_eq!(s.thinking_summary, None);
    assert_eq!(
        status(&s),
        (RunStatus::Responding, Some("Writing a response..."))
    );
}

/// RU-7, RU-12: with the AI SDK's tool frames, the line appears with `tool-input-available`
/// (not `tool-input-start`); `tool-input-error` and `tool-output-error` change no status; only
/// an output (`tool-output-available`) turns it back to "Thinking...".
#[test]
fn a_tool_line_stays_until_its_output() {
    let mut h = Harness::talking("s-1");
    let id = spec_tests::turns::post_on(&mut h, "s-1", "List them");
    h.stream_head(id);
    chunk_of(&mut h, id, json!({"type": "start", "messageId": "m-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-start", "toolCallId": "c-1", "toolName": "bash"}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Queued, Some("Thinking..."))
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-available", "toolCallId": "c-1", "toolName": "bash", "input": {"cmd": "ls"}}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Thinking, Some("Running bash"))
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-available", "toolCallId": "c-2", "toolName": "grep", "input": {}}),
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-output-error", "toolCallId": "c-2", "errorText": "no such file"}),
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-error", "toolCallId": "c-3", "toolName": "x", "input": "{", "errorText": "bad"}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Thinking, Some("Running grep"))
    );
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-output-available", "toolCallId": "c-1", "output": {"files": 2}}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Thinking, Some("Thinking..."))
    );
}

/// RU-10: the line of a tool announced whole (`tool-input-available`).
#[test]
fn tool_status_lines() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Go");
    h.stream_head(id);
    for (tool, line) in [
        ("mainsequence__query_table", "Using MCP tool query_table"),
        ("web_search", "Running web_search"),
        // The prefix alone names no MCP tool.
        ("mainsequence__", "Running mainsequence__"),
    ] {
        let call = format!("c-{tool}");
        chunk_of(
            &mut h,
            id,
            json!({"type": "tool-input-available", "toolCallId": call, "toolName": tool, "input": {}}),
        );
        assert_eq!(
            h.snapshot().run_status_detail.as_deref(),
            Some(line),
            "{tool}"
        );
    }
}

fn history_with(status: &str, error: Option<&str>, messages: Value) -> Value {
    let mut session =
        json!({"sessionId": S1, "threadId": S1, "agentName": "Ledger Helper", "status": status});
    if let Some(e) = error {
        session["error"] = json!(e);
    }
    json!({"version": 1, "session": session, "messages": messages, "inProgressMessage": null})
}

fn two_messages() -> Value {
    history(S1)["messages"].clone()
}

/// Opens S1 with this record and history; returns the snapshot once both have loaded.
fn opened(record: Value, history: Value) -> Snapshot {
    let mut h = Harness::visible_in_env();
    h.answer_list(std::slice::from_ref(&record));
    h.answer_detail(S1, record);
    let id = h.history_request(S1);
    h.reply(id, 200, history);
    h.snapshot()
}

/// adr-notes 8, HYD-4: a session opened from its history says how its last run went:
/// `complete` "Run completed." when the history is not empty and the session is not running;
/// `responding` "Restored live session." when the history says running and the record says
/// working; `error` with the history's own session error, else "The previous run failed.", when
/// its last run failed; `idle` with no detail for an empty history. `hasVisibleAssistantOutput`
/// tells whether the history holds an answer.
#[test]
fn a_session_opened_from_its_history_says_how_its_last_run_went() {
    let idle_record = record(S1, AGENT, ENV, 0);
    let s = opened(idle_record.clone(), history(S1));
    assert_eq!(status(&s), (RunStatus::Complete, Some("Run completed.")));
    assert!(s.has_visible_assistant_output);
    assert_eq!(s.run_failure, None);

    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    let s = opened(working, history_with("running", None, two_messages()));
    assert_eq!(
        status(&s),
        (RunStatus::Responding, Some("Restored live session."))
    );

    // Running in the history but not working on the record: the reference says completed.
    let s = opened(
        idle_record.clone(),
        history_with("running", None, two_messages()),
    );
    assert_eq!(status(&s), (RunStatus::Complete, Some("Run completed.")));

    let s = opened(
        idle_record.clone(),
        history_with("error", Some("The model quota ran out."), two_messages()),
    );
    assert_eq!(
        status(&s),
        (RunStatus::Error, Some("The model quota ran out."))
    );
    let s = opened(
        idle_record.clone(),
        history_with("error", None, two_messages()),
    );
    assert_eq!(
        status(&s),
        (RunStatus::Error, Some("The previous run failed."))
    );

    let s = opened(
        idle_record.clone(),
        history_with("completed", None, json!([])),
    );
    assert_eq!(status(&s), (RunStatus::Idle, None));
    assert!(!s.has_visible_assistant_output);
    // The reference asks "empty and not running" first: an empty history says nothing, even
    // when its session status is error.
    let mut empty_error = history_with("error", Some("Quota."), json!([]));
    empty_error["inProgressMessage"] = Value::Null;
    let s = opened(idle_record, empty_error);
    assert!(s.thread.is_empty());
    assert_eq!(status(&s), (RunStatus::Idle, None));
}

/// RU-20: a history that is not running clears a stale `working` flag of the record: the
/// session reads `complete` "Run completed.", no longer counts as working, and a message goes
/// at once instead of waiting in the queue (no detail poll of SND-25). With a running history
/// the flag stands: `responding` "Restored live session.", and a message waits.
#[test]
fn ru_20_a_history_not_running_clears_a_stale_working_flag() {
    let mut working = record(S1, AGENT, ENV, 0);
    working["working"] = json!(true);
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, working.clone());
    assert!(
        h.snapshot().is_agent_working,
        "the record alone says working"
    );
    let id = h.history_request(S1);
    h.reply(id, 200, history(S1));
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Complete, Some("Run completed.")));
    assert!(!s.is_agent_working);
    let ins = h.insights_request(S1);
    h.reply(ins, 200, spec_tests::fixtures::insights(S1));
    h.runtime_ready(S1, 200);
    h.send("Go now");
    let s = h.snapshot();
    assert!(s.message_queue.is_empty(), "{:?}", s.message_queue);
    assert!(s.is_agent_working, "our own turn runs");

    let mut h = spec_tests::turns::another_writer_at_work(S1);
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Responding, Some("Restored live session."))
    );
    assert!(s.is_agent_working);
    h.send("Wait");
    assert_eq!(h.snapshot().message_queue.len(), 1, "another writer works");
}

/// adr-notes 8, FAIL-11: a history that fails to load shows its error in the run status too.
#[test]
fn a_failed_history_shows_in_the_run_status() {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let id = h.history_request(S1);
    h.reply(id, 503, json!({"detail": "History store down."}));
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Error, Some("History store down.")));
    assert_eq!(s.run_failure, None, "not a turn of ours");
}

// ---------------------------------------------------------------------------------------------
// Point 2: stop
// ---------------------------------------------------------------------------------------------

/// adr-notes 8, OI-19, SND-16, SND-17: stopping a streaming answer. At once: `idle` "Run
/// cancelled.", not working, no active stream, `isCancellingSession` true; the message request
/// is aborted before the cancel request goes out; the cut-short answer is `cancelled` (never
/// complete) and none of its parts stays streaming; no notify, no failure, nothing handed back,
/// and no text that mentions an abort. After the cancel route answers 2xx: `idle` "Run
/// cancellation requested.", `isCancellingSession` false, no `sessionNotice`. A late chunk is
/// not applied.
#[test]
fn stop_at_once_then_after_the_cancel_answers() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Write the report");
    h.stream_head(id);
    chunk_of(&mut h, id, json!({"type": "start", "messageId": "msg-s"}));
    chunk_of(&mut h, id, json!({"type": "text-start", "id": "t-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "t-1", "delta": "The rep"}),
    );
    chunk_of(&mut h, id, json!({"type": "reasoning-start", "id": "r-1"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "tool-input-start", "toolCallId": "c-1", "toolName": "bash"}),
    );
    let mark = h.mark();
    let events = h.events().len();
    h.command(Command::CancelActiveSession);

    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Idle, Some("Run cancelled.")));
    assert!(!s.is_agent_working);
    assert!(!s.has_active_chat_stream);
    assert!(s.is_cancelling_session);
    assert_eq!(s.run_failure, None);
    let answer = s.thread.last().unwrap();
    assert_eq!(answer.id, "msg-s");
    assert_eq!(answer.status, MessageStatus::Cancelled);
    for part in &answer.parts {
        match part {
            Part::Text(t) => assert_eq!(t.state, PartState::Done),
            Part::Reasoning(r) => assert_eq!(r.state, PartState::Done),
            Part::Tool(t) => {
                assert_ne!(t.state, ToolState::InputStreaming);
                assert_eq!(t.error_text.as_deref(), Some("Run cancelled."));
            }
            _ => {}
        }
    }
    let json = serde_json::to_value(answer).unwrap();
    assert_eq!(json["status"], "cancelled");
    assert!(!json.to_string().contains("\"streaming\""));
    // The abort of the message request comes before the cancel request (SND-17).
    assert!(h.was_aborted(id));
    let after = h.sent_since(mark);
    assert!(matches!(after, [c] if matches!(c.call, ApiCall::CancelRun { .. })));
    let new_events = events_since(&h, events);
    assert!(
        new_events.iter().all(|e| !matches!(
            e,
            Event::Notify(_) | Event::RunFailed { .. } | Event::MessageNotSent { .. }
        )),
        "{new_events:?}"
    );
    let shown = format!("{:?}{:?}", new_events, s.run_status_detail).to_lowercase();
    assert!(!shown.contains("abort"), "{shown}");

    let cancel = h.cancel_request(S1);
    h.reply(cancel, 200, json!({"ok": true}));
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Idle, Some("Run cancellation requested."))
    );
    assert!(!s.is_cancelling_session);
    assert_eq!(s.session_notice, None);

    // SND-16: chunks that arrive afterwards are not applied.
    let thread = s.thread.clone();
    chunk_of(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "t-1", "delta": "ort ends."}),
    );
    assert_eq!(h.snapshot().thread, thread);
}

/// OI-19, adr-notes 8: a turn that starts, and a 2xx cancel, clear the notice a failed cancel
/// left.
#[test]
fn an_accepted_cancel_clears_the_notice_of_a_failed_one() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "One");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 500, json!({"detail": "Runtime busy."}));
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert!(s.session_notice.is_some());

    let resolve_then_post = |h: &mut Harness| {
        h.send("Two");
        let r = h.runtime_request(S1);
        h.reply(r, 200, runtime_ready(S1));
    };
    resolve_then_post(&mut h);
    // The reference clears the notice when a turn's request starts.
    assert_eq!(h.snapshot().session_notice, None);
    if let Some(c) = h.pending(spec_tests::turns::is_confirm) {
        h.reply_raw(c, 200, None, b"", None);
    }
    let id = h.message_request(S1);
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 204, Value::Null);
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Idle, Some("Run cancellation requested."))
    );
    assert_eq!(s.session_notice, None);
}

/// RU-22, SND-16, SND-25: stopping another writer's work (no local run) reads idle, "Run
/// cancelled." at once, no longer counts the session as working and holds the waiting queue
/// `stopped` (nothing leaves), until the cancel answers "Run cancellation requested.".
#[test]
fn stopping_another_writers_work() {
    let mut h = spec_tests::turns::another_writer_at_work(S1);
    assert!(h.snapshot().is_agent_working);
    h.command(Command::EnqueueMessage {
        text: "Next".into(),
    });
    let mark = h.mark();
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Idle, Some("Run cancelled.")));
    assert!(!s.is_agent_working);
    assert!(s.is_cancelling_session);
    assert_eq!(s.message_queue.len(), 1);
    assert_eq!(
        s.message_queue_texts.hold.as_deref(),
        Some("Held after you stopped Ledger Helper.")
    );
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 200, json!({}));
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Idle, Some("Run cancellation requested."))
    );
    assert!(
        !h.sent_since(mark)
            .iter()
            .any(|s| matches!(s.call, engine_core::ApiCall::SendMessage { .. })),
        "a held queue sends nothing"
    );
}

// ---------------------------------------------------------------------------------------------
// Point 3: typed send failures
// ---------------------------------------------------------------------------------------------

/// Asserts the one failure of the turn: in the snapshot (`runFailure`, `runStatus` error, the
/// text as `runStatusDetail`, labelled with its source, RU-16) and in `Event::RunFailed`; when
/// unsent, the text handed back with the same code.
fn assert_failed(h: &Harness, code: FailureCode, text: &str, sent: bool, written: &str) {
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(s.run_status_detail.as_deref(), Some(text));
    let failure = s.run_failure.clone().expect("a failure");
    assert_eq!((failure.code, failure.message.as_str()), (code, text));
    assert!(failure.source.is_some(), "a turn's failure has a source");
    assert!(text.starts_with("Source: "), "{text}");
    assert_eq!(
        run_failures(h),
        vec![(code, text.to_owned(), sent)],
        "one RunFailed"
    );
    let back = handed_back(h);
    if sent {
        assert!(
            back.is_empty(),
            "a sent message is not handed back: {back:?}"
        );
    } else {
        assert_eq!(back, vec![(written.to_owned(), code)]);
    }
}

/// SND-2, OI-6: a send refused by the guard (the session still loading) is `session_not_ready`.
#[test]
fn code_session_not_ready() {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let mark = h.mark();
    h.send("Too early");
    assert_failed(
        &h,
        FailureCode::SessionNotReady,
        "Source: Request was never sent. The session is still loading. Wait for it to finish before sending.",
        false,
        "Too early",
    );
    assert!(
        h.sent_since(mark).is_empty(),
        "no request for a refused send"
    );
}

/// SND-11, OI-6: a terminal first answer is `runtime_interaction_blocked`, with the notice.
#[test]
fn code_runtime_interaction_blocked() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_terminal(None));
    assert_failed(
        &h,
        FailureCode::RuntimeInteractionBlocked,
        "Source: Request was never sent. Ledger Helper could not be updated.",
        false,
        "Hello",
    );
}

/// OI-6: `can_submit` true with mode `unavailable` is `runtime_unavailable`.
#[test]
fn code_runtime_unavailable() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    let answer = runtime_unavailable(S1, json!("Reconciling the service."));
    h.reply(id, 200, answer);
    assert_failed(
        &h,
        FailureCode::RuntimeUnavailable,
        "Source: Connecting to the Agent. Reconciling the service.",
        false,
        "Hello",
    );
}

/// SND-3: a failed resolve-runtime-access is `runtime_access_failed`.
#[test]
fn code_runtime_access_failed() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 500, json!({"detail": "Access service down."}));
    let s = h.snapshot();
    let text = s.run_status_detail.clone().unwrap();
    assert!(text.contains("Access service down."), "{text}");
    assert_failed(&h, FailureCode::RuntimeAccessFailed, &text, false, "Hello");
}

/// SND-14, SND-15: a message request that got no answer is `agent_unreachable`; it was sent
/// (the Agent may have it), so it is not handed back, and never requested again.
#[test]
fn code_agent_unreachable() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.fail(id);
    let text = h.snapshot().run_status_detail.clone().unwrap();
    assert_failed(&h, FailureCode::AgentUnreachable, &text, true, "Hello");
    assert_eq!(h.count(is_send), 1);
}

/// SND-7: a non-2xx answer to the message request is `agent_http_error`.
#[test]
fn code_agent_http_error() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.reply(id, 500, json!({"detail": "Runtime exploded."}));
    assert_failed(
        &h,
        FailureCode::AgentHttpError,
        "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 500 Internal Server Error. Call: POST https://rt.test/agents/s-1/api/chat. Server response: Runtime exploded.",
        true,
        "Hello",
    );
}

/// adr-notes 8, RU-15: an error frame is `stream_error`; the run status says error with its text
/// (or "The agent reported an error.") as soon as the frame arrives, and the turn ends with the
/// labelled text ("The assistant runtime reported an error." for a frame without one).
#[test]
fn code_stream_error() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    chunk_of(
        &mut h,
        id,
        json!({"type": "error", "errorText": "Tool crashed."}),
    );
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Error, Some("Tool crashed.")));
    assert_eq!(
        s.run_failure.as_ref().map(|f| f.code),
        Some(FailureCode::StreamError)
    );
    // Text after the error frame does not hide it (the turn fails at its end).
    chunk_of(&mut h, id, json!({"type": "text-start", "id": "t-9"}));
    chunk_of(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "t-9", "delta": "more"}),
    );
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Error, Some("Tool crashed.")));
    assert_eq!(
        s.run_failure.as_ref().map(|f| f.code),
        Some(FailureCode::StreamError)
    );
    h.end(id);
    assert_failed(
        &h,
        FailureCode::StreamError,
        "Source: Receiving the Agent's reply. Tool crashed.",
        true,
        "Hello",
    );

    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    chunk_of(&mut h, id, json!({"type": "error"}));
    h.end(id);
    assert_failed(
        &h,
        FailureCode::StreamError,
        "Source: Receiving the Agent's reply. The assistant runtime reported an error.",
        true,
        "Hello",
    );
}

/// A body that ends before the answer finished, or breaks off, is `stream_interrupted`.
#[test]
fn code_stream_interrupted() {
    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    chunk_of(&mut h, id, json!({"type": "start", "messageId": "m-x"}));
    h.end(id);
    assert_failed(
        &h,
        FailureCode::StreamInterrupted,
        "Source: Request was never sent. The answer was interrupted before it finished.",
        true,
        "Hello",
    );

    let mut h = Harness::talking(S1);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    h.broken(id);
    let text = h.snapshot().run_status_detail.clone().unwrap();
    assert_failed(&h, FailureCode::StreamInterrupted, &text, true, "Hello");
}

/// An answer over the engine's limit is `stream_too_large`.
#[test]
fn code_stream_too_large() {
    let mut config = Config::new("https://platform.example.test").unwrap();
    config.max_answer_bytes = 64;
    let mut h = Harness::with_config(config);
    h.person(USER).env(Some(ENV)).visible(true);
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    h.hydrate(S1, AGENT);
    let id = h.insights_request(S1);
    h.reply(id, 200, insights(S1));
    h.runtime_ready(S1, 200);
    let id = post(&mut h, "Hello");
    h.stream_head(id);
    h.chunk(id, &[b' '; 65]);
    let text = h.snapshot().run_status_detail.clone().unwrap();
    assert!(text.contains("64"), "{text}");
    assert_failed(&h, FailureCode::StreamTooLarge, &text, true, "Hello");
}

/// SND-16: a stop before the message left hands the text back as `run_cancelled`; the run
/// shows "Run cancelled." (a stop is not a failure).
#[test]
fn code_run_cancelled() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(status(&s), (RunStatus::Idle, Some("Run cancelled.")));
    assert_eq!(s.run_failure, None);
    assert!(run_failures(&h).is_empty());
    assert_eq!(
        handed_back(&h),
        vec![("Hello".to_owned(), FailureCode::RunCancelled)]
    );
    assert_eq!(h.count(is_send), 0);
}

/// SND-2, SND-24: a message with nothing selected, and an eleventh queued message, come back
/// with `no_session_selected` and `queue_full`; neither is a turn (no `RunFailed`).
#[test]
fn codes_without_a_turn() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    h.send("Anyone?");
    assert_eq!(
        handed_back(&h),
        vec![("Anyone?".to_owned(), FailureCode::NoSessionSelected)]
    );

    let mut h = Harness::talking(S1);
    h.send("Busy");
    for i in 0..11 {
        h.command(Command::EnqueueMessage {
            text: format!("q{i}"),
        });
    }
    assert_eq!(
        handed_back(&h),
        vec![("q10".to_owned(), FailureCode::QueueFull)]
    );
    assert!(run_failures(&h).is_empty());
}

// ---------------------------------------------------------------------------------------------
// clearThread()
// ---------------------------------------------------------------------------------------------

/// adr-notes 6, RU-27 (`clearThread()`): the local run stops without a cancel request, the
/// thread is empty, the run status idle with no detail, no notice, no `agentId`; the next turn
/// carries the session id as its thread id (the history's thread id is set aside).
#[test]
fn clear_thread_starts_the_thread_afresh() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let mut hist = history(S1);
    hist["session"]["threadId"] = json!("thread-9");
    hist["session"]["agentUid"] = json!(AGENT);
    let id = h.history_request(S1);
    h.reply(id, 200, hist);
    let id = h.insights_request(S1);
    h.reply(id, 200, insights(S1));
    h.runtime_ready(S1, 200);
    let first = post(&mut h, "One");
    assert_eq!(body(&h, first)["threadId"], "thread-9");
    assert_eq!(h.snapshot().agent_id.as_deref(), Some(AGENT));
    h.stream_head(first);
    chunk_of(&mut h, first, json!({"type": "text-start", "id": "t"}));
    let mark = h.mark();
    h.command(Command::ClearThread);
    let s = h.snapshot();
    assert!(s.thread.is_empty(), "{:?}", s.thread);
    assert_eq!(s.agent_id, None, "agentId starts afresh too");
    assert_eq!(status(&s), (RunStatus::Idle, None));
    assert_eq!(s.thinking_summary, None);
    assert!(!s.has_visible_assistant_output);
    assert_eq!(s.session_notice, None);
    assert!(!s.is_agent_working);
    assert!(h.was_aborted(first));
    assert!(
        h.sent_since(mark).is_empty(),
        "no cancel request: {:?}",
        h.sent_since(mark)
    );
    let second = post(&mut h, "Two");
    assert_eq!(body(&h, second)["threadId"], S1);
    assert_eq!(h.snapshot().thread.len(), 1, "only the new turn");
}
