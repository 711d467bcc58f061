//! Decoding and assembling a streamed answer (`AnswerStream`) next to a floor: about the
//! least work any correct decoder does (a `memchr` scan for event ends, a typed serde parse
//! that borrows from the input, an append to the open part), as in the anchor harness
//! (`shared/bench/floor`). The bodies come from seeded generators of the shapes the anchor's
//! `gen.mjs` writes:
//!
//! - `tokens-N`: one text part of N deltas of 3 to 6 characters;
//! - `agent`: a 40-step coding-agent answer (reasoning, text, a tool call whose 5-9 KB JSON
//!   input streams in 3 to 6 character pieces, its output, data parts, metadata);
//! - `agent-runtime`: the same answer in the platform runtime's dialect (RU-1: `textDelta`,
//!   `tool-call-*` with the whole arguments in one delta, `tool-result`);
//! - `big-deltas`: one text part of 1,000 deltas of 10,000 characters;
//! - `long-tool`: one tool call whose 100 KB input streams in 3 to 6 character pieces.
//!
//! Bodies are fed in 16 KiB slices, the deltas drained as a host would.
//!
//! - `cargo bench -p engine-core --bench answer_stream` prints the ratio table (interleaved
//!   timed runs: engine ÷ floor per shape, time(1M) ÷ time(100k), per-event time of the last
//!   tenth ÷ the first), then runs the criterion groups.
//! - `ANSWER_STREAM_ONLY=<engine|floor>:<shape>` runs one decode of one shape and exits, for
//!   counting instructions: `valgrind --tool=callgrind --toggle-collect='*run_engine*'
//!   --toggle-collect='*run_floor*' <bench binary>` (see docs/benchmarks.md).
//! - `ANSWER_STREAM_RATIOS=0` skips the ratio table.

#![allow(
    missing_docs,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    // A benchmark measures wall time; the core itself never reads a clock (clippy.toml).
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use engine_core::AnswerStream;
use serde::Deserialize;
use serde_json::{Value, json};

/// The slice size the body is fed in (as the anchor's programs).
const SLICE: usize = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// Seeded generators

/// The anchor generator's PRNG (mulberry32): the same seed gives the same bodies.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x6d2b_79f5);
        let mut t = (self.0 ^ (self.0 >> 15)).wrapping_mul(1 | self.0);
        t = (t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t))) ^ t;
        f64::from(t ^ (t >> 14)) / 4_294_967_296.0
    }

    /// `lo..=hi`.
    fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() * (hi - lo + 1) as f64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() * items.len() as f64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "it",
    "for",
    "as",
    "with",
    "stream",
    "parser",
    "message",
    "chunk",
    "buffer",
    "event",
    "decoder",
    "token",
    "model",
    "answer",
    "request",
    "response",
    "incremental",
    "bytes",
    "state",
    "client",
    "server",
    "protocol",
    "schema",
    "value",
    "field",
    "error",
    "result",
    "tool",
    "input",
    "output",
    "step",
    "reasoning",
    "text",
    "part",
    "delta",
    "assemble",
    "render",
    "update",
    "latency",
    "memory",
    "allocation",
    "string",
    "array",
    "object",
    "because",
    "however",
    "therefore",
    "first",
    "finally",
];
const SPICE: &[&str] = &[
    "café",
    "naïve",
    "Zürich",
    "—",
    "→",
    "“quoted”",
    "\"escaped\"",
    "C:\\path",
    "🚀",
    "🌍",
    "日本語",
    "`code()`",
    "**bold**",
    "x = 42;",
    "{\"k\": 1}",
    "tab\there",
    "line\nbreak",
];

/// Endless prose that looks like model output.
struct Prose {
    rng: Rng,
    pending: String,
}

impl Prose {
    fn new(seed: u32) -> Prose {
        Prose {
            rng: Rng(seed),
            pending: String::new(),
        }
    }

    fn sentence(&mut self) {
        let words = self.rng.int(6, 22);
        for i in 0..words {
            let word = if self.rng.next() < 0.06 {
                self.rng.pick(SPICE)
            } else {
                self.rng.pick(WORDS)
            };
            if i > 0 {
                self.pending.push(' ');
            }
            self.pending.push_str(word);
        }
        let end = self.rng.next();
        self.pending.push_str(if end < 0.1 {
            ":\n\n- "
        } else if end < 0.2 {
            ".\n\n"
        } else {
            ". "
        });
    }

