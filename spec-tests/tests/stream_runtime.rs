#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The runtime's answer dialect through the engine (RU-1 to RU-12): what the vectors of
//! `stream_dialect.rs` do not show. The run status lines of tools (RU-8 to RU-12, the
//! reference's 0.0.12), the frames that break a stream (RU-5), a body cut short (RU-6), the
//! older runtimes' frames (RU-2), and skipped frames counted by type (issue 24, point 5).

use crate::stream_support;

use engine_core::message::{MessageStatus, Part, PartState, ToolState};
use engine_core::stream::{SkipReason, StreamDelta};
use engine_core::{
    Command, Event, FailureCode, HoldReason, RequestId, RunStatus, Snapshot, StreamOutcome,
};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::turns::post_on;
use stream_support::{body, events, run};

const S1: &str = "s-1";

fn status(s: &Snapshot) -> (RunStatus, Option<String>) {
    (s.run_status, s.run_status_detail.clone())
}

fn frame(h: &mut Harness, id: RequestId, chunk: Value) {
    h.chunk(id, format!("data: {chunk}\n\n").as_bytes());
}

/// A turn of S1 whose answer's head has come.
fn streaming() -> (Harness, RequestId) {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "What is in the notes?");
    h.stream_head(id);
    (h, id)
}

fn detail(h: &Harness) -> Option<String> {
    h.snapshot().run_status_detail
}

/// The answer as the thread shows it (the last message).
fn answer(h: &Harness) -> engine_core::message::Message {
    (**h.snapshot().thread.last().unwrap()).clone()
}

