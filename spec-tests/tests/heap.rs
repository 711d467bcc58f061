#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Heap sizes (issue 12), in bytes counted by a counting global allocator (live bytes: allocated
//! less freed), not time: a ready engine, and a finished message next to its text and JSON
//! bytes (its compact serde JSON, `serde_json::to_string(&message).len()`). One test, so no
//! other test's allocations run alongside. Prints `HEAP` lines (`-- --nocapture`).

use std::alloc::System;

use engine_core::message::Message;
use engine_core::{AnswerStream, Engine};
use serde_json::json;
use spec_tests::{Harness, fixtures};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes allocated and not yet freed, in the whole process.
fn live() -> isize {
    let s = GLOBAL.stats();
    s.bytes_allocated as isize - s.bytes_deallocated as isize + s.bytes_reallocated
}

/// The heap `value` holds: what dropping it frees.
fn heap_of<T>(value: T) -> isize {
    let before = live();
    drop(value);
    before - live()
}

/// An answer's body: `events` as SSE, with `[DONE]`.
fn sse(events: &[serde_json::Value]) -> Vec<u8> {
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// The message an answer assembles to, fed in pieces of `piece` bytes, as the engine keeps it
/// (`AnswerStream::into_message`, which the send machine moves into the thread).
fn assembled(body: &[u8], piece: usize) -> Message {
    let mut stream = AnswerStream::new("m-0".into(), 1 << 20);
    let mut out = Vec::new();
    for slice in body.chunks(piece) {
        stream.feed(slice, &mut out);
        out.clear();
    }
    stream.end(&mut out);
    stream.into_message()
}

fn text_answer(deltas: usize) -> Vec<u8> {
    let mut events = vec![
        json!({"type": "start", "messageId": "msg-1"}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t-1"}),
    ];
    events.extend((0..deltas).map(
        |i| json!({"type": "text-delta", "id": "t-1", "delta": spec_tests::long_answer::delta(i)}),
    ));
    events.extend([
        json!({"type": "text-end", "id": "t-1"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    sse(&events)
}

/// A tool call's input: an object with 40 `{line, text}` objects (1.4 KB of JSON).
fn tool_input() -> String {
    json!({"path": "src/lib.rs", "edits": (0..40).map(|i| json!({"line": i, "text": format!("let v{i} = {i};")})).collect::<Vec<_>>()}).to_string()
}

/// Reasoning, a tool call whose JSON input streams in small pieces, its output, text, and
/// message metadata given in three patches.
fn agent_answer() -> Vec<u8> {
    let input = tool_input();
    let mut events = vec![
        json!({"type": "start", "messageId": "msg-2", "messageMetadata": {"model": "m-1", "usage": {"input": 10}}}),
        json!({"type": "start-step"}),
        json!({"type": "reasoning-start", "id": "r-1"}),
    ];
    events.extend((0..200).map(|i| {
        json!({"type": "reasoning-delta", "id": "r-1", "delta": spec_tests::long_answer::delta(i)})
    }));
    events.push(json!({"type": "reasoning-end", "id": "r-1"}));
    events.push(json!({"type": "tool-input-start", "toolCallId": "c-1", "toolName": "edit"}));
    let chars: Vec<char> = input.chars().collect();
    events.extend(chars.chunks(5).map(|c| {
        json!({"type": "tool-input-delta", "toolCallId": "c-1", "inputTextDelta": c.iter().collect::<String>()})
    }));
    events.push(json!({"type": "tool-input-available", "toolCallId": "c-1", "toolName": "edit", "input": serde_json::from_str::<serde_json::Value>(&input).unwrap()}));
    events.push(json!({"type": "tool-output-available", "toolCallId": "c-1", "output": {"ok": true, "lines": 40}}));
    events.push(json!({"type": "message-metadata", "messageMetadata": {"usage": {"output": 99}}}));
    events.push(json!({"type": "text-start", "id": "t-1"}));
    events.extend((0..500).map(
        |i| json!({"type": "text-delta", "id": "t-1", "delta": spec_tests::long_answer::delta(i)}),
    ));
    events.push(json!({"type": "text-end", "id": "t-1"}));
    events.push(json!({"type": "finish-step"}));
    events
        .push(json!({"type": "finish", "finishReason": "stop", "messageMetadata": {"done": true}}));
    sse(&events)
}

/// Prints where a finished agent answer's heap is, part by part (what dropping each frees).
fn agent_message_breakdown() {
    use engine_core::message::Part;
    let mut message = assembled(&agent_answer(), 16 * 1024);
    let json = |v: &Option<engine_core::Json>| serde_json::to_string(v).unwrap().len();
    let metadata = message.metadata.take();
    let metadata_json = json(&metadata);
    println!(
        "HEAP agent answer part: metadata {} B ({metadata_json} B JSON)",
        heap_of(metadata)
    );
    for part in std::mem::take(&mut message.parts) {
        match part {
            Part::Tool(mut tool) => {
                for (name, value) in [
                    ("tool input", tool.input.take()),
                    ("tool output", tool.output.take()),
                    (
                        "tool rawInput",
                        tool.raw_input.take().map(engine_core::Json::from),
                    ),
                ] {
                    let bytes = json(&value);
                    println!(
                        "HEAP agent answer part: {name} {} B ({bytes} B JSON)",
                        heap_of(value)
                    );
                }
                println!(
                    "HEAP agent answer part: tool part's box, name and id {} B",
                    heap_of(tool)
                );
            }
            Part::Text(text) => println!("HEAP agent answer part: text {} B", heap_of(text)),
            Part::Reasoning(reasoning) => {
                println!("HEAP agent answer part: reasoning {} B", heap_of(reasoning))
            }
            other => println!("HEAP agent answer part: other {} B", heap_of(other)),
        }
    }
    println!(
        "HEAP agent answer part: the rest (id, parts vector) {} B",
        heap_of(message)
    );
}

/// [`Harness::talking`] with a history of no messages.
fn ready_with_empty_thread(uid: &str) -> Engine {
    let mut h = Harness::selected(uid);
    h.answer_detail(
        uid,
        fixtures::record(uid, fixtures::AGENT, fixtures::ENV, 0),
    );
    let mut history = fixtures::history(uid);
    history["messages"] = json!([]);
    let id = h.history_request(uid);
    h.reply(id, 200, history);
    let id = h.insights_request(uid);
    h.reply(id, 200, fixtures::insights(uid));
    h.runtime_ready(uid, 200);
    h.into_engine().0
}

/// The issue's targets, asserted as they are (docs/benchmarks.md, "Replay and memory (issue
/// 12)", has the figures): 8 KiB for a ready engine (7,833 B measured) and 1.2x for every
/// finished message (text 1.01x; an agent answer with a tool call and metadata 1.10x, its JSON
/// values kept as compact text, `engine_core::Json`).
const ENGINE_MAX: isize = 8 * 1024;
const MESSAGE_MAX: f64 = 1.2;

/// Prints a message's heap next to its JSON bytes and asserts the ratio is within the target.
fn assert_compact(name: &str, message: Message) {
    let json = serde_json::to_string(&message).unwrap().len() as isize;
    let heap = heap_of(message);
    let ratio = heap as f64 / json as f64;
    println!("HEAP {name}: {heap} B heap, {json} B JSON: {ratio:.2}x");
    assert!(
        ratio <= MESSAGE_MAX,
        "{name}: the message holds {ratio:.2}x its JSON"
    );
}

/// Issue 12: the heap of a ready engine (a session selected and hydrated with an empty thread,
/// its runtime ready: `Harness::talking` with an empty history) and of finished messages, next
/// to their JSON bytes, within the bounds above.
#[test]
fn heap_sizes() {
    let engine = ready_with_empty_thread("s-1");
    assert!(engine.snapshot().thread.is_empty());
    assert!(engine.snapshot().composer_admission);
    let inline = std::mem::size_of::<Engine>() as isize;
    let fresh = heap_of(Engine::new(
        engine_core::Config::new(spec_tests::BASE).unwrap(),
        engine_core::Time::ZERO,
    ));
    println!("HEAP fresh engine (Engine::new): {fresh} B heap");
    let heap = heap_of(engine);
    println!(
        "HEAP ready engine: {heap} B heap + {inline} B inline = {} B",
        heap + inline
    );
    for (name, body, piece) in [
        (
            "text answer, 10k deltas, 16 KiB pieces",
            text_answer(10_000),
            16 * 1024,
        ),
        (
            "text answer, 10k deltas, 60-byte pieces",
            text_answer(10_000),
            60,
        ),
        ("agent answer", agent_answer(), 16 * 1024),
        ("agent answer, 60-byte pieces", agent_answer(), 60),
    ] {
        assert_compact(
            &format!("finished message, {name}"),
            assembled(&body, piece),
        );
    }
    // A history message is compact when read: the same tool input, as the platform's content.
    let input: serde_json::Value = serde_json::from_str(&tool_input()).unwrap();
    let history = json!({"messages": [{"id": "m-3", "role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "c-1", "toolName": "edit", "args": input,
            "result": {"ok": true, "lines": 40}, "isError": false},
        {"type": "text", "text": "Done."}],
        "provenance": {"origin": "user", "targetAgentUid": "a-1"}}]});
    let message = engine_core::api::parse_history(history.to_string().as_bytes())
        .unwrap()
        .messages
        .remove(0);
    assert_compact("history message with a tool call", message);
    agent_message_breakdown();
    assert!(
        heap + inline <= ENGINE_MAX,
        "ready engine {} B",
        heap + inline
    );
}