    /// The next `chars` characters.
    fn take(&mut self, chars: usize) -> String {
        while self.pending.chars().count() < chars {
            self.sentence();
        }
        let end = self
            .pending
            .char_indices()
            .nth(chars)
            .map_or(self.pending.len(), |(i, _)| i);
        self.pending.drain(..end).collect()
    }

    /// A token of 3 to 6 characters.
    fn token(&mut self) -> String {
        let chars = self.rng.int(3, 6);
        self.take(chars)
    }
}

/// The bytes of one SSE body, one `data:` event per chunk, as AI SDK servers write it.
#[derive(Default)]
struct Body {
    bytes: Vec<u8>,
    events: usize,
}

impl Body {
    fn chunk(&mut self, chunk: &Value) {
        self.bytes.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut self.bytes, chunk).unwrap();
        self.bytes.extend_from_slice(b"\n\n");
        self.events += 1;
    }

    fn done(mut self) -> Body {
        self.bytes.extend_from_slice(b"data: [DONE]\n\n");
        self.events += 1;
        self
    }

    /// A JSON text streamed as tool input pieces of 3 to 6 characters.
    fn tool_input(&mut self, rng: &mut Rng, call: &str, json: &str) {
        let chars: Vec<(usize, char)> = json.char_indices().collect();
        let mut at = 0;
        while at < chars.len() {
            let end = (at + rng.int(3, 6)).min(chars.len());
            let from = chars[at].0;
            let to = chars.get(end).map_or(json.len(), |&(i, _)| i);
            self.chunk(&json!({"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": &json[from..to]}));
            at = end;
        }
    }
}

fn tokens(deltas: usize) -> Body {
    let mut prose = Prose::new(1);
    let mut body = Body::default();
    body.chunk(&json!({"type": "start", "messageId": "msg-bench"}));
    body.chunk(&json!({"type": "start-step"}));
    body.chunk(&json!({"type": "text-start", "id": "txt-0"}));
    for _ in 0..deltas {
        body.chunk(&json!({"type": "text-delta", "id": "txt-0", "delta": prose.token()}));
    }
    body.chunk(&json!({"type": "text-end", "id": "txt-0"}));
    body.chunk(&json!({"type": "finish-step"}));
    body.chunk(&json!({"type": "finish", "finishReason": "stop"}));
    body.done()
}

fn big_deltas() -> Body {
    let mut prose = Prose::new(1);
    let mut body = Body::default();
    body.chunk(&json!({"type": "start", "messageId": "msg-bench"}));
    body.chunk(&json!({"type": "text-start", "id": "txt-0"}));
    for _ in 0..1_000 {
        body.chunk(&json!({"type": "text-delta", "id": "txt-0", "delta": prose.take(10_000)}));
    }
    body.chunk(&json!({"type": "text-end", "id": "txt-0"}));
    body.chunk(&json!({"type": "finish", "finishReason": "stop"}));
    body.done()
}