/// RU-11: the line after `tool-call-start` with NAME and, when given, one `tool-call-delta`
/// with ARGS; the reference's table, row by row.
#[test]
fn the_tool_line_table_of_the_reference() {
    let rows: [(&str, Option<&str>, &str); 9] = [
        ("bash", None, "Running bash"),
        ("", None, "Running tool"),
        (
            "mainsequence__a2a_send_message",
            None,
            "Using MCP tool a2a_send_message",
        ),
        ("mainsequence__", None, "Running mainsequence__"),
        ("my_app__list_tools", None, "Listing my_app MCP tools"),
        ("metatables__call_tool", None, "Using a metatables MCP tool"),
        (
            "metatables__call_tool",
            Some(r#"{"tool":"list_namespaces","arguments":{"limit":500}}"#),
            "Using metatables MCP tool list_namespaces",
        ),
        (
            "metatables__call_tool",
            Some(r#"{"arguments":{}}"#),
            "Using a metatables MCP tool",
        ),
        (
            "mainsequence__call_tool",
            Some(r#"{"tool":"x"}"#),
            "Using MCP tool call_tool",
        ),
    ];
    for (n, (name, args, line)) in rows.into_iter().enumerate() {
        let (mut h, id) = streaming();
        let call = format!("call-{n}");
        frame(
            &mut h,
            id,
            json!({"type": "tool-call-start", "toolCallId": call, "toolName": name}),
        );
        if let Some(args) = args {
            frame(
                &mut h,
                id,
                json!({"type": "tool-call-delta", "toolCallId": call, "argsText": args}),
            );
        }
        let s = h.snapshot();
        // RU-8: `thinking`, the line as detail and summary, and output to show.
        assert_eq!(
            status(&s),
            (RunStatus::Thinking, Some(line.to_owned())),
            "{name} {args:?}"
        );
        assert_eq!(s.thinking_summary.as_deref(), Some(line), "{name}");
        assert!(s.has_visible_assistant_output, "{name}");
    }
}

/// RU-10: names are trimmed; a name that is not a string reads as empty ("Running tool"), while
/// the tool part is named "unknown" (RU-1); an application name must match the pattern (a
/// capital, a leading digit, or 41 characters make it an ordinary tool).
#[test]
fn tool_names_that_are_odd() {
    for (name, line) in [
        (json!("  bash  "), "Running bash"),
        (json!(7), "Running tool"),
        (json!(null), "Running tool"),
        (json!("My_app__list_tools"), "Running My_app__list_tools"),
        (json!("1app__list_tools"), "Running 1app__list_tools"),
        (
            json!(format!("{}__list_tools", "a".repeat(41))),
            &*format!("Running {}__list_tools", "a".repeat(41)),
        ),
        (
            json!(format!("{}__list_tools", "a".repeat(40))),
            &*format!("Listing {} MCP tools", "a".repeat(40)),
        ),
        (json!("a_b__c__call_tool"), "Using a a_b__c MCP tool"),
    ] {
        let (mut h, id) = streaming();
        frame(
            &mut h,
            id,
            json!({"type": "tool-call-start", "toolCallId": "c", "toolName": name}),
        );
        assert_eq!(detail(&h).as_deref(), Some(line), "{name}");
        if !name.is_string() {
            let Part::Tool(tool) = &answer(&h).parts[0] else {
                panic!("no tool part");
            };
            assert_eq!(tool.tool_name, "unknown");
        }
    }
}

/// RU-9, RU-11 (streamed), RU-12: the followed call's arguments count once they parse; a delta
/// for another call changes nothing and drops the followed one; the result gives
/// "Thinking..." with no summary, text gives `responding`, the clean end `complete`.
#[test]
fn a_streamed_call_is_followed_until_its_arguments_parse() {
    let (mut h, id) = streaming();
    frame(&mut h, id, json!({"type": "start-step"}));
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-start", "toolCallId": "call-1", "toolName": "metatables__call_tool"}),
    );
    assert_eq!(detail(&h).as_deref(), Some("Using a metatables MCP tool"));
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-delta", "toolCallId": "call-1", "argsText": "{\"tool\":\"list_names"}),
    );
    assert_eq!(detail(&h).as_deref(), Some("Using a metatables MCP tool"));
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-delta", "toolCallId": "call-1", "argsText": "paces\",\"arguments\":{\"limit\":500}}"}),
    );
    assert_eq!(
        detail(&h).as_deref(),
        Some("Using metatables MCP tool list_namespaces")
    );
    // The tool part streamed its arguments too (ui-message-stream §5).
    let Part::Tool(tool) = &answer(&h).parts[1] else {
        panic!("no tool part");
    };
    assert_eq!(tool.state, ToolState::InputStreaming);
    assert_eq!(
        tool.input.as_ref().map(|i| i.value().into_owned()),
        Some(json!({"tool": "list_namespaces", "arguments": {"limit": 500}}))
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-delta", "toolCallId": "call-2", "argsText": "{}"}),
    );
    assert_eq!(
        detail(&h).as_deref(),
        Some("Using metatables MCP tool list_namespaces")
    );
    // call-1 is no longer followed: its delta changes nothing.
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-delta", "toolCallId": "call-1", "argsText": "{\"tool\":\"other\"}"}),
    );
    assert_eq!(
        detail(&h).as_deref(),
        Some("Using metatables MCP tool list_namespaces")
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-end", "toolCallId": "call-1"}),
    );
    let visible = h.snapshot().has_visible_assistant_output;
    frame(
        &mut h,
        id,
        json!({"type": "tool-result", "toolCallId": "call-1", "result": {"content": []}, "isError": false}),
    );
    let s = h.snapshot();
    assert_eq!(
        status(&s),
        (RunStatus::Thinking, Some("Thinking...".to_owned()))
    );
    assert_eq!(s.thinking_summary, None);
    assert_eq!(s.has_visible_assistant_output, visible);
    frame(&mut h, id, json!({"type": "text-start", "id": "text-0"}));
    frame(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "text-0", "textDelta": "One namespace."}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (
            RunStatus::Responding,
            Some("Writing a response...".to_owned())
        )
    );
    frame(&mut h, id, json!({"type": "text-end", "id": "text-0"}));
    frame(
        &mut h,
        id,
        json!({"type": "finish", "finishReason": "stop"}),
    );
    h.chunk(id, b"data: [DONE]\n\n");
    h.end(id);
    assert_eq!(
        status(&h.snapshot()),
        (RunStatus::Complete, Some("Run completed.".to_owned()))
    );
    let message = answer(&h);
    assert_eq!(message.status, MessageStatus::Complete);
    let Part::Tool(tool) = &message.parts[1] else {
        panic!("no tool part");
    };
    assert_eq!(tool.state, ToolState::OutputAvailable);
    assert!(tool.dynamic, "a runtime tool is a dynamic tool part");
    let Part::Text(text) = &message.parts[2] else {
        panic!("no text part");
    };
    assert_eq!(text.text, "One namespace.");
}

