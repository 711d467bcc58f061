#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Where a failure comes from (`reference-update.md`, section 3, RU-13 to RU-19; RU-23): every
//! failed turn's text carries its source label, once; a stop and a failed cancel carry none; a
//! refused R2 or R3 reads "{operation}. Status: HTTP {code} {reason}. Call: POST {url}. Server
//! response: {message}". The failure codes are the ones they were. Each test names the rules it
//! checks and asserts the reference's texts.

use engine_core::message::{MessageStatus, Role};
use engine_core::{Command, Event, FailureCode, RunStatus, Snapshot};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{runtime_terminal, runtime_transient, runtime_unavailable, sse};
use spec_tests::turns::post_on;

const S1: &str = "s-1";

/// The harness's Agent runtime for `s-1` (`rpc_url` of its runtime-access answer).
const CHAT_URL: &str = "https://rt.test/agents/s-1/api/chat";
const CANCEL_URL: &str = "https://rt.test/agents/s-1/api/chat/session/cancel";

/// The one failure of the turn, everywhere a host reads it: `runStatus` error, the text as
/// `runStatusDetail`, `runFailure` (code, text, a source), one `RunFailed` with both; the text
/// begins with its label exactly once.
fn assert_turn_failed(h: &Harness, code: FailureCode, text: &str) {
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error, "{:?}", s.run_status_detail);
    assert_eq!(s.run_status_detail.as_deref(), Some(text));
    let failure = s.run_failure.clone().expect("runFailure");
    assert_eq!((failure.code, failure.message.as_str()), (code, text));
    assert!(failure.source.is_some(), "{failure:?}");
    assert_eq!(text.matches("Source: ").count(), 1, "labelled once: {text}");
    let reported: Vec<_> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::RunFailed { failure, .. } => Some((failure.code, failure.message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(reported, [(code, text.to_owned())]);
}

/// The texts handed back (`MessageNotSent`), as (text, reason, code).
fn handed_back(h: &Harness) -> Vec<(String, String, FailureCode)> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::MessageNotSent {
                text, reason, code, ..
            } => Some((text.clone(), reason.clone(), *code)),
            _ => None,
        })
        .collect()
}

/// The status of the last message of this role in the thread.
fn last_status(s: &Snapshot, role: Role) -> MessageStatus {
    s.thread
        .iter()
        .rev()
        .find(|m| m.role == role)
        .map(|m| m.status.clone())
        .expect("a message")
}

/// A turn of `s-1` whose answer streams these frames, then ends (with `[DONE]`).
fn streamed(frames: &[Value]) -> Harness {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.chunk(id, &sse(frames)).end(id);
    h
}

/// RU-15, RU-13: an `error` frame fails the turn with its text (`errorText`, `error`,
/// `message`, `error_detail`) labelled by its source (`error_source`, else `source`, else
/// `assistant_runtime_stream`, "Receiving the Agent's reply"); without a text, "The assistant
/// runtime reported an error."; an unknown key becomes capitalised words. The code stays
/// `stream_error`; the answer's message fails with the same text.
#[test]
fn ru_15_an_error_frame_is_labelled_with_its_source() {
    let cases = [
        (
            json!({"type": "error", "errorText": "The model provider refused the request."}),
            "Source: Receiving the Agent's reply. The model provider refused the request.",
        ),
        (
            json!({"type": "error", "errorText": "The model provider refused the request.", "error_source": "provider_gateway"}),
            "Source: Provider Gateway. The model provider refused the request.",
        ),
        (
            json!({"type": "error"}),
            "Source: Receiving the Agent's reply. The assistant runtime reported an error.",
        ),
        (
            json!({"type": "error", "errorText": "  ", "error": "", "message": "From message."}),
            "Source: Receiving the Agent's reply. From message.",
        ),
        (
            json!({"type": "error", "error_detail": "Detail.", "source": "tool.runner-v2"}),
            "Source: Tool Runner V2. Detail.",
        ),
        (
            json!({"type": "error", "error": "E.", "error_source": "assistant_backend_http", "source": "ignored"}),
            "Source: Sending to the Agent. E.",
        ),
        (
            json!({"type": "error", "errorText": "E.", "error_source": "  "}),
            "Source: Unknown source. E.",
        ),
    ];
    for (frame, text) in cases {
        let h = streamed(&[json!({"type": "start", "messageId": "m-1"}), frame]);
        assert_turn_failed(&h, FailureCode::StreamError, text);
        assert_eq!(
            last_status(&h.snapshot(), Role::Assistant),
            MessageStatus::Failed {
                error: text.to_owned()
            }
        );
    }
}