/// A 40-step coding-agent answer; `scale` 1 gives about 100k events.
fn agent(scale: f64) -> Body {
    let mut rng = Rng(7);
    let mut prose = Prose::new(1);
    let scaled = |n: usize| ((n as f64) * scale).round() as usize;
    let tools = ["read_file", "grep", "write_file", "run_command"];
    let mut body = Body::default();
    body.chunk(&json!({"type": "start", "messageId": "msg-bench",
        "messageMetadata": {"createdAt": 1_767_225_600_000_u64, "model": "bench-model-1"}}));
    body.chunk(
        &json!({"type": "data-status", "id": "status", "data": {"phase": "thinking", "step": 0}}),
    );
    let steps = 40;
    for s in 0..steps {
        body.chunk(&json!({"type": "start-step"}));
        let rsn = format!("rsn-{s}");
        body.chunk(&json!({"type": "reasoning-start", "id": rsn}));
        for _ in 0..scaled(rng.int(800, 1600)) {
            body.chunk(&json!({"type": "reasoning-delta", "id": rsn, "delta": prose.token()}));
        }
        body.chunk(&json!({"type": "reasoning-end", "id": rsn,
            "providerMetadata": {"anthropic": {"signature": format!("sig-{s}-{}", "x".repeat(40))}}}));
        let txt = format!("txt-{s}");
        body.chunk(&json!({"type": "text-start", "id": txt}));
        for _ in 0..scaled(rng.int(600, 1400)) {
            body.chunk(&json!({"type": "text-delta", "id": txt, "delta": prose.token()}));
        }
        body.chunk(&json!({"type": "text-end", "id": txt}));
        if s + 1 < steps {
            let tool = tools[s % tools.len()];
            let call = format!("call-{s}");
            let path = format!("src/module_{s}.rs");
            // Every tool input carries 5-9 KB.
            let input = json!({"path": path, "mode": tool, "limit": 120_000,
                "content": prose.take(scaled(rng.int(5_000, 9_000)))});
            body.chunk(&json!({"type": "tool-input-start", "toolCallId": call, "toolName": tool}));
            body.tool_input(&mut rng, &call, &input.to_string());
            body.chunk(&json!({"type": "tool-input-available", "toolCallId": call, "toolName": tool, "input": input}));
            body.chunk(&json!({"type": "data-status", "id": "status", "data": {"phase": "tool", "step": s, "tool": tool}}));
            for p in 1..=3 {
                body.chunk(&json!({"type": "data-progress", "data": {"toolCallId": call, "percent": p * 33}, "transient": true}));
            }
            body.chunk(&json!({"type": "tool-output-available", "toolCallId": call,
                "output": {"path": path, "content": prose.take(scaled(4_000))}}));
        }
        body.chunk(&json!({"type": "message-metadata", "messageMetadata":
            {"usage": {"step": s, "inputTokens": rng.int(1_000, 50_000), "outputTokens": rng.int(500, 4_000)}}}));
        body.chunk(&json!({"type": "finish-step"}));
    }
    body.chunk(
        &json!({"type": "data-status", "id": "status", "data": {"phase": "done", "step": steps}}),
    );
    body.chunk(&json!({"type": "finish", "finishReason": "stop",
        "messageMetadata": {"finishedAt": 1_767_225_900_000_u64, "stats": {"steps": steps}}}));
    body.done()
}

/// The same 40-step answer in the platform runtime's dialect (RU-1, as ms-tau-sdk writes it):
/// no `start`, `data-runtime-lifecycle` frames, text in `textDelta`, each tool call as
/// `tool-call-start`, one `tool-call-delta` holding the whole arguments as compact JSON,
/// `tool-call-end`, then `tool-result`; `finish-step` with its reason; no message metadata.
fn agent_runtime(scale: f64) -> Body {
    let mut rng = Rng(7);
    let mut prose = Prose::new(1);
    let scaled = |n: usize| ((n as f64) * scale).round() as usize;
    let tools = ["read_file", "grep", "write_file", "run_command"];
    let mut body = Body::default();
    let steps = 40;
    for s in 0..steps {
        body.chunk(&json!({"type": "start-step"}));
        if s == 0 {
            body.chunk(&json!({"type": "data-runtime-lifecycle", "data": {"phase": "running"}}));
        }
        let rsn = format!("reasoning-{s}");
        body.chunk(&json!({"type": "reasoning-start", "id": rsn}));
        for _ in 0..scaled(rng.int(800, 1600)) {
            body.chunk(&json!({"type": "reasoning-delta", "id": rsn, "delta": prose.token()}));
        }
        body.chunk(&json!({"type": "reasoning-end", "id": rsn}));
        let txt = format!("text-{s}");
        body.chunk(&json!({"type": "text-start", "id": txt}));
        for _ in 0..scaled(rng.int(600, 1400)) {
            body.chunk(&json!({"type": "text-delta", "id": txt, "textDelta": prose.token()}));
        }
        body.chunk(&json!({"type": "text-end", "id": txt}));
        if s + 1 < steps {
            let tool = tools[s % tools.len()];
            let call = format!("call-{s}");
            let path = format!("src/module_{s}.rs");
            let input = json!({"path": path, "mode": tool, "limit": 120_000,
                "content": prose.take(scaled(rng.int(5_000, 9_000)))});
            body.chunk(&json!({"type": "tool-call-start", "toolCallId": call, "toolName": tool}));
            body.chunk(&json!({"type": "tool-call-delta", "toolCallId": call, "argsText": input.to_string()}));
            body.chunk(&json!({"type": "tool-call-end", "toolCallId": call}));
            body.chunk(&json!({"type": "tool-result", "toolCallId": call, "isError": false,
                "result": {"content": [{"type": "text", "text": prose.take(scaled(4_000))}], "details": {"path": path}}}));
            body.chunk(&json!({"type": "finish-step", "finishReason": "tool-calls"}));
        } else {
            body.chunk(&json!({"type": "finish-step", "finishReason": "stop"}));
        }
    }
    body.chunk(&json!({"type": "finish", "finishReason": "stop"}));
    body.done()
}