/// RU-2, RU-7: an older runtime's `tool-input-available` is named at once, as a start plus one
/// delta holding the complete input; its `tool-output-available` acts as `tool-result`.
#[test]
fn an_older_runtimes_call_is_named_at_once() {
    let (mut h, id) = streaming();
    frame(
        &mut h,
        id,
        json!({"type": "tool-input-available", "toolCallId": "c9", "toolName": "metatables__call_tool", "input": {"tool": "list_namespaces", "arguments": {"limit": 500}}}),
    );
    assert_eq!(
        detail(&h).as_deref(),
        Some("Using metatables MCP tool list_namespaces")
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-output-delta", "toolCallId": "c9", "delta": "partial"}),
    );
    assert_eq!(
        detail(&h).as_deref(),
        Some("Using metatables MCP tool list_namespaces")
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-output-available", "toolCallId": "c9", "output": {"error": "down"}, "isError": true}),
    );
    assert_eq!(detail(&h).as_deref(), Some("Thinking..."));
    let Part::Tool(tool) = &answer(&h).parts[0] else {
        panic!("no tool part");
    };
    // RU-2: `isError: true` fails the call and keeps its output.
    assert_eq!(tool.state, ToolState::OutputError);
    assert_eq!(
        tool.output.as_ref().map(|o| o.value().into_owned()),
        Some(json!({"error": "down"}))
    );
    assert_eq!(tool.error_text.as_deref(), Some("down"));
}

/// RU-2: a call announced whole whose input is not an object (an array included) has the
/// arguments `{}`; one announced by `tool-input-start` first keeps the AI SDK's reading.
#[test]
fn a_non_object_input_announced_whole_reads_as_empty_arguments() {
    for input in [json!([1, 2]), json!("text"), json!(null), json!(3)] {
        let done = run(&body(&[
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": input}),
        ]));
        let Part::Tool(tool) = &done.stream.message().parts[0] else {
            panic!("no tool part");
        };
        assert_eq!(
            tool.input.as_ref().map(|i| i.value().into_owned()),
            Some(json!({})),
            "{input}"
        );
    }
    let done = run(&body(&[
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "t"}),
        json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": [1]}),
    ]));
    let Part::Tool(tool) = &done.stream.message().parts[0] else {
        panic!("no tool part");
    };
    assert_eq!(
        tool.input.as_ref().map(|i| i.value().into_owned()),
        Some(json!([1]))
    );
}

/// RU-4: `tool-input-start` then `tool-input-available` for one call is one tool part and the
/// turn ends normally (the reference's decoder would call the id a duplicate).
#[test]
fn an_ai_sdk_call_is_one_part_not_a_duplicate() {
    let done = run(&body(&[
        json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "t"}),
        json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{}"}),
        json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": {}}),
        json!({"type": "tool-output-available", "toolCallId": "c", "output": 1}),
        json!({"type": "finish"}),
    ]));
    assert_eq!(done.stream.message().parts.len(), 1);
    assert_eq!(done.stream.message().status, MessageStatus::Complete);
}

