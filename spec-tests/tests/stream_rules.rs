#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The assembly rules of ui-message-stream §5 and the end-of-stream rules of §6 (with the
//! engine frames of the platform's chat answer), one test per rule, beyond what the captured
//! vectors show.

use crate::stream_support;

use engine_core::message::MessageStatus;
use engine_core::{StreamDelta, StreamOutcome};
use serde_json::{Value, json};
use stream_support::{Run, body, events, parts, run, run_frame_by_frame};

/// The message's parts after `chunks` and `[DONE]`.
fn parts_after(chunks: &[Value]) -> Value {
    parts(run(&body(chunks)).stream.message())
}

/// §5 text: several text parts open at once, deltas found by id, not by position.
#[test]
fn interleaved_text_parts() {
    let parts = parts_after(&[
        json!({"type": "text-start", "id": "a"}),
        json!({"type": "text-start", "id": "b"}),
        json!({"type": "reasoning-start", "id": "a"}),
        json!({"type": "text-delta", "id": "a", "delta": "A1"}),
        json!({"type": "text-delta", "id": "b", "delta": "B1"}),
        json!({"type": "reasoning-delta", "id": "a", "delta": "R"}),
        json!({"type": "text-delta", "id": "a", "delta": "A2"}),
        json!({"type": "text-end", "id": "b"}),
    ]);
    assert_eq!(
        parts,
        json!([
            {"type": "text", "text": "A1A2", "state": "streaming"},
            {"type": "text", "text": "B1", "state": "done"},
            {"type": "reasoning", "id": "a", "text": "R", "state": "streaming"}
        ])
    );
}

/// §5 text: an id may open a new part after its end; provider metadata of a delta or end
/// replaces the part's; `citations` of `text-end` are copied.
#[test]
fn text_ids_reopen_and_metadata() {
    let parts = parts_after(&[
        json!({"type": "text-start", "id": "0", "providerMetadata": {"p": {"a": 1}}}),
        json!({"type": "text-delta", "id": "0", "delta": "x", "providerMetadata": {"p": {"b": 2}}}),
        json!({"type": "text-end", "id": "0", "citations": [{"url": "u"}]}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "0"}),
        json!({"type": "text-delta", "id": "0", "delta": "y"}),
        json!({"type": "text-end", "id": "0", "providerMetadata": {"p": {"c": 3}}}),
    ]);
    assert_eq!(
        parts,
        json!([
            {"type": "text", "text": "x", "state": "done", "providerMetadata": {"p": {"b": 2}}, "citations": [{"url": "u"}]},
            {"type": "step-start"},
            {"type": "text", "text": "y", "state": "done", "providerMetadata": {"p": {"c": 3}}}
        ])
    );
}

/// §5 steps: `reset-step` forgets the open ids even of parts it keeps (before the last
/// `step-start`): a later delta for one opens a new part, in the same piece of the body as the
/// delta before it or not (issue 28: the part found last is not reused).
#[test]
fn reset_step_forgets_the_ids_of_parts_it_keeps() {
    let frames = [
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "u"}),
        json!({"type": "text-delta", "id": "u", "delta": "kept"}),
        json!({"type": "start-step"}),
        json!({"type": "reset-step"}),
        json!({"type": "text-delta", "id": "u", "delta": "new"}),
    ];
    let expected = json!([
        {"type": "step-start"},
        {"type": "text", "text": "kept", "state": "streaming"},
        {"type": "step-start"},
        {"type": "text", "text": "new", "state": "streaming"}
    ]);
    let whole = run(&body(&frames));
    assert_eq!(parts(whole.stream.message()), expected);
    assert_eq!(whole.stream.stats().protocol_errors, 1);
    let framed = run_frame_by_frame(&body(&frames));
    assert_eq!(parts(framed.stream.message()), expected);
}

/// §5 steps: `finish-step` leaves open parts open (7.0.173); `reset-step` removes the parts
/// after the last `step-start` and forgets the open ids (a later delta for one is a protocol
/// error that opens a new part).
#[test]
fn finish_step_and_reset_step() {
    let done = run(&body(&[
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "kept"}),
        json!({"type": "finish-step"}),
        json!({"type": "text-delta", "id": "t", "delta": "!"}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "u"}),
        json!({"type": "text-delta", "id": "u", "delta": "retried"}),
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "t"}),
        json!({"type": "data-x", "id": "d", "data": 1}),
        json!({"type": "reset-step"}),
        json!({"type": "text-delta", "id": "u", "delta": "again"}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"}),
        json!({"type": "data-x", "id": "d", "data": 2}),
    ]));
    assert_eq!(
        parts(done.stream.message()),
        json!([
            {"type": "step-start"},
            {"type": "text", "text": "kept!", "state": "done"},
            {"type": "step-start"},
            {"type": "text", "text": "again", "state": "streaming"},
            {"type": "data-x", "id": "d", "data": 2}
        ])
    );
    assert_eq!(done.stream.stats().protocol_errors, 2);
    assert!(
        done.deltas
            .iter()
            .any(|delta| matches!(delta, StreamDelta::PartsRemoved { from: 3 }))
    );
}