/// One tool call whose 100 KB input streams in 3 to 6 character pieces.
fn long_tool() -> Body {
    let mut rng = Rng(11);
    let mut prose = Prose::new(3);
    let mut body = Body::default();
    body.chunk(&json!({"type": "start", "messageId": "msg-bench"}));
    body.chunk(
        &json!({"type": "tool-input-start", "toolCallId": "call-0", "toolName": "write_file"}),
    );
    let input = json!({"path": "src/long.rs", "content": prose.take(100_000)});
    body.tool_input(&mut rng, "call-0", &input.to_string());
    body.chunk(&json!({"type": "tool-input-available", "toolCallId": "call-0", "toolName": "write_file", "input": input}));
    body.chunk(&json!({"type": "finish", "finishReason": "stop"}));
    body.done()
}

fn shape(name: &str) -> Body {
    match name {
        "tokens-10k" => tokens(10_000),
        "tokens-100k" => tokens(100_000),
        "tokens-1m" => tokens(1_000_000),
        "agent" => agent(1.0),
        "agent-10k" => agent(0.1),
        "agent-runtime" => agent_runtime(1.0),
        "big-deltas" => big_deltas(),
        "long-tool" => long_tool(),
        other => panic!("unknown shape {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The engine and the floor

/// Feeds `body` to an `AnswerStream` in 16 KiB slices, draining the deltas as a host would.
#[inline(never)]
fn run_engine(body: &[u8]) -> usize {
    let mut stream = AnswerStream::new("local".to_owned(), 1 << 24);
    let mut deltas = Vec::new();
    for slice in body.chunks(SLICE) {
        stream.feed(slice, &mut deltas);
        black_box(&deltas);
        deltas.clear();
    }
    stream.end(&mut deltas);
    black_box(&deltas);
    stream.message().parts.len()
}

/// The floor's chunks: a tagged enum borrowing its strings from the payload.
#[derive(Deserialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
enum FloorChunk<'a> {
    Start {
        message_id: Option<Cow<'a, str>>,
        message_metadata: Option<Value>,
    },
    TextStart {
        #[serde(borrow)]
        id: Cow<'a, str>,
    },
    TextDelta {
        #[serde(borrow)]
        id: Cow<'a, str>,
        /// The runtime's `textDelta` (RU-1) or the AI SDK's `delta`.
        #[serde(borrow, alias = "textDelta")]
        delta: Cow<'a, str>,
    },
    TextEnd {
        #[serde(borrow)]
        id: Cow<'a, str>,
    },
    ReasoningStart {
        #[serde(borrow)]
        id: Cow<'a, str>,
    },
    ReasoningDelta {
        #[serde(borrow)]
        id: Cow<'a, str>,
        #[serde(borrow)]
        delta: Cow<'a, str>,
    },
    ReasoningEnd {
        #[serde(borrow)]
        id: Cow<'a, str>,
    },
    ToolInputStart {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
    },
    ToolInputDelta {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
        #[serde(borrow)]
        input_text_delta: Cow<'a, str>,
    },
    ToolInputAvailable {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
        input: Value,
    },
    ToolOutputAvailable {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
        output: Value,
    },
    /// The runtime's tool frames (RU-1).
    ToolCallStart {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
    },
    ToolCallDelta {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
        #[serde(borrow)]
        args_text: Cow<'a, str>,
    },
    ToolCallEnd {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
    },
    ToolResult {
        #[serde(borrow)]
        tool_call_id: Cow<'a, str>,
        result: Value,
    },
    MessageMetadata {
        message_metadata: Value,
    },
    Finish {
        message_metadata: Option<Value>,
    },
    /// `start-step`, `finish-step`, `data-*` and the rest.
    #[serde(other)]
    Other,
}

/// The floor's message: parts of text (text, reasoning or raw tool input) and values.
#[derive(Default)]
struct FloorMessage {
    id: String,
    metadata: Option<Value>,
    parts: Vec<(String, Option<Value>)>,
    /// Open text, reasoning and tool parts by id.
    open: [HashMap<String, usize>; 3],
}

impl FloorMessage {
    fn open(&mut self, kind: usize, id: &str) -> usize {
        self.parts.push((String::new(), None));
        self.open[kind].insert(id.to_owned(), self.parts.len() - 1);
        self.parts.len() - 1
    }

    fn append(&mut self, kind: usize, id: &str, delta: &str) {
        if let Some(&i) = self.open[kind].get(id) {
            self.parts[i].0.push_str(delta);
        }
    }

    fn set(&mut self, id: &str, value: Value) {
        let i = match self.open[2].get(id) {
            Some(&i) => i,
            None => self.open(2, id),
        };
        self.parts[i] = (String::new(), Some(value));
    }

    fn apply(&mut self, data: &[u8]) {
        let Ok(chunk) = serde_json::from_slice::<FloorChunk>(data) else {
            return;
        };
        match chunk {
            FloorChunk::Start {
                message_id,
                message_metadata,
            } => {
                if let Some(id) = message_id {
                    self.id = id.into_owned();
                }
                if message_metadata.is_some() {
                    self.metadata = message_metadata;
                }
            }
            FloorChunk::TextStart { id } => _ = self.open(0, &id),
            FloorChunk::TextDelta { id, delta } => self.append(0, &id, &delta),
            FloorChunk::TextEnd { id } => _ = self.open[0].remove(&*id),
            FloorChunk::ReasoningStart { id } => _ = self.open(1, &id),
            FloorChunk::ReasoningDelta { id, delta } => self.append(1, &id, &delta),
            FloorChunk::ReasoningEnd { id } => _ = self.open[1].remove(&*id),
            FloorChunk::ToolInputStart { tool_call_id } => _ = self.open(2, &tool_call_id),
            FloorChunk::ToolInputDelta {
                tool_call_id,
                input_text_delta,
            } => self.append(2, &tool_call_id, &input_text_delta),
            FloorChunk::ToolInputAvailable {
                tool_call_id,
                input,
            } => self.set(&tool_call_id, input),
            FloorChunk::ToolOutputAvailable {
                tool_call_id,
                output,
            } => self.set(&tool_call_id, output),
            FloorChunk::ToolCallStart { tool_call_id } => _ = self.open(2, &tool_call_id),
            FloorChunk::ToolCallDelta {
                tool_call_id,
                args_text,
            } => self.append(2, &tool_call_id, &args_text),
            // The arguments, parsed once whole.
            FloorChunk::ToolCallEnd { tool_call_id } => {
                if let Some(&i) = self.open[2].get(&*tool_call_id) {
                    let args = serde_json::from_str::<Value>(&self.parts[i].0).ok();
                    self.parts[i].1 = args;
                }
            }
            FloorChunk::ToolResult {
                tool_call_id,
                result,
            } => self.set(&tool_call_id, result),
            FloorChunk::MessageMetadata { message_metadata } => {
                self.metadata = Some(message_metadata);
            }
            FloorChunk::Finish { message_metadata } => {
                if message_metadata.is_some() {
                    self.metadata = message_metadata;
                }
            }
            FloorChunk::Other => {
                // Data parts are rare: the derive cannot match a type prefix.
                if data.starts_with(br#"{"type":"data-"#)
                    && let Ok(value) = serde_json::from_slice::<Value>(data)
                {
                    self.parts.push((String::new(), Some(value)));
                }
            }
        }
    }
}

/// The floor: `data: <json>\n\n` events split with memchr's memmem (an unfinished event
/// carried to the next slice), each applied with the typed parse.
#[inline(never)]
fn run_floor(body: &[u8]) -> usize {
    let blank_line = memchr::memmem::Finder::new(b"\n\n");
    let mut buf: Vec<u8> = Vec::with_capacity(4 * SLICE);
    let mut message = FloorMessage::default();
    for slice in body.chunks(SLICE) {
        let mut from = buf.len().saturating_sub(1);
        buf.extend_from_slice(slice);
        let mut start = 0;
        while let Some(i) = blank_line.find(&buf[from..]) {
            let end = from + i;
            if let Some(data) = buf[start..end].strip_prefix(b"data: ")
                && data != b"[DONE]"
            {
                message.apply(data);
            }
            start = end + 2;
            from = start;
        }
        buf.drain(..start);
    }
    black_box(&message.id);
    black_box(&message.metadata);
    message.parts.len()
}

// ---------------------------------------------------------------------------------------------
// Ratios

/// The least of `runs` timings of `f` (after one warm-up).
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The body cut into tenths by event count: each tenth ends at an event end.
fn tenths(body: &Body) -> Vec<&[u8]> {
    let ends: Vec<usize> = memchr::memmem::find_iter(&body.bytes, b"\n\n")
        .map(|at| at + 2)
        .collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for tenth in 1..=10 {
        let end = ends[(ends.len() * tenth / 10).max(1) - 1];
        parts.push(&body.bytes[start..end]);
        start = end;
    }
    parts
}

/// Per-event time of each tenth of the body, fed to one stream (least of `runs` runs).
fn per_tenth(body: &Body, runs: usize) -> Vec<f64> {
    let parts = tenths(body);
    let mut best = vec![f64::INFINITY; parts.len()];
    for _ in 0..=runs {
        let mut stream = AnswerStream::new("local".to_owned(), 1 << 24);
        let mut deltas = Vec::new();
        for (tenth, part) in parts.iter().enumerate() {
            let start = Instant::now();
            for slice in part.chunks(SLICE) {
                stream.feed(slice, &mut deltas);
                black_box(&deltas);
                deltas.clear();
            }
            let per_event = start.elapsed().as_secs_f64() / (body.events as f64 / 10.0);
            best[tenth] = best[tenth].min(per_event);
        }
    }
    best
}

fn ratios() {
    println!("answer_stream ratios (least of 5 interleaved runs; engine = AnswerStream)");
    let mut times = HashMap::new();
    for name in [
        "tokens-100k",
        "tokens-1m",
        "agent",
        "agent-runtime",
        "big-deltas",
    ] {
        let body = shape(name);
        let (mut engine, mut floor) = (Duration::MAX, Duration::MAX);
        for _ in 0..5 {
            engine = engine.min(best(1, || _ = black_box(run_engine(&body.bytes))));
            floor = floor.min(best(1, || _ = black_box(run_floor(&body.bytes))));
        }
        println!(
            "  {name:<12} {:>8} events  engine {:>9.3} ms  floor {:>9.3} ms  engine/floor {:>5.2}x",
            body.events,
            engine.as_secs_f64() * 1e3,
            floor.as_secs_f64() * 1e3,
            engine.as_secs_f64() / floor.as_secs_f64(),
        );
        times.insert(name, engine);
    }
    println!(
        "  time(tokens-1m) / time(tokens-100k) = {:.2}",
        times["tokens-1m"].as_secs_f64() / times["tokens-100k"].as_secs_f64()
    );
    for name in ["agent", "long-tool"] {
        let tenths = per_tenth(&shape(name), 5);
        let shown: Vec<String> = tenths.iter().map(|t| format!("{:.0}", t * 1e9)).collect();
        println!(
            "  {name:<12} ns/event by tenth [{}]  last/first {:.2}",
            shown.join(", "),
            tenths[9] / tenths[0]
        );
    }
}

// ---------------------------------------------------------------------------------------------

fn answer_stream(c: &mut Criterion) {
    let mut group = c.benchmark_group("answer_stream");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for name in ["tokens-10k", "tokens-100k", "agent-10k", "big-deltas"] {
        let body = shape(name);
        group.throughput(Throughput::Bytes(body.bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("engine", name), &body.bytes, |b, body| {
            b.iter(|| run_engine(body))
        });
        group.bench_with_input(BenchmarkId::new("floor", name), &body.bytes, |b, body| {
            b.iter(|| run_floor(body))
        });
    }
    group.finish();
}

fn main() {
    if let Ok(only) = std::env::var("ANSWER_STREAM_ONLY") {
        let (which, name) = only
            .split_once(':')
            .expect("ANSWER_STREAM_ONLY=<engine|floor>:<shape>");
        let body = shape(name);
        let parts = match which {
            "engine" => run_engine(&body.bytes),
            "floor" => run_floor(&body.bytes),
            other => panic!("unknown implementation {other}"),
        };
        println!(
            "{which} {name}: {} events, {} bytes, {parts} parts",
            body.events,
            body.bytes.len()
        );
        return;
    }
    if std::env::var("ANSWER_STREAM_RATIOS").as_deref() != Ok("0") {
        ratios();
    }
    let mut criterion = Criterion::default().configure_from_args();
    answer_stream(&mut criterion);
    criterion.final_summary();
}