/// RU-5, RU-16: a `tool-result` naming no started call fails the turn (`error`, the queue held
/// `failed`) with "Source: Request was never sent. Encountered tool result with unknown id:
/// {id}"; what came before stays, none of it streaming, and nothing after it is read.
#[test]
fn a_result_for_a_call_never_started_fails_the_turn() {
    let (mut h, id) = streaming();
    h.command(Command::EnqueueMessage {
        text: "And then?".into(),
    });
    frame(&mut h, id, json!({"type": "text-start", "id": "text-0"}));
    frame(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "text-0", "textDelta": "Looking"}),
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-result", "toolCallId": "call-9", "result": {}, "isError": false}),
    );
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert!(
        s.run_status_detail
            .as_deref()
            .unwrap()
            .ends_with("Encountered tool result with unknown id: call-9"),
        "{:?}",
        s.run_status_detail
    );
    // Nothing after the break is read.
    frame(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "text-0", "textDelta": " further"}),
    );
    frame(
        &mut h,
        id,
        json!({"type": "finish", "finishReason": "stop"}),
    );
    h.chunk(id, b"data: [DONE]\n\n");
    h.end(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    // RU-5 with RU-16: the reference's full detail.
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some("Source: Request was never sent. Encountered tool result with unknown id: call-9")
    );
    assert_eq!(
        s.run_failure.as_ref().unwrap().code,
        FailureCode::StreamError
    );
    assert_eq!(
        s.message_queue_hold.as_ref().map(|hold| hold.reason),
        Some(HoldReason::Failed)
    );
    let message = answer(&h);
    assert!(matches!(message.status, MessageStatus::Failed { .. }));
    let Part::Text(text) = &message.parts[0] else {
        panic!("no text part");
    };
    assert_eq!(text.text, "Looking");
    assert_ne!(text.state, PartState::Streaming);
}

/// RU-5: a second `tool-call-start` for a started id fails the turn with "Encountered duplicate
/// tool call id: {id}"; an AI SDK `tool-output-available` for an unknown call fails it like a
/// `tool-result` (the reference turns it into one).
#[test]
fn a_call_id_started_twice_or_an_unknown_output_breaks_the_stream() {
    let start = json!({"type": "tool-call-start", "toolCallId": "call-1", "toolName": "bash"});
    let done = run(&body(&[start.clone(), start]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Failed {
            error_text: "Encountered duplicate tool call id: call-1".into()
        }
    );
    assert_eq!(done.stream.message().parts.len(), 1);
    assert_eq!(done.stream.stats().after_failure, 1, "[DONE] is not read");

    let done = run(&body(&[
        json!({"type": "tool-output-available", "toolCallId": "c-7", "output": 1}),
        json!({"type": "text-delta", "id": "t", "delta": "never shown"}),
    ]));
    assert_eq!(
        done.stream.outcome(),
        &StreamOutcome::Failed {
            error_text: "Encountered tool result with unknown id: c-7".into()
        }
    );
    assert!(done.stream.message().parts.is_empty());
    let errors: Vec<&StreamDelta> = done
        .deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Error { .. }))
        .collect();
    assert_eq!(errors.len(), 1, "the failure is reported once");
}

