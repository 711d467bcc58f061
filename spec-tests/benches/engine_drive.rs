//! Per-event cost through the whole `Engine` while an answer streams, with the host taking its
//! view after every drain, for an empty thread and a 400-message thread (issue 12, point 1).
//!
//! `cargo bench -p spec-tests --bench engine_drive` prints, per view mode, the nanoseconds per
//! event with each thread and their ratio (target: 400 messages ÷ empty ≤ 1.2).
//! `ENGINE_DRIVE_ONLY=<mode>:<messages>` runs one case (for callgrind).

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::{Engine, RequestId, Time};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, record};

const UID: &str = "s-bench";
/// Text deltas per run (one SSE event per body chunk, as a paced stream delivers them).
const DELTAS: usize = 20_000;

/// A history of `n` messages, alternating user and assistant, 200 characters each.
fn history(n: usize) -> Value {
    let messages: Vec<Value> = (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let text = format!("{i:>6} {}", "lorem ipsum dolor sit amet ".repeat(7));
            json!({"id": format!("m-{i}"), "role": role, "content": [{"type": "text", "text": text}]})
        })
        .collect();
    json!({
        "version": 1,
        "session": {"sessionId": UID, "threadId": UID, "agentName": "Ledger Helper", "status": "completed"},
        "messages": messages,
        "inProgressMessage": null
    })
}

/// An engine whose session (with `n` history messages) is streaming an answer: its head is in.
fn streaming(n: usize) -> (Engine, RequestId, Time) {
    let mut h = Harness::visible_in_env();
    h.requested(Some(UID));
    h.answer_detail(UID, record(UID, AGENT, ENV, 0));
    let id = h.history_request(UID);
    h.reply(id, 200, history(n));
    let id = h.insights_request(UID);
    h.reply(id, 200, spec_tests::fixtures::insights(UID));
    h.runtime_ready(UID, 200);
    assert!(h.snapshot().composer_admission, "the composer admits");
    h.send("go");
    let id = h.runtime_request(UID);
    h.reply(id, 200, spec_tests::fixtures::runtime_ready(UID));
    if let Some(c) = h.pending(|c| matches!(c, engine_core::ApiCall::ConfirmAgent { .. })) {
        h.reply_raw(c, 200, None, b"", None);
    }
    let id = h.message_request(UID);
    h.stream_head(id);
    let (engine, now) = h.into_engine();
    (engine, id, now)
}

/// How the host looks at the engine after each drain.
#[derive(Clone, Copy, Debug)]
enum ViewMode {
    /// `Engine::snapshot()`: the whole state, thread included.
    Snapshot,
    /// Following the changes: `Engine::revisions()`, then only the parts whose counter moved
    /// (the snapshot for `state`, `run_status()` for `run`, the thread's shared messages for
    /// `thread`), the streaming answer mirrored from its `Answer` deltas.
    Changes,
}

impl ViewMode {
    fn name(self) -> &'static str {
        match self {
            ViewMode::Snapshot => "snapshot",
            ViewMode::Changes => "changes",
        }
    }
}

fn events() -> Vec<Bytes> {
    let mut out = vec![Bytes::from_static(
        b"data: {\"type\":\"start\",\"messageId\":\"a-1\"}\n\ndata: {\"type\":\"text-start\",\"id\":\"t\"}\n\n",
    )];
    for i in 0..DELTAS {
        let word = ["alpha ", "be ", "gamma ", "delta "]
            .get(i % 4)
            .unwrap_or(&"x ");
        out.push(Bytes::from(format!(
            "data: {{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"{word}\"}}\n\n"
        )));
    }
    out
}

/// Feeds every event, draining and viewing after each; the time per event.
fn run(mode: ViewMode, n: usize, body: &[Bytes]) -> Duration {
    let (mut engine, id, now) = streaming(n);
    let mut seen = engine.revisions();
    let mut mirror = engine_core::stream::MessageMirror::new("");
    let start = Instant::now();
    for chunk in body {
        engine.handle_body_chunk(id, chunk.clone(), now);
        while let Some(intent) = engine.poll_intent() {
            black_box(intent);
        }
        while let Some(event) = engine.poll_event() {
            if let (ViewMode::Changes, engine_core::Event::Answer { delta, .. }) = (mode, &event) {
                mirror.apply(delta);
            }
            black_box(event);
        }
        match mode {
            ViewMode::Snapshot => {
                black_box(engine.snapshot());
            }
            ViewMode::Changes => {
                let now = engine.revisions();
                if now.state != seen.state {
                    black_box(engine.snapshot());
                }
                if now.run != seen.run {
                    black_box(engine.run_status());
                }
                if now.thread != seen.thread {
                    black_box(engine.thread().to_vec());
                }
                seen = now;
            }
        }
    }
    let elapsed = start.elapsed();
    black_box((&engine, &mirror));
    elapsed / u32::try_from(body.len()).unwrap_or(u32::MAX)
}

fn main() {
    let body = events();
    let only = std::env::var("ENGINE_DRIVE_ONLY").ok();
    let modes = [ViewMode::Snapshot, ViewMode::Changes];
    for mode in modes {
        let mut per = Vec::new();
        for n in [0usize, 400] {
            if only
                .as_deref()
                .is_some_and(|o| o != format!("{}:{n}", mode.name()))
            {
                continue;
            }
            // The least of 3 runs.
            let best = (0..3)
                .map(|_| run(mode, n, &body))
                .min()
                .unwrap_or_default();
            println!(
                "{:<10} {n:>4} messages: {:>8} ns/event",
                mode.name(),
                best.as_nanos()
            );
            per.push(best.as_nanos());
        }
        if let [empty, full] = per[..] {
            println!(
                "{:<10} 400 ÷ empty: {:.2} (target ≤ 1.2)",
                mode.name(),
                full as f64 / empty.max(1) as f64
            );
        }
    }
}