/// §5 tools: a streamed input is repaired as it grows, `rawInput` holds the text, and
/// `tool-input-available` replaces the input and drops `rawInput`; `title`, `toolMetadata`,
/// `providerExecuted` and the provider metadata are copied.
#[test]
fn tool_input_streaming_and_fields() {
    let done = run(&events(&[
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "search", "title": "Search",
               "providerExecuted": true, "providerMetadata": {"p": {"x": 1}}, "toolMetadata": {"k": 1}}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{\"q\":[\"a\",tr"}),
    ]));
    assert_eq!(
        parts(done.stream.message()),
        json!([{"type": "tool-search", "toolCallId": "c", "state": "input-streaming",
                "input": {"q": ["a", true]}, "rawInput": "{\"q\":[\"a\",tr", "title": "Search",
                "providerExecuted": true, "callProviderMetadata": {"p": {"x": 1}}, "toolMetadata": {"k": 1}}])
    );
    let parts = parts_after(&[
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "search", "providerExecuted": true}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{\"q\":1"}),
        json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "search", "input": {"q": 2}}),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": "r", "providerMetadata": {"p": {}}}),
    ]);
    assert_eq!(
        parts,
        json!([{"type": "tool-search", "toolCallId": "c", "state": "output-available",
                "input": {"q": 2}, "output": "r", "providerExecuted": true, "resultProviderMetadata": {"p": {}}}])
    );
}

/// §5 tools: with `inputEncoding: "text"` the input is the raw text itself.
#[test]
fn tool_input_text_encoding() {
    let parts = parts(
        run(&events(&[
            json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "shell", "inputEncoding": "text"}),
            json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "ls -"}),
            json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "la {"}),
        ]))
        .stream
        .message(),
    );
    assert_eq!(parts[0]["input"], json!("ls -la {"));
    assert_eq!(parts[0]["rawInput"], json!("ls -la {"));
}

/// §5 tools: a dynamic tool is `dynamic-tool` with `toolName`; a `tool-input-available`
/// without a start creates the part; `tool-input-error` gives `output-error` with the input.
#[test]
fn dynamic_tools_and_input_errors() {
    let parts = parts_after(&[
        json!({"type": "tool-input-available", "toolCallId": "d", "toolName": "mcp_x", "input": {}, "dynamic": true}),
        json!({"type": "tool-input-start", "toolCallId": "e", "toolName": "calc", "dynamic": true}),
        json!({"type": "tool-input-error", "toolCallId": "e", "toolName": "calc", "input": "1+", "errorText": "bad input"}),
        json!({"type": "tool-input-error", "toolCallId": "f", "toolName": "calc", "input": "{", "errorText": "bad"}),
    ]);
    assert_eq!(
        parts,
        json!([
            {"type": "dynamic-tool", "toolName": "mcp_x", "toolCallId": "d", "state": "input-available", "input": {}},
            {"type": "dynamic-tool", "toolName": "calc", "toolCallId": "e", "state": "output-error", "input": "1+", "errorText": "bad input"},
            {"type": "tool-calc", "toolCallId": "f", "state": "output-error", "input": "{", "errorText": "bad"}
        ])
    );
}