/// RU-3: a `tool-call-delta` appends to the call started last and not yet ended, whatever id
/// it names; with no call open, and `tool-call-end` with none open, it is skipped (a protocol
/// error, counted).
#[test]
fn argument_text_goes_to_the_open_call() {
    let done = run(&body(&[
        json!({"type": "tool-call-delta", "toolCallId": "x", "argsText": "{}"}),
        json!({"type": "tool-call-start", "toolCallId": "a", "toolName": "t"}),
        json!({"type": "tool-call-delta", "toolCallId": "other", "argsText": "{\"k\":"}),
        json!({"type": "tool-call-delta", "argsText": "1}"}),
        json!({"type": "tool-call-end", "toolCallId": "a"}),
        json!({"type": "tool-call-end", "toolCallId": "a"}),
        json!({"type": "tool-result", "toolCallId": "a", "result": "done"}),
        json!({"type": "finish"}),
    ]));
    let Part::Tool(tool) = &done.stream.message().parts[0] else {
        panic!("no tool part");
    };
    assert_eq!(
        tool.input.as_ref().map(|i| i.value().into_owned()),
        Some(json!({"k": 1}))
    );
    assert_eq!(tool.raw_input, None, "the complete arguments parsed");
    assert_eq!(tool.state, ToolState::OutputAvailable);
    assert_eq!(
        tool.output.as_ref().map(|o| o.value().into_owned()),
        Some(json!("done"))
    );
    assert_eq!(done.stream.stats().protocol_errors, 2);
    assert_eq!(done.stream.message().status, MessageStatus::Complete);
}

/// RU-1, RU-6: a terminal `error` frame without `finish` fails the answer with its text
/// (`[DONE]` or not); a body that ends before `finish` or `error` is interrupted; `finish`
/// without `[DONE]` is complete (the engine's departure from the reference, as the AI SDK
/// reads a body).
#[test]
fn how_a_runtime_answer_ends() {
    let text = |t: &str| json!({"type": "text-delta", "id": "text-0", "textDelta": t});
    let error = json!({"type": "error", "errorText": "Provider error: the model is overloaded"});
    for with_done in [true, false] {
        let chunks = [text("Let me"), error.clone()];
        let sse = if with_done {
            body(&chunks)
        } else {
            events(&chunks)
        };
        let done = run(&sse);
        assert_eq!(
            done.stream.message().status,
            MessageStatus::Failed {
                error: "Provider error: the model is overloaded".into()
            }
        );
    }
    let done = run(&events(&[text("Let me")]));
    assert_eq!(done.stream.outcome(), &StreamOutcome::Interrupted);
    let done = run(&events(&[
        text("Done."),
        json!({"type": "finish", "finishReason": "stop"}),
    ]));
    assert_eq!(done.stream.message().status, MessageStatus::Complete);
}

/// RU-6, ui-message-stream §6: through the engine, a body cut short fails the turn and the
/// parts already received stay in the thread, none left streaming.
#[test]
fn a_body_cut_short_keeps_what_came_none_streaming() {
    let (mut h, id) = streaming();
    frame(&mut h, id, json!({"type": "reasoning-start", "id": "r"}));
    frame(
        &mut h,
        id,
        json!({"type": "reasoning-delta", "id": "r", "delta": "Hm."}),
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-start", "toolCallId": "c", "toolName": "bash"}),
    );
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-delta", "toolCallId": "c", "argsText": "{\"cmd\":"}),
    );
    h.end(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, RunStatus::Error);
    assert_eq!(
        s.run_failure.as_ref().unwrap().code,
        FailureCode::StreamInterrupted
    );
    let message = answer(&h);
    assert!(matches!(message.status, MessageStatus::Failed { .. }));
    for part in &message.parts {
        match part {
            Part::Reasoning(r) => assert_eq!(r.state, PartState::Done),
            Part::Tool(t) => assert_ne!(t.state, ToolState::InputStreaming),
            _ => {}
        }
    }
}

/// RU-4: `data-runtime-lifecycle` and other `data-*` frames add no visible part and leave the
/// run status as it is; `textDelta` text shows and sets `responding`.
#[test]
fn lifecycle_frames_change_no_status_and_text_delta_shows() {
    let (mut h, id) = streaming();
    let before = status(&h.snapshot());
    frame(&mut h, id, json!({"type": "start-step"}));
    frame(
        &mut h,
        id,
        json!({"type": "data-runtime-lifecycle", "data": {"phase": "running"}}),
    );
    assert_eq!(status(&h.snapshot()), before);
    assert!(!h.snapshot().has_visible_assistant_output);
    frame(&mut h, id, json!({"type": "text-start", "id": "text-0"}));
    frame(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "text-0", "textDelta": "Hello ", "delta": "not this"}),
    );
    frame(
        &mut h,
        id,
        json!({"type": "text-delta", "id": "text-0", "textDelta": "from Tau."}),
    );
    assert_eq!(
        status(&h.snapshot()),
        (
            RunStatus::Responding,
            Some("Writing a response...".to_owned())
        )
    );
    let text: String = answer(&h)
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Hello from Tau.");
    let streamed = spec_tests::turns::streamed_text(h.events());
    assert_eq!(streamed, "Hello from Tau.");
}