/// RU-15: while the frame is handled the run status may show the frame's own words (the passing
/// detail); the turn's end replaces them with the labelled text, whatever came after the frame.
#[test]
fn ru_15_the_final_detail_replaces_the_passing_one() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.chunk(id, &sse_open(&[json!({"type": "error"})]));
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("The agent reported an error.")
    );
    h.chunk(
        id,
        &sse_open(&[
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "after"}),
            json!({"type": "finish"}),
        ]),
    );
    h.end(id);
    assert_turn_failed(
        &h,
        FailureCode::StreamError,
        "Source: Receiving the Agent's reply. The assistant runtime reported an error.",
    );
}

/// Frames without the closing `[DONE]`.
fn sse_open(frames: &[Value]) -> Vec<u8> {
    frames
        .iter()
        .map(|f| format!("data: {f}\n\n"))
        .collect::<String>()
        .into_bytes()
}

/// RU-13: a text that already begins with "Source:" and a space, in any letter case, is not
/// labelled again; "Source:" elsewhere, or without the space, is no label.
#[test]
fn ru_13_a_labelled_text_is_never_labelled_again() {
    let cases = [
        (
            "Source: Tool runner. It broke.",
            "Source: Tool runner. It broke.",
        ),
        (
            "SOURCE: tool runner. It broke.",
            "SOURCE: tool runner. It broke.",
        ),
        (
            "  source: Tool runner. It broke.  ",
            "source: Tool runner. It broke.",
        ),
        (
            "Source:It broke.",
            "Source: Receiving the Agent's reply. Source:It broke.",
        ),
    ];
    for (error_text, text) in cases {
        let h = streamed(&[json!({"type": "error", "errorText": error_text})]);
        let s = h.snapshot();
        assert_eq!(s.run_status_detail.as_deref(), Some(text), "{error_text}");
        assert_eq!(
            s.run_failure.map(|f| (f.code, f.message)),
            Some((FailureCode::StreamError, text.to_owned()))
        );
    }
}

/// RU-16, RU-19: R2 answering non-2xx fails the turn with "Source: Sending to the Agent. Agent
/// chat stream request failed. Status: HTTP {code} {reason}. Call: POST {url}. Server response:
/// {message}", the message read from the body, else "Chat stream failed with status {code}.".
/// The code stays `agent_http_error`; the message had gone out, so nothing is handed back.
#[test]
fn ru_16_ru_19_a_refused_message_request() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.reply(id, 500, json!({"detail": "boom"}));
    assert_turn_failed(
        &h,
        FailureCode::AgentHttpError,
        &format!(
            "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 500 Internal Server Error. Call: POST {CHAT_URL}. Server response: boom"
        ),
    );
    assert!(handed_back(&h).is_empty());

    // RU-19's example, verbatim: field errors with their paths, `request_id` skipped.
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.reply(
        id,
        400,
        json!({"models": [{"metadata": ["Metadata cannot contain authentication fields: token."], "thinking_levels": ["A non-reasoning model cannot expose thinking levels."]}], "request_id": "r"}),
    );
    assert_turn_failed(
        &h,
        FailureCode::AgentHttpError,
        &format!(
            "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 400 Bad Request. Call: POST {CHAT_URL}. Server response: models[0].metadata: Metadata cannot contain authentication fields: token.; models[0].thinking_levels: A non-reasoning model cannot expose thinking levels."
        ),
    );

    // RU-19: `non_field_errors` adds no path; repeats are dropped; `code` and `status` skipped.
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.reply(
        id,
        409,
        json!({"code": "busy", "status": 409, "non_field_errors": ["Busy.", "Busy."], "session": {"uid": ["Unknown."]}}),
    );
    assert_turn_failed(
        &h,
        FailureCode::AgentHttpError,
        &format!(
            "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 409 Conflict. Call: POST {CHAT_URL}. Server response: Busy.; session.uid: Unknown."
        ),
    );
}