/// §5 tools: input chunks update the call's part of the current step only (a call id reused in
/// a later step gets a new part); output chunks take the first part of the call in the current
/// step, else the latest part anywhere.
#[test]
fn tool_output_lookup_current_step_first() {
    let call = |id: &str, q: i32, dynamic: bool| json!({"type": "tool-input-available", "toolCallId": id, "toolName": "t", "input": {"q": q}, "dynamic": dynamic});
    let parts = parts_after(&[
        json!({"type": "start-step"}),
        call("call_0", 1, false),
        call("call_1", 1, false),
        call("call_1", 2, true),
        json!({"type": "start-step"}),
        call("call_0", 2, false),
        call("call_0", 3, true),
        json!({"type": "tool-output-available", "toolCallId": "call_0", "output": "second"}),
        json!({"type": "tool-output-available", "toolCallId": "call_1", "output": "late"}),
    ]);
    assert_eq!(parts[1]["state"], json!("input-available"));
    assert_eq!(parts[1]["input"], json!({"q": 1}));
    assert_eq!(parts[2]["state"], json!("input-available"));
    assert_eq!(parts[3]["output"], json!("late"));
    assert_eq!(parts[5]["output"], json!("second"));
    assert_eq!(parts[5]["input"], json!({"q": 2}));
    assert_eq!(parts[6]["state"], json!("input-available"));
}

/// §5 tools: preliminary outputs replace each other; the final one has no `preliminary`.
#[test]
fn preliminary_outputs() {
    let start = json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": {"n": 1}});
    let preliminary = parts_after(&[
        start.clone(),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": {"p": 1}, "preliminary": true}),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": {"p": 2}, "preliminary": true}),
    ]);
    assert_eq!(preliminary[0]["output"], json!({"p": 2}));
    assert_eq!(preliminary[0]["preliminary"], json!(true));
    let last = parts_after(&[
        start,
        json!({"type": "tool-output-available", "toolCallId": "c", "output": {"p": 1}, "preliminary": true}),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": "final"}),
    ]);
    assert_eq!(
        last,
        json!([{"type": "tool-t", "toolCallId": "c", "state": "output-available", "input": {"n": 1}, "output": "final"}])
    );
}

/// §5 tools: approval requested, answered (found by approval id), or denied.
#[test]
fn approvals() {
    let input = json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "pay", "input": {"eur": 5}});
    let parts = parts_after(&[
        input.clone(),
        json!({"type": "tool-approval-request", "toolCallId": "c", "approvalId": "ap-1",
               "approvalDescriptor": {"risk": "high"}, "signature": "sig"}),
        json!({"type": "tool-approval-response", "approvalId": "ap-1", "approved": true, "reason": "ok"}),
    ]);
    assert_eq!(
        parts,
        json!([{"type": "tool-pay", "toolCallId": "c", "state": "approval-responded", "input": {"eur": 5},
                "approval": {"id": "ap-1", "approved": true, "reason": "ok", "descriptor": {"risk": "high"}, "signature": "sig"}}])
    );
    let denied = parts_after(&[
        input,
        json!({"type": "tool-approval-request", "toolCallId": "c", "approvalId": "ap-1"}),
        json!({"type": "tool-output-denied", "toolCallId": "c"}),
    ]);
    assert_eq!(denied[0]["state"], json!("output-denied"));
    assert_eq!(denied[0]["approval"], json!({"id": "ap-1"}));
}

