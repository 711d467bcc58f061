#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The ui-message-stream vectors (`vectors/ui-stream/`, captured from the AI SDK 7.0.173): every
//! body, fed whole, one byte at a time, one event at a time and in random slicings, assembles to
//! `<name>.expected.json` (compared as JSON on the AI SDK fields `id`, `role`, `metadata`,
//! `parts`), and passes through the states of `<name>.snapshots.json`.
//!
//! How the snapshots were taken: the AI SDK's reader publishes the message ("write") after the
//! chunks that change what it shows, not after every chunk. `start` publishes only when it has a
//! `messageId` or `messageMetadata`; `message-metadata` and `finish` only with
//! `messageMetadata`; `start-step` (whose `step-start` part shows with the next publication),
//! `finish-step`, `error`, `abort`, unknown chunk types and `[DONE]` never publish; every other
//! chunk does. The test takes the state after each publishing chunk (ui-message-stream §5).

use crate::stream_support;

use std::path::{Path, PathBuf};

use engine_core::message::MessageStatus;
use engine_core::{AnswerStream, StreamOutcome};
use proptest::prelude::*;
use serde_json::Value;
use stream_support::{CAP, projection, run, run_cut};

/// One vector.
struct Vector {
    name: String,
    sse: Vec<u8>,
    expected: Value,
    snapshots: Vec<Value>,
}

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/ui-stream")
}

/// Every vector of the folder, by name.
fn vectors() -> Vec<Vector> {
    let dir = vector_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter_map(|file| file.strip_suffix(".sse").map(str::to_owned))
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "the vector set changed: {names:?}");
    names
        .into_iter()
        .map(|name| {
            let read = |suffix: &str| std::fs::read(dir.join(format!("{name}{suffix}"))).unwrap();
            Vector {
                sse: read(".sse"),
                expected: serde_json::from_slice(&read(".expected.json")).unwrap(),
                snapshots: serde_json::from_slice(&read(".snapshots.json")).unwrap(),
                name,
            }
        })
        .collect()
}

/// The payloads of the body's events, in order, split independently of the decoder (the
/// vectors are plain: LF only, one `data:` line per event).
fn payloads(sse: &[u8]) -> Vec<String> {
    std::str::from_utf8(sse)
        .unwrap()
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| event.strip_prefix("data: ").unwrap().to_owned())
        .collect()
}

/// Whether the AI SDK's reader publishes the message after this payload (see the module doc).
fn publishes(payload: &str) -> bool {
    let Ok(Value::Object(chunk)) = serde_json::from_str::<Value>(payload) else {
        return false;
    };
    let has = |key: &str| chunk.get(key).is_some_and(|value| !value.is_null());
    match chunk
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "start" => has("messageId") || has("messageMetadata"),
        "message-metadata" | "finish" => has("messageMetadata"),
        "start-step" | "finish-step" | "error" | "abort" => false,
        "text-start"
        | "text-delta"
        | "text-end"
        | "reasoning-start"
        | "reasoning-delta"
        | "reasoning-end"
        | "tool-input-start"
        | "tool-input-delta"
        | "tool-input-available"
        | "tool-input-error"
        | "tool-output-available"
        | "tool-output-error"
        | "tool-approval-request"
        | "tool-output-denied"
        | "source-url"
        | "source-document"
        | "file" => true,
        other => other.starts_with("data-"),
    }
}

/// Feeds `body` in the given slice lengths (cycled), recording the state after each
/// publishing chunk. Needs slices that complete at most one event each.
fn published_states(sse: &[u8], slice_lengths: impl Fn(usize) -> usize) -> Vec<Value> {
    let payloads = payloads(sse);
    let mut stream = AnswerStream::new(String::new(), CAP);
    let mut deltas = Vec::new();
    let mut states = Vec::new();
    let mut seen = 0;
    let mut at = 0;
    let mut slice = 0;
    while at < sse.len() {
        let end = (at + slice_lengths(slice)).min(sse.len());
        stream.feed(&sse[at..end], &mut deltas);
        let events = usize::try_from(stream.stats().events).unwrap();
        assert!(events <= seen + 1, "a slice completed two events");
        if events > seen {
            if publishes(&payloads[seen]) {
                states.push(projection(stream.message()));
            }
            seen = events;
        }
        at = end;
        slice += 1;
    }
    assert_eq!(seen, payloads.len());
    states
}