/// RU-18: the body read by its content type: JSON that does not parse, or has no message, gives
/// the fallback; text is trimmed (JSON text read as JSON); blank text gives the fallback. A
/// status without a reason phrase has none in the text.
#[test]
fn ru_18_the_server_message_by_content_type() {
    let cases: [(u16, Option<&str>, &[u8], &str); 5] = [
        (
            502,
            Some("application/json"),
            b"<html>Bad gateway</html>",
            "HTTP 502 Bad Gateway. Call: POST {url}. Server response: Chat stream failed with status 502.",
        ),
        (
            502,
            Some("text/html"),
            b"  <html>Bad gateway</html>\n",
            "HTTP 502 Bad Gateway. Call: POST {url}. Server response: <html>Bad gateway</html>",
        ),
        (
            503,
            Some("text/plain"),
            br#" {"error": "Draining."} "#,
            "HTTP 503 Service Unavailable. Call: POST {url}. Server response: Draining.",
        ),
        (
            500,
            None,
            b" \n ",
            "HTTP 500 Internal Server Error. Call: POST {url}. Server response: Chat stream failed with status 500.",
        ),
        (
            599,
            Some("application/json"),
            br#"{"message": "Odd."}"#,
            "HTTP 599. Call: POST {url}. Server response: Odd.",
        ),
    ];
    for (status, content_type, body, tail) in cases {
        let mut h = Harness::talking(S1);
        let id = post_on(&mut h, S1, "Hello");
        h.reply_raw(id, status, content_type, body, None);
        let tail = tail.replace("{url}", CHAT_URL);
        assert_turn_failed(
            &h,
            FailureCode::AgentHttpError,
            &format!(
                "Source: Sending to the Agent. Agent chat stream request failed. Status: {tail}"
            ),
        );
    }
}

/// RU-16: R2 without an answer: "Source: Sending to the Agent. {the transport's message}", and
/// without one, "... Agent runtime request failed before receiving a response." The code stays
/// `agent_unreachable`.
#[test]
fn ru_16_a_message_request_without_an_answer() {
    for (message, text) in [
        (
            "connection refused",
            "Source: Sending to the Agent. connection refused",
        ),
        (
            "  ",
            "Source: Sending to the Agent. Agent runtime request failed before receiving a response.",
        ),
    ] {
        let mut h = Harness::talking(S1);
        let id = post_on(&mut h, S1, "Hello");
        h.fail_with(id, message);
        assert_turn_failed(&h, FailureCode::AgentUnreachable, text);
    }
}

/// RU-16: resolve-runtime-access admitting with mode `unavailable` fails the turn with "Source:
/// Connecting to the Agent. {detail}" (adr-notes 8's fallback without one); a failed
/// resolve-runtime-access is "Connecting to the Agent" too. Codes unchanged.
#[test]
fn ru_16_connecting_to_the_agent() {
    for (detail, text) in [
        (
            json!("Reconciling the service."),
            "Source: Connecting to the Agent. Reconciling the service.",
        ),
        (
            Value::Null,
            "Source: Connecting to the Agent. The agent runtime is unavailable while its service is being reconciled.",
        ),
    ] {
        let mut h = Harness::talking(S1);
        h.send("Hello");
        let id = h.runtime_request(S1);
        h.reply(id, 200, runtime_unavailable(S1, detail));
        assert_turn_failed(&h, FailureCode::RuntimeUnavailable, text);
        assert_eq!(
            handed_back(&h),
            [(
                "Hello".to_owned(),
                text.to_owned(),
                FailureCode::RuntimeUnavailable
            )]
        );
    }

    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.fail_with(id, "connection refused");
    assert_turn_failed(
        &h,
        FailureCode::RuntimeAccessFailed,
        "Source: Connecting to the Agent. connection refused",
    );
}