/// §5 other parts: sources, files, custom and steering messages are appended with their
/// fields.
#[test]
fn other_parts_are_appended() {
    let parts = parts_after(&[
        json!({"type": "source-url", "sourceId": "s1", "url": "https://a.test", "title": "A"}),
        json!({"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "Doc", "filename": "d.pdf"}),
        json!({"type": "file", "url": "data:image/png;base64,AA==", "mediaType": "image/png"}),
        json!({"type": "reasoning-file", "url": "https://f.test", "mediaType": "image/png"}),
        json!({"type": "custom", "kind": "acme.note", "providerMetadata": {"acme": {}}}),
        json!({"type": "steering-message", "id": "s", "parts": [{"type": "text", "text": "faster"}]}),
    ]);
    assert_eq!(
        parts,
        json!([
            {"type": "source-url", "sourceId": "s1", "url": "https://a.test", "title": "A"},
            {"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "Doc", "filename": "d.pdf"},
            {"type": "file", "url": "data:image/png;base64,AA==", "mediaType": "image/png"},
            {"type": "reasoning-file", "url": "https://f.test", "mediaType": "image/png"},
            {"type": "custom", "kind": "acme.note", "providerMetadata": {"acme": {}}},
            {"type": "steering-message", "id": "s", "parts": [{"type": "text", "text": "faster"}]}
        ])
    );
}

/// §5 data: a part with the same type and id is replaced in place, anywhere (even in an
/// earlier step, and before `start`); without an id it is appended; transient data is only
/// delivered.
#[test]
fn data_parts() {
    let done = run(&body(&[
        json!({"type": "data-status", "id": "s", "data": "queued"}),
        json!({"type": "start", "messageId": "m"}),
        json!({"type": "start-step"}),
        json!({"type": "data-status", "data": "no id"}),
        json!({"type": "data-other", "id": "s", "data": 0}),
        json!({"type": "start-step"}),
        json!({"type": "data-status", "id": "s", "data": "done"}),
        json!({"type": "data-toast", "id": "t", "data": "saved", "transient": true}),
    ]));
    assert_eq!(
        parts(done.stream.message()),
        json!([
            {"type": "data-status", "id": "s", "data": "done"},
            {"type": "step-start"},
            {"type": "data-status", "data": "no id"},
            {"type": "data-other", "id": "s", "data": 0},
            {"type": "step-start"}
        ])
    );
    assert!(done.deltas.contains(&StreamDelta::TransientData {
        data_type: "data-toast".to_owned(),
        id: Some("t".to_owned()),
        data: json!("saved"),
    }));
}

/// §5 identity: `start` with `messageId` sets the id; without one the id given to the stream
/// stays.
#[test]
fn message_id() {
    let mut stream = engine_core::AnswerStream::new("local-1".to_owned(), 1 << 20);
    let mut deltas = Vec::new();
    stream.feed(&body(&[json!({"type": "start"})]), &mut deltas);
    assert_eq!(stream.message().id, "local-1");
    assert_eq!(
        deltas[0],
        StreamDelta::Started {
            message_id: "local-1".to_owned()
        }
    );
    let done = run(&body(&[json!({"type": "start", "messageId": "srv-1"})]));
    assert_eq!(done.stream.message().id, "srv-1");
}

/// §6: an error is reported and assembling goes on; a later `finish` does not clear it.
#[test]
fn error_then_finish_fails() {
    let done = run(&body(&[
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "error", "errorText": "model overloaded"}),
        json!({"type": "text-delta", "id": "t", "delta": "more"}),
        json!({"type": "error", "errorText": "second"}),
        json!({"type": "finish", "finishReason": "error"}),
    ]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Failed {
            error_text: "model overloaded".to_owned()
        }
    );
    assert_eq!(
        done.stream.message().status,
        MessageStatus::Failed {
            error: "model overloaded".to_owned()
        }
    );
    assert_eq!(parts(done.stream.message())[0]["text"], json!("more"));
    let errors: Vec<&StreamDelta> = done
        .deltas
        .iter()
        .filter(|delta| matches!(delta, StreamDelta::Error { .. }))
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(
        !done
            .deltas
            .iter()
            .any(|delta| matches!(delta, StreamDelta::Finished { .. }))
    );
}

/// §6: an error after `finish` still fails the answer; an error with no end at all fails it
/// (not interrupted); an error frame without text gets the default text.
#[test]
fn error_after_finish_and_without_end() {
    let done = run(&body(&[
        json!({"type": "finish", "finishReason": "stop"}),
        json!({"type": "error", "message": "late"}),
    ]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Failed {
            error_text: "late".to_owned()
        }
    );
    let done = run(&events(&[json!({"type": "error"})]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Failed {
            error_text: "The agent reported an error.".to_owned()
        }
    );
}

/// §6: `abort` ends the answer as it is (parts left streaming), complete.
#[test]
fn abort_keeps_the_message() {
    let done = run(&events(&[
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "par"}),
        json!({"type": "abort"}),
    ]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Aborted { reason: None }
    );
    assert_eq!(done.stream.message().status, MessageStatus::Complete);
    assert_eq!(parts(done.stream.message())[0]["state"], json!("streaming"));
}

/// §6: `[DONE]` without `finish` finishes; `finish` without `[DONE]` finishes; events after
/// `[DONE]` are ignored.
#[test]
fn done_and_finish() {
    let done = run(&body(&[json!({"type": "text-start", "id": "t"})]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Finished {
            finish_reason: None
        }
    );
    let done = run(&events(&[
        json!({"type": "finish", "finishReason": "length"}),
    ]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Finished {
            finish_reason: Some("length".to_owned())
        }
    );
    let mut sse = body(&[json!({"type": "text-start", "id": "t"})]);
    sse.extend(events(&[
        json!({"type": "text-delta", "id": "t", "delta": "late"}),
        json!({"type": "error", "errorText": "late"}),
    ]));
    let done = run(&sse);
    assert_eq!(parts(done.stream.message())[0]["text"], json!(""));
    assert_eq!(done.stream.stats().after_done, 2);
    assert_eq!(done.stream.message().status, MessageStatus::Complete);
}

/// Platform chat answer: `new_session` announces the Agent's session (id fallbacks), and any
/// frame's top-level `agent_id` names the Agent (not the `agent_id` inside `new_session`,
/// adr-notes 6); neither touches the message.
#[test]
fn engine_frames() {
    let done = run(&body(&[
        json!({"type": "new_session", "new_session": {"session_uid": "s-7", "agent_id": "ag-1", "thread_id": "th"}}),
        json!({"type": "start", "messageId": "m", "agent_id": "ag-2"}),
        json!({"type": "text-start", "id": "t", "agent_id": "ag-2"}),
    ]));
    let new_session = done.stream.new_session();
    assert_eq!(
        new_session.map(|n| (
            n.session_uid.as_str(),
            n.agent_id.as_deref(),
            n.agent_unique_id.as_deref(),
            n.session_key.as_deref(),
            n.thread_id.as_deref()
        )),
        Some(("s-7", Some("ag-1"), None, None, Some("th")))
    );
    assert_eq!(done.stream.agent_id(), Some("ag-2"));
    let agent_ids: Vec<&StreamDelta> = done
        .deltas
        .iter()
        .filter(|delta| matches!(delta, StreamDelta::AgentId { .. }))
        .collect();
    assert_eq!(agent_ids.len(), 1);
    assert_eq!(done.stream.message().parts.len(), 1);
}

/// The deltas serialize in camelCase, tagged by `type`.
#[test]
fn deltas_serialize() {
    let done = run(&body(&[
        json!({"type": "start", "messageId": "m"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "x"}),
    ]));
    let json = serde_json::to_value(&done.deltas).unwrap();
    assert_eq!(
        json,
        json!([
            {"type": "started", "messageId": "m"},
            {"type": "partAdded", "index": 0, "part": {"type": "text", "text": "", "state": "streaming"}},
            {"type": "textDelta", "index": 0, "delta": "x"},
            {"type": "finished", "finishReason": null},
            {"type": "ended", "outcome": {"type": "finished", "finishReason": null}, "status": {"status": "complete"}}
        ])
    );
}

/// §5 tool input, issue 12: a streaming input's growth is reported as the appended text
/// (`ToolInputDelta`), never as a copy of the whole part; the first delta after the part's
/// start, every later one, and a text-encoded input alike. A change of more than the input (an
/// output arriving) is a whole `PartUpdated` again. Issue 28: the growth one call of `feed`
/// reads for one part is one delta; fed a frame at a time, each frame's is its own.
#[test]
fn tool_input_growth_is_reported_as_the_appended_text() {
    let body = body(&[
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "f"}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{\"q\":"}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "\"Ber"}),
        json!({"type": "tool-input-start", "toolCallId": "t", "toolName": "g", "inputEncoding": "text"}),
        json!({"type": "tool-input-delta", "toolCallId": "t", "inputTextDelta": "ab"}),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": 1}),
    ]);
    let tool_deltas = |run: &Run| -> Vec<Value> {
        run.deltas
            .iter()
            .filter_map(|d| match d {
                StreamDelta::ToolInputDelta { .. } | StreamDelta::PartUpdated { .. } => {
                    Some(serde_json::to_value(d).unwrap())
                }
                _ => None,
            })
            .collect()
    };
    let framed = tool_deltas(&run_frame_by_frame(&body));
    assert_eq!(framed.len(), 4, "{framed:?}");
    assert_eq!(
        framed[..3],
        [
            json!({"type": "toolInputDelta", "index": 0, "delta": "{\"q\":", "inputIsText": false}),
            json!({"type": "toolInputDelta", "index": 0, "delta": "\"Ber", "inputIsText": false}),
            json!({"type": "toolInputDelta", "index": 1, "delta": "ab", "inputIsText": true}),
        ]
    );
    assert_eq!(framed[3]["type"], "partUpdated");
    assert_eq!(framed[3]["part"]["state"], "output-available");
    let run = run(&body);
    let whole = tool_deltas(&run);
    assert_eq!(
        whole,
        [
            json!({"type": "toolInputDelta", "index": 0, "delta": "{\"q\":\"Ber", "inputIsText": false}),
            json!({"type": "toolInputDelta", "index": 1, "delta": "ab", "inputIsText": true}),
            framed[3].clone(),
        ]
    );
    let parts = parts(run.stream.message());
    assert_eq!(parts[0]["input"], json!({"q": "Ber"}));
    assert_eq!(parts[1]["input"], json!("ab"));
}