/// The slice lengths that cut a body exactly at its event boundaries.
fn event_lengths(sse: &[u8]) -> Vec<usize> {
    std::str::from_utf8(sse)
        .unwrap()
        .split_inclusive("\n\n")
        .map(str::len)
        .collect()
}

/// ui-message-stream §3, §5: fed whole, every vector assembles to its expected message.
#[test]
fn vectors_fed_whole() {
    for vector in vectors() {
        let done = run(&vector.sse);
        assert_eq!(
            projection(done.stream.message()),
            vector.expected,
            "{}",
            vector.name
        );
        let stats = done.stream.stats();
        assert_eq!(stats.dropped_payloads, 0, "{}", vector.name);
        assert_eq!(stats.invalid_chunks, 0, "{}", vector.name);
        assert_eq!(stats.protocol_errors, 0, "{}", vector.name);
        assert!(!stats.discarded_at_end, "{}", vector.name);
        let unknown = u64::from(vector.name == "unknown-chunk");
        assert_eq!(stats.unknown_chunks, unknown, "{}", vector.name);
    }
}

/// ui-message-stream §3: one byte at a time (every multi-byte character split), the same.
#[test]
fn vectors_fed_byte_by_byte() {
    for vector in vectors() {
        let cuts: Vec<usize> = (0..vector.sse.len()).collect();
        let done = run_cut(&vector.sse, &cuts, CAP);
        assert_eq!(
            projection(done.stream.message()),
            vector.expected,
            "{}",
            vector.name
        );
    }
}

/// ui-message-stream §5: the states after each publishing chunk are the vector's snapshots,
/// fed one event at a time and one byte at a time.
#[test]
fn vectors_pass_through_their_snapshots() {
    for vector in vectors() {
        let lengths = event_lengths(&vector.sse);
        let by_event = published_states(&vector.sse, |slice| lengths[slice]);
        assert_eq!(by_event, vector.snapshots, "{} (by event)", vector.name);
        let by_byte = published_states(&vector.sse, |_| 1);
        assert_eq!(by_byte, vector.snapshots, "{} (by byte)", vector.name);
    }
}

/// ui-message-stream §6: how each vector ends, and the message's final status.
#[test]
fn vector_outcomes() {
    let finished = |reason: &str| StreamOutcome::Finished {
        finish_reason: Some(reason.to_owned()),
    };
    for vector in vectors() {
        let done = run(&vector.sse);
        let (outcome, status) = match vector.name.as_str() {
            "abort" => (
                StreamOutcome::Aborted {
                    reason: Some("stopped by the user".to_owned()),
                },
                MessageStatus::Complete,
            ),
            "error-at-start" | "error-mid-stream" => (
                StreamOutcome::Failed {
                    error_text: "An error occurred.".to_owned(),
                },
                MessageStatus::Failed {
                    error: "An error occurred.".to_owned(),
                },
            ),
            "tool-call" | "tool-error" => (finished("tool-calls"), MessageStatus::Complete),
            _ => (finished("stop"), MessageStatus::Complete),
        };
        assert_eq!(done.stream.outcome(), &outcome, "{}", vector.name);
        assert_eq!(done.stream.message().status, status, "{}", vector.name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        // Deterministic (issue 26: the golden transcripts): the same cases every run, after
        // the cases kept in this file's `.proptest-regressions`.
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xec70a5f),
        ..ProptestConfig::default()
    })]

    /// ui-message-stream §3: any slicing gives the expected message, and the deltas replayed in
    /// order reproduce the message after every slice.
    #[test]
    fn vectors_in_random_slicings(cuts in proptest::collection::vec(0usize..4096, 0..64)) {
        for vector in vectors() {
            let len = vector.sse.len();
            let cuts: Vec<usize> = cuts.iter().map(|cut| cut % (len + 1)).collect();
            let done = run_cut(&vector.sse, &cuts, CAP);
            prop_assert_eq!(
                projection(done.stream.message()),
                vector.expected.clone(),
                "{}",
                vector.name
            );
        }
    }
}