/// RU-16: the send guard's text reads "Source: Request was never sent. The session is still
/// loading. Wait for it to finish before sending.", in the run status, the text handed back and
/// the user message's error. Code `session_not_ready`.
#[test]
fn ru_16_the_send_guard() {
    let mut h = Harness::selected(S1);
    h.send("Too early");
    let text = "Source: Request was never sent. The session is still loading. Wait for it to finish before sending.";
    assert_turn_failed(&h, FailureCode::SessionNotReady, text);
    assert_eq!(
        handed_back(&h),
        [(
            "Too early".to_owned(),
            text.to_owned(),
            FailureCode::SessionNotReady
        )]
    );
    assert_eq!(
        last_status(&h.snapshot(), Role::User),
        MessageStatus::Failed {
            error: text.to_owned()
        }
    );
}

/// RU-16: a held send that ends unsent reads "Source: Request was never sent. {the not-sent
/// text}", the reference's example verbatim; code `runtime_request_not_sent`.
#[test]
fn ru_16_a_held_send_ends_unsent() {
    let mut h = Harness::talking(S1);
    h.send("Hello");
    let id = h.runtime_request(S1);
    h.reply(id, 200, runtime_transient("starting", Some(1_000)));
    h.advance(1_000);
    let poll = h.runtime_request(S1);
    let mut terminal = runtime_terminal(None);
    terminal["runtime_interaction"]["notice"]["message"] =
        json!("Ledger Helper could not be started.");
    h.reply(poll, 200, terminal);
    h.advance(500);
    let text = "Source: Request was never sent. Ledger Helper could not be started. Your message was not sent; send it again when the agent is ready.";
    assert_turn_failed(&h, FailureCode::RuntimeRequestNotSent, text);
    assert_eq!(
        handed_back(&h),
        [(
            "Hello".to_owned(),
            text.to_owned(),
            FailureCode::RuntimeRequestNotSent
        )]
    );
}

/// RU-16 "any other error without a label", RU-6 (the engine's choice, docs/interpretations.md):
/// an answer cut short, or whose body breaks off, reads "Source: Request was never sent. ...",
/// as the reference labels its decoder's errors. Code `stream_interrupted`.
#[test]
fn ru_16_ru_6_an_answer_cut_short() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.chunk(id, &sse_open(&[json!({"type": "start", "messageId": "m"})]))
        .end(id);
    assert_turn_failed(
        &h,
        FailureCode::StreamInterrupted,
        "Source: Request was never sent. The answer was interrupted before it finished.",
    );

    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.broken(id);
    assert_turn_failed(
        &h,
        FailureCode::StreamInterrupted,
        "Source: Request was never sent. connection reset",
    );
}

/// RU-17, RU-23: a failed cancel request is unlabelled: `runStatus` error, `runStatusDetail` and
/// `sessionNotice` both "Agent session cancellation request failed. Status: HTTP 500 Internal
/// Server Error. Call: POST {url}. Server response: boom" (the reference's example with this
/// runtime's address); no notify, no `runFailure`. A stop is no failure ("Run cancelled.").
#[test]
fn ru_17_ru_23_a_stop_and_a_failed_cancel_carry_no_label() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    assert!(s.run_failure.is_none());
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 500, json!({"detail": "boom"}));
    let s = h.snapshot();
    let text = format!(
        "Agent session cancellation request failed. Status: HTTP 500 Internal Server Error. Call: POST {CANCEL_URL}. Server response: boom"
    );
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(s.run_status_detail.as_deref(), Some(text.as_str()));
    assert_eq!(s.session_notice.as_deref(), Some(text.as_str()));
    assert!(s.run_failure.is_none());
    assert!(!s.is_cancelling_session);
    assert!(h.notices().is_empty());
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::RunFailed { .. })),
        "a stop is no failure"
    );

    // The cancel's fallback: "Session cancellation failed with status {code}.".
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = h.cancel_request(S1);
    h.reply_raw(cancel, 502, Some("application/json"), b"", None);
    assert_eq!(
        h.snapshot().run_status_detail,
        Some(format!(
            "Agent session cancellation request failed. Status: HTTP 502 Bad Gateway. Call: POST {CANCEL_URL}. Server response: Session cancellation failed with status 502."
        ))
    );
}