/// Issue 24, point 5: a skipped frame is counted by type in the answer's stats, and the first of
/// each type is reported (`FrameSkipped`: unknown, invalid with its field, not a frame); the
/// names kept are capped.
#[test]
fn skipped_frames_are_counted_by_type_and_reported_once() {
    let mut sse = body(&[
        json!({"type": "x-future", "a": 1}),
        json!({"type": "x-future"}),
        json!({"type": "text-delta", "id": "t"}),
        json!({"type": "text-delta", "id": 5, "textDelta": "x"}),
        json!({"type": "tool-result"}),
    ]);
    sse.splice(0..0, b"data: not json\n\n".iter().copied());
    let done = run(&sse);
    let stats = done.stream.stats();
    assert_eq!(stats.unknown_chunks, 2);
    assert_eq!(stats.invalid_chunks, 3);
    assert_eq!(stats.dropped_payloads, 1);
    let types: Vec<(&str, u64)> = stats
        .skipped_types
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        types,
        [
            ("", 1),
            ("text-delta", 2),
            ("tool-result", 1),
            ("x-future", 2)
        ]
    );
    let reported: Vec<(Option<String>, SkipReason)> = done
        .deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::FrameSkipped { frame_type, reason } => {
                Some((frame_type.clone(), reason.clone()))
            }
            _ => None,
        })
        .collect();
    let invalid = |field: &str| SkipReason::InvalidField {
        field: field.into(),
    };
    assert_eq!(
        reported,
        [
            (None, SkipReason::NotAFrame),
            (Some("x-future".into()), SkipReason::UnknownType),
            (Some("text-delta".into()), invalid("delta")),
            (Some("tool-result".into()), invalid("toolCallId")),
        ]
    );
    assert!(reported[2].1.is_invalid() && !reported[1].1.is_invalid());

    let many: Vec<Value> = (0..100)
        .map(|n| json!({"type": format!("x-{n}")}))
        .collect();
    let done = run(&body(&many));
    assert_eq!(
        done.stream.stats().skipped_types.len(),
        engine_core::stream::MAX_SKIPPED_TYPES
    );
    assert_eq!(done.stream.stats().unknown_chunks, 100);
}

/// Issue 24, point 5: the engine hands skipped-frame reports and tool status changes to the
/// host as answer events, in order.
#[test]
fn the_host_hears_of_skipped_frames_and_tool_lines() {
    let (mut h, id) = streaming();
    let from = h.events().len();
    frame(&mut h, id, json!({"type": "x-future"}));
    frame(
        &mut h,
        id,
        json!({"type": "tool-call-start", "toolCallId": "c", "toolName": "bash"}),
    );
    let deltas: Vec<StreamDelta> = h.events()[from..]
        .iter()
        .filter_map(|e| match e {
            Event::Answer { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .filter(|d| {
            matches!(
                d,
                StreamDelta::FrameSkipped { .. } | StreamDelta::ToolStatus { .. }
            )
        })
        .collect();
    assert_eq!(
        deltas,
        [
            StreamDelta::FrameSkipped {
                frame_type: Some("x-future".into()),
                reason: SkipReason::UnknownType
            },
            StreamDelta::ToolStatus {
                line: Some("Running bash".into())
            },
        ]
    );
}
