//! Decoding and assembling a streamed answer (`AnswerStream`): a synthetic ui-message-stream
//! body of N token-sized text deltas (N = 10k and 100k), and a tool-heavy variant, fed in
//! network-like slices of one to four events that end mid-event. The time of 100k should be
//! about ten times the time of 10k: the work is linear in the body.
//!
//! Run with `cargo bench -p engine-core --bench answer_stream`.

#![allow(missing_docs, clippy::indexing_slicing)]

use std::hint::black_box;
use std::ops::Range;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use engine_core::AnswerStream;

/// Appends one `data:` event.
fn event(body: &mut String, json: &str) {
    body.push_str("data: ");
    body.push_str(json);
    body.push_str("\n\n");
}

/// A text answer of `deltas` token-sized deltas.
fn text_body(deltas: usize) -> Vec<u8> {
    let mut body = String::new();
    event(&mut body, r#"{"type":"start","messageId":"msg-bench"}"#);
    event(&mut body, r#"{"type":"start-step"}"#);
    event(&mut body, r#"{"type":"text-start","id":"txt-0"}"#);
    for i in 0..deltas {
        let token = ["the ", "answer", " is", " 42", ", ü", "🌍 ", "\\n"][i % 7];
        event(
            &mut body,
            &format!(r#"{{"type":"text-delta","id":"txt-0","delta":"{token}"}}"#),
        );
    }
    event(&mut body, r#"{"type":"text-end","id":"txt-0"}"#);
    event(&mut body, r#"{"type":"finish-step"}"#);
    event(&mut body, r#"{"type":"finish","finishReason":"stop"}"#);
    event(&mut body, "[DONE]");
    body.into_bytes()
}

/// An answer of about `deltas` deltas where most are tool input deltas: one tool call per 20
/// deltas (16 input deltas streaming a JSON object, then its output), with some text between.
fn tool_body(deltas: usize) -> Vec<u8> {
    let mut body = String::new();
    event(&mut body, r#"{"type":"start","messageId":"msg-tools"}"#);
    for call in 0..deltas / 20 {
        event(&mut body, r#"{"type":"start-step"}"#);
        event(
            &mut body,
            &format!(r#"{{"type":"text-start","id":"t{call}"}}"#),
        );
        for _ in 0..3 {
            event(
                &mut body,
                &format!(r#"{{"type":"text-delta","id":"t{call}","delta":"Let me look. "}}"#),
            );
        }
        event(
            &mut body,
            &format!(r#"{{"type":"text-end","id":"t{call}"}}"#),
        );
        event(
            &mut body,
            &format!(
                r#"{{"type":"tool-input-start","toolCallId":"call_{call}","toolName":"search"}}"#
            ),
        );
        let pieces = [
            r#"{\"query\":\""#,
            "weather",
            " in",
            " Berlin",
            r#"\",\"limit\""#,
            ":1",
            "0,",
            r#"\"tags\":[\""#,
            "a",
            r#"\",\""#,
            "b",
            r#"\"],\"deep\":{"#,
            r#"\"x\":"#,
            "tru",
            "e}",
            "}",
        ];
        for piece in pieces {
            event(
                &mut body,
                &format!(
                    r#"{{"type":"tool-input-delta","toolCallId":"call_{call}","inputTextDelta":"{piece}"}}"#
                ),
            );
        }
        event(
            &mut body,
            &format!(
                r#"{{"type":"tool-input-available","toolCallId":"call_{call}","toolName":"search","input":{{"query":"weather in Berlin","limit":10,"tags":["a","b"],"deep":{{"x":true}}}}}}"#
            ),
        );
        event(
            &mut body,
            &format!(
                r#"{{"type":"tool-output-available","toolCallId":"call_{call}","output":{{"results":[{{"title":"Sunny","temperature":21}}]}}}}"#
            ),
        );
        event(&mut body, r#"{"type":"finish-step"}"#);
    }
    event(&mut body, r#"{"type":"finish","finishReason":"stop"}"#);
    event(&mut body, "[DONE]");
    body.into_bytes()
}

/// Network-like slices: one to four events each (cycling), every cut 7 bytes into the next
/// event, so most slices end mid-line.
fn slices(body: &[u8]) -> Vec<Range<usize>> {
    let mut ends: Vec<usize> = body
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair == b"\n\n")
        .map(|(at, _)| at + 2)
        .collect();
    ends.push(body.len());
    let mut slices = Vec::new();
    let mut start = 0;
    let mut event = 0;
    let mut group = 0;
    while start < body.len() {
        event += 1 + group % 4;
        group += 1;
        let end = ends
            .get(event.min(ends.len() - 1))
            .map_or(body.len(), |&end| (end + 7).min(body.len()))
            .max(start + 1)
            .min(body.len());
        slices.push(start..end);
        start = end;
    }
    slices
}

/// Feeds the body in its slices, draining the deltas as a host would.
fn decode(body: &[u8], slices: &[Range<usize>]) -> usize {
    let mut stream = AnswerStream::new("local".to_owned(), 1 << 20);
    let mut deltas = Vec::new();
    for slice in slices {
        stream.feed(&body[slice.clone()], &mut deltas);
        black_box(&deltas);
        deltas.clear();
    }
    stream.end(&mut deltas);
    stream.message().parts.len()
}

fn answer_stream(c: &mut Criterion) {
    let mut group = c.benchmark_group("answer_stream");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(12));
    for (variant, build) in [
        ("text", text_body as fn(usize) -> Vec<u8>),
        ("tools", tool_body),
    ] {
        for deltas in [10_000, 100_000] {
            let body = build(deltas);
            let slices = slices(&body);
            group.throughput(Throughput::Bytes(body.len() as u64));
            group.bench_with_input(
                BenchmarkId::new(variant, deltas),
                &(body, slices),
                |b, (body, slices)| b.iter(|| decode(body, slices)),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, answer_stream);
criterion_main!(benches);
