#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Replay without the changed fields (`ReplayOptions::check`, issue 12): the same verdict,
//! entries (less their changes), expectations and final snapshot as the full timeline, on the
//! checked-in traces and on a long recorded answer (INV-12).

use std::path::Path;

use engine_core::RequestId;
use engine_core::message::{MessageStatus, Part};
use engine_core::trace::{
    EntryKind, Record, ReplayOptions, ReplayReport, Step, replay, replay_with_options,
};
use spec_tests::long_answer;

fn both(trace: &str) -> (ReplayReport, ReplayReport) {
    let full = replay(trace).unwrap_or_else(|e| panic!("{e}"));
    let check = replay_with_options(trace, ReplayOptions::check(), |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert_bare_alike(trace, &full);
    (full, check)
}

/// `bare()`: the same verdict, expectations and final snapshot, no entries,
/// `on_entry` never called.
fn assert_bare_alike(trace: &str, full: &ReplayReport) {
    let mut called = 0;
    let bare = replay_with_options(trace, ReplayOptions::bare(), |_| {
        called += 1;
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(called, 0);
    assert!(bare.entries.is_empty());
    assert_eq!(bare.expectations, full.expectations);
    assert_eq!(bare.snapshot, full.snapshot);
    assert_eq!(bare.header, full.header);
}

/// The check report is the timeline's with every entry's changes left out.
fn assert_same_but_changes(full: &ReplayReport, check: &ReplayReport, name: &str) {
    assert_eq!(check.expectations, full.expectations, "{name}");
    assert_eq!(check.snapshot, full.snapshot, "{name}");
    assert_eq!(check.header, full.header, "{name}");
    assert_eq!(check.entries.len(), full.entries.len(), "{name}");
    for (c, f) in check.entries.iter().zip(&full.entries) {
        assert!(c.changes.is_empty(), "{name}: line {} has changes", c.line);
        let mut f = f.clone();
        f.changes.clear();
        assert_eq!(*c, f, "{name}: line {}", c.line);
    }
}

/// INV-12: every checked-in trace replays in check mode with the same expectations met, the
/// same entries and the same final snapshot; the timeline lists changes (the default).
#[test]
fn inv_12_check_mode_replays_the_traces_like_the_timeline() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let trace = std::fs::read_to_string(&path).unwrap();
        let (full, check) = both(&trace);
        let name = path.display().to_string();
        assert!(full.expectations > 0, "{name}");
        assert!(
            full.entries.iter().any(|e| !e.changes.is_empty()),
            "{name}: the default replay lists the changed fields"
        );
        assert_same_but_changes(&full, &check, &name);
        n += 1;
    }
    assert!(n >= 5, "{n} traces");
}

/// INV-12: a failing snapshot expectation fails alike in all modes (bare included) (check mode computes the
/// snapshot where an expectation reads it), and so does a failing intent expectation.
#[test]
fn inv_12_a_failed_expectation_fails_alike_in_check_mode() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/requested-session-unavailable.jsonl");
    let trace = std::fs::read_to_string(path).unwrap();
    let broken = [
        trace.replacen(
            r#""currentSessionId": "s-1""#,
            r#""currentSessionId": "s-9""#,
            1,
        ),
        trace.replacen(r#""method": "GET""#, r#""method": "PUT""#, 1),
    ];
    for broken in broken {
        assert_ne!(broken, trace, "the trace has the expectation to break");
        let full = replay(&broken).unwrap_err();
        let check = replay_with_options(&broken, ReplayOptions::check(), |_| {}).unwrap_err();
        assert_eq!(check, full);
        let bare = ReplayOptions::bare();
        assert_eq!(
            replay_with_options(&broken, bare, |_| {}).unwrap_err(),
            full
        );
    }
}

/// INV-12 on a long answer recorded with `Engine::new_recording`: check mode and the timeline
/// agree, every delta's entry in the timeline names the thread as changed, and the replayed
/// message is the recorded one, whole and complete.
#[test]
fn inv_12_a_long_recorded_answer_replays_alike_in_both_modes() {
    let deltas = 2_000;
    let engine = long_answer::recorded(deltas);
    let trace = engine.trace().unwrap().to_owned();
    let (full, check) = both(&trace);
    assert_same_but_changes(&full, &check, "long answer");
    assert_eq!(check.snapshot, engine.snapshot());
    let last = check.snapshot.thread.last().unwrap();
    assert_eq!(last.id, long_answer::MESSAGE_ID);
    assert_eq!(last.status, MessageStatus::Complete);
    let text: String = (0..deltas).map(long_answer::delta).collect();
    match &last.parts[..] {
        [Part::StepStart, Part::Text(t)] => assert_eq!(t.text, text),
        other => panic!("parts {other:?}"),
    }
    let delta_entries: Vec<_> = full
        .entries
        .iter()
        .filter(|e| e.kind == EntryKind::Step && e.what.contains("text-delta"))
        .collect();
    assert_eq!(delta_entries.len(), deltas);
    for e in delta_entries {
        assert!(
            e.changes.iter().any(|(name, _)| name == "thread"),
            "line {}: {:?}",
            e.line,
            e.changes
        );
    }
}

/// A recorder's chunk line reads to the same record whether or not it carries other fields
/// (a `note` sends it down the general reading), escapes included.
#[test]
fn a_chunk_line_reads_alike_on_both_paths() {
    let plain = r#"{"at": 1.5, "chunk": {"id": 2, "text": "data: {\"a\":\"\u00e9\\n\"}\n\n"}}"#;
    let noted = r#"{"at": 1.5, "note": "n", "chunk": {"text": "data: {\"a\":\"\u00e9\\n\"}\n\n", "id": 2}}"#;
    let a: Record = plain.parse().unwrap();
    let b: Record = noted.parse().unwrap();
    assert_eq!(a, b);
    match a {
        Record::Step {
            at,
            step: Step::Chunk { id, bytes },
        } => {
            assert_eq!(at.as_micros(), 1_500);
            assert_eq!(id, RequestId(2));
            assert_eq!(bytes, "data: {\"a\":\"é\\n\"}\n\n".as_bytes());
        }
        other => panic!("{other:?}"),
    }
    // A chunk line with both text and base64 is refused, as before.
    let both = r#"{"at": 1, "chunk": {"id": 2, "text": "x", "base64": "eA=="}}"#;
    assert!(both.parse::<Record>().unwrap_err().contains("exactly one"));
}
